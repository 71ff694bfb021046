"""The selector grammar of `tools:` / `disallowed_tools:`."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.config.agents import parse_agent_text
from launcher.config.selectors import parse_selectors
from launcher.config.types import Selector
from launcher.errors import ConfigError
from launcher.toolset.scope import ToolScope

AGENT = Path("/cfg/agents/a.md")


def parse(value: object) -> tuple[Selector, ...]:
    return parse_selectors(value, path=AGENT, field="tools", line=3)


def test_csv_string_and_list_give_the_same_selectors() -> None:
    assert parse("read, grep,bash") == parse(["read", "grep", "bash"])
    assert [s.name for s in parse("read, grep,bash")] == ["read", "grep", "bash"]


def test_builtin_names_include_memory_tools_and_ignore_case() -> None:
    assert parse("Read, memory_write") == (
        Selector(kind="builtin", name="read", raw="Read"),
        Selector(kind="builtin", name="memory_write", raw="memory_write"),
    )


@pytest.mark.parametrize("text", ["*", "all", "ALL"])
def test_star_and_all_select_everything(text: str) -> None:
    assert parse([text]) == (Selector(kind="all", raw=text),)


def test_none_selects_nothing() -> None:
    assert parse("none") == (Selector(kind="none", raw="none"),)


def test_ext_server_selects_a_whole_server() -> None:
    assert parse("ext:github") == (Selector(kind="ext", server="github", raw="ext:github"),)


def test_ext_server_tool_keeps_a_glob() -> None:
    (sel,) = parse(["ext:slow/late_*"])
    assert (sel.kind, sel.server, sel.tool, sel.raw) == ("ext", "slow", "late_*", "ext:slow/late_*")


def test_double_underscore_name_is_an_exposed_name() -> None:
    assert parse("github__list_*") == (
        Selector(kind="name", name="github__list_*", raw="github__list_*"),
    )


def test_empty_csv_entries_are_skipped_and_empty_list_is_empty() -> None:
    assert len(parse("read,, grep ,")) == 2
    assert parse([]) == ()


@pytest.mark.parametrize("bad", ["ext:", "ext:/x", "ext:srv/"])
def test_malformed_ext_selector_is_an_error(bad: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse(bad)
    message = str(info.value)
    assert str(AGENT) in message and ":3" in message and "'tools'" in message
    assert bad in message


def test_unknown_builtin_names_file_field_and_valid_names() -> None:
    with pytest.raises(ConfigError) as info:
        parse_selectors("read, websearch", path=AGENT, field="disallowed_tools", line=5)
    message = str(info.value)
    assert f"{AGENT}:5" in message
    assert "'disallowed_tools'" in message
    assert "websearch" in message and "read, write, edit" in message
    assert info.value.field == "disallowed_tools"


@pytest.mark.parametrize("bad", [42, {"a": 1}, ["read", 3]])
def test_value_that_is_not_csv_or_list_of_strings_is_an_error(bad: object) -> None:
    with pytest.raises(ConfigError, match="expected"):
        parse(bad)


@pytest.mark.parametrize("glob", ["b*", "ba?h", "[b]ash", "B*", "*sh"])
def test_a_deny_glob_denies_the_builtins_it_matches(glob: str) -> None:
    spec = parse_agent_text(f"---\ndisallowed_tools: ['{glob}']\n---\n", Path("a.md"))
    builtins = ToolScope(spec).builtin_names()
    assert "bash" not in builtins and "read" in builtins
