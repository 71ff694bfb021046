"""Property: for generated agent files and every whitespace, BOM, CRLF, case and spelling
variant of their restriction fields, the tools offered are never wider than the strict
reading of the canonical file, or the file is refused."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from launcher.config.agents import parse_agent_text
from launcher.config.dialect import Dialect
from launcher.config.dialect_claude import CLAUDE
from launcher.config.dialect_pi import SUBAGENT
from launcher.errors import ConfigError
from tests.test_config_deny_entries import SERVERS, offered

OURS = ("read", "write", "edit", "bash", "grep", "find", "ls")
THEIRS = ("Read", "Write", "Edit", "Bash", "Grep", "Glob", "LS")
SERVER_TOOLS = [(server, tool) for server, tools in SERVERS.items() for tool in tools]
KEYS = {"claude": ("tools", "disallowedTools"), "subagent": ("tools", "disallowed_tools")}
OTHER_SPELLINGS = {
    "tools": ("Tools", "TOOLS", "tool", "allowed-tools", "allowedTools", "toolz"),
    "disallowedTools": (
        "disallowed_tools",
        "DisallowedTools",
        "disallowedtools",
        "disalowedTools",
        "disallowed-tools",
        "deniedTools",
    ),
    "disallowed_tools": (
        "disallowedTools",
        "Disallowed_Tools",
        "disalowed_tools",
        "disallowed-tools",
        "excludeTools",
    ),
}


def server_spellings(server: str, tool: str, dialect: str) -> list[str]:
    """Every documented spelling of one server tool in a deny list."""
    exposed = server.replace(".", "_")
    spellings = [f"mcp__{exposed}__{tool}", f"ext:{server}/{tool}", f"{exposed}__{tool}"]
    spellings += [f"mcp__{exposed}__{tool}(arg)", f"MCP__{exposed.upper()}__{tool.upper()}"]
    return spellings if dialect == "claude" else spellings[1:] + spellings[:1]


def builtin_spellings(index: int, dialect: str) -> list[str]:
    names = [THEIRS[index], OURS[index], THEIRS[index].upper(), f"{THEIRS[index]}(x:*)"]
    return names if dialect == "claude" else [OURS[index], *names[:3]]


@st.composite
def agent_files(draw: st.DrawFn) -> tuple[Dialect, str, str]:
    """(dialect, canonical text, a variant of it)."""
    dialect = draw(st.sampled_from([CLAUDE, SUBAGENT]))
    allow_key, deny_key = KEYS[dialect.name]
    names = THEIRS if dialect is CLAUDE else OURS
    allowed_builtins = draw(st.lists(st.integers(0, 6), unique=True, max_size=4))
    allowed_tools = draw(st.lists(st.sampled_from(SERVER_TOOLS), unique=True, max_size=3))
    denied_builtins = draw(st.lists(st.integers(0, 6), unique=True, max_size=3))
    denied_tools = draw(st.lists(st.sampled_from(SERVER_TOOLS), unique=True, max_size=3))
    allow = [names[i] for i in allowed_builtins]
    allow += [f"mcp__{s}__{t}" if dialect is CLAUDE else f"ext:{s}/{t}" for s, t in allowed_tools]
    deny = [builtin_spellings(i, dialect.name)[0] for i in denied_builtins]
    deny += [server_spellings(s, t, dialect.name)[0] for s, t in denied_tools]
    give_allow = draw(st.booleans())
    canonical = _text(allow_key if give_allow else None, allow, deny_key, deny, "\n")

    # The variant: same entries respelt, keys respelt, layout changed.
    v_allow = [draw(st.sampled_from([name, name.lower(), f" {name} "])) for name in allow]
    v_deny = [
        draw(st.sampled_from(builtin_spellings(i, dialect.name))) for i in denied_builtins
    ] + [draw(st.sampled_from(server_spellings(s, t, dialect.name))) for s, t in denied_tools]
    v_allow_key = draw(st.sampled_from((allow_key, *OTHER_SPELLINGS[allow_key])))
    v_deny_key = draw(st.sampled_from((deny_key, *OTHER_SPELLINGS[deny_key])))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    form = draw(st.sampled_from(["flow", "csv", "block"]))
    variant = _text(v_allow_key if give_allow else None, v_allow, v_deny_key, v_deny, newline, form)
    prefix = draw(st.sampled_from(["", "", "\ufeff", "\n", " ", "\ufeff\ufeff", "\t", "\r\n"]))
    return dialect, canonical, prefix + variant


def _text(
    allow_key: str | None,
    allow: list[str],
    deny_key: str,
    deny: list[str],
    newline: str,
    form: str = "flow",
) -> str:
    lines = ["---", "description: generated"]
    for key, entries in ((allow_key, allow), (deny_key, deny)):
        if key is None or (key == deny_key and not entries):
            continue
        if form == "csv" and entries:
            lines.append(f"{key}: {json.dumps(', '.join(entries))}")
        elif form == "block" and entries:
            lines += [f"{key}:", *(f"  - {json.dumps(entry)}" for entry in entries)]
        else:
            lines.append(f"{key}: {json.dumps(entries)}")
    lines += ["---", "Do the work.", ""]
    return newline.join(lines)


def _offered(text: str, dialect: Dialect) -> set[str] | None:
    try:
        spec = parse_agent_text(text, Path("/p/agents/gen.md"), [], dialect)
    except ConfigError:
        return None
    return offered(spec)


@settings(max_examples=300, deadline=None)
@given(agent_files())
def test_a_variant_never_offers_more_than_the_canonical_file(
    case: tuple[Dialect, str, str],
) -> None:
    dialect, canonical, variant = case
    strict = _offered(canonical, dialect)
    assert strict is not None, canonical
    got = _offered(variant, dialect)
    assert got is None or got <= strict, (variant, sorted((got or set()) - strict))
