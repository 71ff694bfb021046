"""The one frontmatter reader: found where Claude Code finds it, never read as prompt text
when displaced, YAML without anchors or aliases, string keys only, short error excerpts."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from launcher.config.agents import parse_agent_text
from launcher.config.dialect import MAX_FIELDS, Dialect
from launcher.config.dialect_claude import CLAUDE
from launcher.config.dialect_opencode import OPENCODE
from launcher.config.dialect_pi import PI, SUBAGENT
from launcher.config.discovery import load_config
from launcher.errors import ConfigError
from launcher.toolset.scope import ToolScope

DIALECTS = [CLAUDE, PI, SUBAGENT]
FIELDS = {"claude": "tools: Read\ndisallowedTools: Bash", "pi": "tools: read\nextensions: false"}
FIELDS["subagent"] = FIELDS["pi"]


def parse(text: str, dialect: Dialect) -> list[str]:
    spec = parse_agent_text(text, Path("/p/agents/a.md"), [], dialect)
    return list(ToolScope(spec).builtin_names())


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
@pytest.mark.parametrize(
    "opening",
    ["---\n", "\ufeff---\n", "---\r\n", "\ufeff---\r\n", "---  \n"],
    ids=["plain", "bom", "crlf", "bom-crlf", "trailing-space"],
)
def test_frontmatter_is_found_where_claude_code_finds_it(opening: str, dialect: Dialect) -> None:
    newline = "\r\n" if "\r" in opening else "\n"
    body = FIELDS[dialect.name].replace("\n", newline)
    text = f"{opening}{body}{newline}---{newline}prompt{newline}"
    assert parse(text, dialect) == ["read"]


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
@pytest.mark.parametrize(
    ("prefix", "line", "said"),
    [
        ("\n", 2, "1 blank line"),
        ("\n\r\n  \n", 4, "3 blank lines"),
        (" ", 1, "leading whitespace"),
        ("\t", 1, "leading whitespace"),
        ("\ufeff\ufeff", 1, "a second byte-order mark"),
        ("\u200b", 1, "an invisible character"),
    ],
)
def test_anything_before_the_fence_refuses_the_file(
    prefix: str, line: int, said: str, dialect: Dialect
) -> None:
    text = f"{prefix}---\n{FIELDS[dialect.name]}\n---\nprompt\n"
    with pytest.raises(ConfigError) as caught:
        parse(text, dialect)
    assert caught.value.line == line
    assert said in caught.value.message
    assert "/p/agents/a.md" in str(caught.value)


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_a_fields_block_below_a_heading_is_refused_not_prompt(dialect: Dialect) -> None:
    text = f"# Reviewer\n\n---\n{FIELDS[dialect.name]}\n---\nprompt\n"
    with pytest.raises(ConfigError) as caught:
        parse(text, dialect)
    assert caught.value.line == 3


@pytest.mark.parametrize("opening", ["----", "--- x", "+++"])
def test_a_fence_that_is_not_exactly_three_dashes_is_refused(opening: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(f"{opening}\ntools: read\n{opening}\nprompt\n", SUBAGENT)
    assert caught.value.line == 1


def test_a_file_without_frontmatter_is_still_a_prompt() -> None:
    text = "Review the code.\n\n---\n\nThen summarize.\n"
    spec = parse_agent_text(text, Path("/p/agents/plain.md"), [], SUBAGENT)
    assert spec.prompt == text.strip()
    assert spec.name == "plain"


@pytest.mark.parametrize(
    "yaml_text",
    ["tools: &t read\ndisallowed_tools: *t", "base: &b {x: 1}\nmore:\n  <<: *b"],
    ids=["anchor", "merge"],
)
def test_anchors_and_aliases_are_refused_naming_the_line(yaml_text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(f"---\n{yaml_text}\n---\n", SUBAGENT)
    assert caught.value.line == 2
    assert "anchors" in caught.value.message


def test_a_merge_key_is_refused() -> None:
    with pytest.raises(ConfigError, match="merge keys"):
        parse("---\ndescription: x\n<<: {tools: read}\n---\n", SUBAGENT)


def test_an_alias_bomb_never_expands() -> None:
    levels = [f'l0: &l0 ["{"x" * 20}"]']
    levels += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 12)]
    text = "---\n" + "\n".join(levels) + "\ndescription: *l11\n---\n"
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError) as caught:
            parse(text, SUBAGENT)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000
    assert len(str(caught.value)) < 300
    assert caught.value.line == 2


@pytest.mark.parametrize("key", ["on", "yes", "1", "2024-01-01", "null", "~", "[a]"])
def test_a_key_that_is_not_a_string_is_a_config_error_naming_the_line(key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(f"---\ndescription: x\n{key}: value\n---\n", SUBAGENT)
    assert caught.value.line == 3


def test_a_huge_value_is_quoted_as_a_short_excerpt() -> None:
    with pytest.raises(ConfigError) as caught:
        parse("---\nmax_turns: " + "x" * 100_000 + "\n---\n", SUBAGENT)
    assert len(str(caught.value)) < 300


def test_a_broken_file_is_skipped_with_a_warning_naming_file_and_line(tmp_path: Path) -> None:
    agents = tmp_path / "cfg" / "agents"
    agents.mkdir(parents=True)
    (agents / "poison.md").write_text("---\non: push\n---\n")
    (agents / "displaced.md").write_text("\n---\ntools: read\n---\n")
    (agents / "ok.md").write_text("---\ntools: read\n---\nhi\n")
    config = load_config(tmp_path / "cfg", cwd=tmp_path, home=tmp_path, env={})
    assert "ok" in config.agents
    assert {"poison", "displaced"} <= set(config.broken_agents)
    skipped = [w for w in config.warnings if "skipped" in w]
    assert any(f"{agents / 'poison.md'}:2" in w for w in skipped)
    assert any(f"{agents / 'displaced.md'}:2" in w for w in skipped)


@pytest.mark.parametrize("separator", ["\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
def test_only_a_newline_ends_a_line_so_no_fence_closes_early(separator: str) -> None:
    # str.splitlines ends a line at these; Claude Code and YAML do not.
    text = f"---\ndescription: x{separator}---{separator}\ntools: Read\n---\nprompt\n"
    try:
        spec = parse_agent_text(text, Path("/p/agents/a.md"), [], CLAUDE)
    except ConfigError:
        return
    assert ToolScope(spec).builtin_names() == ("read",)


def test_a_control_character_is_named_with_its_line() -> None:
    with pytest.raises(ConfigError) as caught:
        parse("---\nname: a\ndescription: \x07\n---\n", SUBAGENT)
    assert caught.value.line == 3
    assert "'\\x07'" in caught.value.message


@pytest.mark.parametrize("key", ["t\u043e\u043els", "to\u200bols", "disallowed\u0422ools"])
def test_a_look_alike_field_name_is_refused(key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(f"---\ndescription: x\n{key}: Read\n---\n", CLAUDE)
    assert caught.value.line == 3


@pytest.mark.parametrize(
    ("dialect", "yaml_text", "line"),
    [
        (OPENCODE, "permission:\n  bash: deny\n  edit: deny\n  bash: allow", 5),
        (OPENCODE, 'tools:\n  "*": false\n  read: true\n  "*": true', 5),
        (SUBAGENT, "sandbox:\n  mode: required\n  network: false\n  network: true", 5),
        (CLAUDE, "hooks:\n  PreToolUse: [{matcher: Bash}]\n  PreToolUse: []", 4),
        (SUBAGENT, "sandbox: {mode: required, network: false, network: true}", 2),
        (CLAUDE, "mcpServers:\n  - gh:\n      command: x\n      command: y", 5),
    ],
    ids=["permission", "tools-map", "sandbox", "hooks", "flow", "in-list"],
)
def test_a_duplicate_key_at_any_depth_refuses_the_file(
    dialect: Dialect, yaml_text: str, line: int
) -> None:
    # The last value must never win silently: js-yaml and tomllib refuse these too.
    with pytest.raises(ConfigError) as caught:
        parse(f"---\n{yaml_text}\n---\nprompt\n", dialect)
    assert "duplicate" in caught.value.message
    assert caught.value.line == line


@pytest.mark.parametrize(
    ("dialect", "yaml_text", "line"),
    [
        (CLAUDE, "tools: !!null Read", 2),
        (CLAUDE, "description: x\ndisallowedTools: !!null Bash", 3),
        (CLAUDE, "permissionMode: !!null plan", 2),
        (SUBAGENT, "sandbox: !!null required", 2),
        (SUBAGENT, "tools: !!str read", 2),
        (SUBAGENT, "tools: ! read", 2),
        (SUBAGENT, "tools: !custom read", 2),
        (SUBAGENT, "sandbox:\n  network: !!bool false", 3),
        (SUBAGENT, "tools: !!seq [read]", 2),
    ],
)
def test_a_yaml_tag_anywhere_refuses_the_file(dialect: Dialect, yaml_text: str, line: int) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(f"---\n{yaml_text}\n---\nprompt\n", dialect)
    assert "tags" in caught.value.message
    assert caught.value.line == line


@pytest.mark.parametrize("dialect", [CLAUDE, SUBAGENT, OPENCODE], ids=lambda d: d.name)
@pytest.mark.parametrize("value", ["", " ~", " null"])
def test_a_restriction_field_with_no_value_is_refused_not_omitted(
    dialect: Dialect, value: str
) -> None:
    key = {"claude": "disallowedTools", "subagent": "tools", "opencode": "permission"}
    with pytest.raises(ConfigError) as caught:
        parse(f"---\ndescription: x\n{key[dialect.name]}:{value}\n---\nprompt\n", dialect)
    assert "no value" in caught.value.message
    assert caught.value.line == 3


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
@pytest.mark.parametrize(
    "prefix", ["\v", "\f", "\x85", "\u2028", "\u3000", "\u200e", "\u200f", "\u00ad", "\v\n"]
)
def test_a_fence_behind_any_invisible_character_is_refused(prefix: str, dialect: Dialect) -> None:
    text = f"{prefix}---\n{FIELDS[dialect.name]}\n---\nprompt\n"
    with pytest.raises(ConfigError) as caught:
        parse(text, dialect)
    assert "refused rather than read as prompt" in caught.value.message


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
@pytest.mark.parametrize("fence", ["\u2014" * 3, "\u2212" * 3, "\uff0d" * 3, "\u2013" * 3])
def test_a_look_alike_dash_fence_is_refused(fence: str, dialect: Dialect) -> None:
    text = f"{fence}\n{FIELDS[dialect.name]}\n{fence}\nprompt\n"
    with pytest.raises(ConfigError) as caught:
        parse(text, dialect)
    assert caught.value.line == 1


def test_a_file_of_too_many_fields_is_refused_naming_the_first_extra() -> None:
    fields = "".join(f"field{i}: v\n" for i in range(MAX_FIELDS + 5))
    with pytest.raises(ConfigError) as caught:
        parse(f"---\n{fields}---\nprompt\n", CLAUDE)
    assert caught.value.line == MAX_FIELDS + 2
    assert "fields" in caught.value.message
