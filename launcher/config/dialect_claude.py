"""Claude Code's agent files (`.claude/agents/*.md`) as a dialect table.

Its tool names map to our built-ins, `mcp__SERVER__TOOL` / `mcp__SERVER` (and globs)
to `ext:` selectors; its model aliases to Anthropic ids (`SUBAGENT_MODEL_SONNET` and
friends override the table). A `tools` list that names no MCP tool starts no server, as
in Claude Code, where `tools` is the allowlist of every tool.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import cast

from launcher import settings
from launcher.config.dialect import Action, Dialect, FieldRule
from launcher.config.frontmatter import excerpt
from launcher.config.hooks_field import parse_hooks
from launcher.config.host_entries import Entry as HostEntry
from launcher.config.host_entries import EntryError, Reading
from launcher.config.selectors import KNOWN_BUILTINS
from launcher.config.servers import parse_server_entry
from launcher.config.types import ServerSpec
from launcher.errors import ConfigError
from launcher.toolset.naming import CLAUDE_MCP_PREFIX as MCP_PREFIX

H, M, IGN = Action.HONOURED, Action.MAPPED, Action.IGNORED

TOOL_NAMES: Mapping[str, str] = {
    "Read": "read",
    "Write": "write",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Bash": "bash",
    "Grep": "grep",
    "Glob": "find",
    "LS": "ls",
}
"""Claude Code's built-in tool names -> ours. Any other name has no tool here."""

MODEL_ALIASES: Mapping[str, str] = {
    "sonnet": "anthropic:claude-sonnet-4-5",
    "opus": "anthropic:claude-opus-4-1",
    "haiku": "anthropic:claude-haiku-4-5",
}
"""Claude Code's model aliases; `SUBAGENT_MODEL_<ALIAS>` (e.g. SUBAGENT_MODEL_SONNET) overrides."""

_ANY_RULE = re.compile(r"^([^()]+)\((.*)\)$", re.S)
"""A permission rule, `Tool(specifier)`: finer than a tool, which is all we can enforce."""
_CLAUDE_LOWER: Mapping[str, str] = {name.lower(): name for name in TOOL_NAMES}


def _names(value: object) -> list[str]:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item.strip() for item in value if item.strip()]
    raise ValueError("expected a comma-separated string or a list of tool names")


def mcp_selector(name: str) -> str:
    """`mcp__SERVER__TOOL` -> `ext:SERVER/TOOL`, `mcp__SERVER` -> `ext:SERVER`; a glob
    in the server part becomes a `SERVER__TOOL` name selector (any matching server)."""
    rest = name[len(MCP_PREFIX) :]
    server, sep, tool = rest.partition("__")
    if not server:
        raise ValueError(
            f"'{excerpt(name)}' names no server (expected mcp__SERVER or mcp__SERVER__TOOL)"
        )
    if any(ch in server for ch in "*?["):
        return f"{server}__{tool or '*'}"
    return f"ext:{server}/{tool}" if sep and tool else f"ext:{server}"


def _tools(value: object, notes: list[str], path: Path) -> Mapping[str, object]:
    ours: list[str] = []
    unknown: list[str] = []
    for name in _names(value):
        if _ANY_RULE.match(name):
            raise ValueError(
                f"'{excerpt(name)}' allows a tool for some uses only, which cannot be honoured "
                "here (it would allow every use); list the tool bare or leave it out"
            )
        if name.startswith(MCP_PREFIX):
            rest = name[len(MCP_PREFIX) :]
            if rest.endswith("__"):
                raise ValueError(
                    f"'{excerpt(name)}' names no tool (mcp__SERVER is the whole server, "
                    "mcp__SERVER__TOOL one tool): it cannot be honoured exactly"
                )
            ours.append(mcp_selector(name))
        elif name in TOOL_NAMES:
            ours.append(TOOL_NAMES[name])
        else:
            unknown.append(name)
    if unknown:
        shown = ", ".join(excerpt(name) for name in unknown[:20])
        more = f" and {len(unknown) - 20} more" if len(unknown) > 20 else ""
        notes.append(f"tools not available here, left out: {shown}{more}")
    has_mcp = any(item.startswith("ext:") or "__" in item for item in ours)
    # An allowlist that kept nothing allows nothing (never "field omitted" = everything).
    result: dict[str, object] = {"tools": ours or ["none"]}
    if not has_mcp:
        result["extensions"] = False
    return result


def _disallowed(value: object, notes: list[str], path: Path) -> Mapping[str, object]:
    """Every deny entry kept, in a spelling `deny_selectors` reads; a rule (`Bash(rm:*)`,
    `mcp__S__T(x)`) denies the whole tool; a name that is no tool here is said once."""
    ours: list[str] = []
    nothing: list[str] = []
    for name in _names(value):
        rule = _ANY_RULE.match(name)
        base = rule.group(1).strip() if rule else name
        lowered = base.lower()
        if rule:
            notes.append(
                f"disallowedTools '{excerpt(name)}': the whole {excerpt(base)} tool is denied"
            )
        if lowered in _CLAUDE_LOWER:
            ours.append(TOOL_NAMES[_CLAUDE_LOWER[lowered]])
        elif (
            lowered.startswith((MCP_PREFIX, "ext:"))
            or "__" in base
            or lowered in ("*", "all")
            or lowered in KNOWN_BUILTINS
        ):
            ours.append(base)
        elif base not in nothing:
            nothing.append(base)
    if nothing:
        shown = ", ".join(excerpt(name) for name in nothing[:20])
        notes.append(f"no tool here is named {shown}: nothing to deny")
    return {"disallowed_tools": ours}


def deny_entries(rules: list[str], notes: list[str], path: Path) -> list[str]:
    """Claude Code deny rules as our `disallowed_tools` entries, read as `disallowedTools`."""
    return list(cast(list[str], _disallowed(rules, notes, path)["disallowed_tools"]))


def _hooks(value: object, notes: list[str], path: Path) -> Mapping[str, object]:
    return {"hooks": parse_hooks(value, origin="agent", source=path, notes=notes)}


def _model(value: object, notes: list[str], path: Path) -> Mapping[str, object]:
    if not isinstance(value, str):
        raise ValueError(f"expected a model name, got {type(value).__name__}")
    spec = value.strip()
    if spec == "inherit":
        return {"model": None}  # the usual chain: --model, SUBAGENT_MODEL
    if spec in MODEL_ALIASES:
        return {"model": settings.MODEL_ALIAS.raw(suffix=spec.upper()) or MODEL_ALIASES[spec]}
    if spec.startswith("claude-"):
        return {"model": f"anthropic:{spec}"}
    if ":" in spec:
        return {"model": spec}
    aliases = ", ".join(MODEL_ALIASES)
    raise ValueError(f"expected {aliases}, inherit, a claude-* model id or PROVIDER:MODEL")


def inline_server(name: str, raw: object, path: Path) -> ServerSpec:
    """An inline `mcpServers` definition as a ServerSpec, `${VAR}` expanded."""
    try:
        return parse_server_entry(name, raw, path, os.environ)
    except ConfigError as exc:
        field = f"{exc.field}: " if exc.field else ""
        raise ValueError(f"server '{name}': {field}{exc.message}") from exc


def host_servers(
    value: object,
    notes: list[str],
    path: Path,
    entry: HostEntry,
    shapes: tuple[str, str],
) -> Mapping[str, object]:
    """Another host's server table in an agent file (`entry` reads one server the way that
    host's config reader does): the servers that can run, inline; the rest denied as
    `ext:NAME`, so none of that name starts for the agent. `shapes`: how the table and one
    entry are spelt in that host's format, for the errors."""
    if not isinstance(value, dict):
        raise ValueError(f"expected {shapes[0]}")
    inline: list[ServerSpec] = []
    denied: list[str] = []
    reading = Reading(os.environ, notes, "a server", strict=True)
    for name, raw in value.items():
        if not isinstance(raw, dict):
            raise ValueError(f"server '{excerpt(name)}': expected {shapes[1]}")
        try:
            found = entry(str(name), raw, reading)
        except EntryError as exc:
            raise ValueError(f"server '{excerpt(name)}': {exc.field}: {exc.message}") from exc
        if found is None:
            denied.append(f"ext:{name}")  # disabled, refused or cannot run here
            continue
        inline.append(inline_server(str(name), found, path))
    return {"inline_servers": tuple(inline), "disallowed_tools": denied}


def _mcp_servers(value: object, notes: list[str], path: Path) -> Mapping[str, object]:
    items = [{k: v} for k, v in value.items()] if isinstance(value, dict) else value
    if not isinstance(items, list):
        raise ValueError("expected a list of server names or {name: definition} entries")
    names: list[str] = []
    inline: list[ServerSpec] = []
    for item in items:
        if isinstance(item, str) and item.strip():
            names.append(item.strip())
        elif isinstance(item, dict) and item:
            for key, definition in item.items():
                names.append(str(key))
                inline.append(inline_server(str(key), definition, path))
        else:
            raise ValueError("expected a list of server names or {name: definition} entries")
    return {"extensions": tuple(names), "inline_servers": tuple(inline)}


_NO_PROMPTS = "a sub-agent here never asks for permission: each allowed tool just runs"

_FIELDS: dict[str, FieldRule] = {
    "name": FieldRule(H, "name", "the agent's id"),
    "description": FieldRule(H, "description", "one line for humans and hosts"),
    "tools": FieldRule(
        M,
        "tools",
        "Read, Write, Edit, MultiEdit, Bash, Grep, Glob, LS -> built-ins; mcp__S__T, mcp__S, "
        "globs -> ext: selectors; no mcp__ entry = no server starts; [], empty, none = nothing; "
        "Tool(rule), mcp__S__ refuse; others warned, left out",
        _tools,
    ),
    "disallowedTools": FieldRule(
        M,
        "disallowed_tools",
        "always wins; any case; mcp__S__T (S as exposed: gh.stub is gh_stub), mcp__S, "
        "ext:S/T, S__T, built-ins; Tool(rule) denies the whole tool; a name that is no tool "
        "here is said once",
        _disallowed,
    ),
    "model": FieldRule(
        M,
        "model",
        "sonnet, opus, haiku -> Anthropic ids (SUBAGENT_MODEL_SONNET, ...); "
        "inherit -> --model, SUBAGENT_MODEL",
        _model,
    ),
    "permissionMode": FieldRule(
        M,
        None,
        _NO_PROMPTS,
        values={"default": IGN, "acceptEdits": IGN, "bypassPermissions": IGN, "auto": IGN},
        refusal="plan (read-only), dontAsk (deny what is not pre-approved) or a mode unknown "
        "here would narrow the agent",
    ),
    "maxTurns": FieldRule(M, "max_turns", "turn limit"),
    "mcpServers": FieldRule(
        M,
        "extensions",
        "server names and inline {name: definition}: the agent may use only these",
        _mcp_servers,
    ),
    "memory": FieldRule(H, "memory", "project, local or user: memory tools"),
    "background": FieldRule(H, "background", "serve's default `background` for this agent"),
    "isolation": FieldRule(H, "isolation", "`worktree`: the run works in a fresh git worktree"),
    "expect": FieldRule(H, "expect", "ours: expectations for `subagent check`"),
    "skills": FieldRule(IGN, note="no skills here"),
    "hooks": FieldRule(
        M,
        "hooks",
        "command hooks run as Claude Code runs them (docs/hooks.md); other types refuse",
        _hooks,
    ),
    "effort": FieldRule(IGN, note="no effort setting here"),
    "color": FieldRule(IGN, note="display only"),
    "initialPrompt": FieldRule(IGN, note="the prompt comes from the caller"),
}

CLAUDE = Dialect("claude", _FIELDS)
"""Files in `.claude/agents/` and `~/.claude/agents/`."""
