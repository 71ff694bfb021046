"""Gemini CLI's agent files (`.gemini/agents/*.md`, `~/.gemini/agents/`) as a dialect.

Its `tools` is the allowlist of every tool, as in Gemini CLI (omitted: every tool):
read_file, write_file, replace, run_shell_command, grep_search, glob, list_directory map
to our built-ins, `mcp_*` / `mcp_SERVER_*` / `mcp_SERVER_TOOL` to servers' tools. Its
model is offered Gemini CLI's names (`read_file`, `mcp_github_list_issues`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from launcher.config.dialect import Action, Dialect, FieldRule
from launcher.config.dialect_claude import host_servers
from launcher.config.frontmatter import excerpt
from launcher.config.host_entries import gemini_entry
from launcher.config.host_tools import allow_selector, is_glob

H, M, IGN = Action.HONOURED, Action.MAPPED, Action.IGNORED

MCP_PREFIX = "mcp_"
TOOL_NAMES: Mapping[str, str] = {
    "read_file": "read",
    "read_many_files": "read",
    "write_file": "write",
    "replace": "edit",
    "edit": "edit",
    "run_shell_command": "bash",
    "grep_search": "grep",
    "search_file_content": "grep",
    "glob": "find",
    "list_directory": "ls",
}
"""Gemini CLI's built-in tool names (and older spellings) -> ours."""


def _tools(value: object, notes: list[str], path: Path) -> Mapping[str, object]:
    # Gemini CLI writes a list; collections also write `read_file, glob` (same names).
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise ValueError("expected a list of tool names")
    names = [item.strip() for item in items if item.strip()]
    if "*" in names:
        return {"tools": ["*"]}
    ours: list[str] = []
    unknown: list[str] = []
    for name in names:
        if name in TOOL_NAMES:
            ours.append(TOOL_NAMES[name])
        elif name.startswith(MCP_PREFIX):
            ours.append(allow_selector(name, MCP_PREFIX))
        elif is_glob(name):
            raise ValueError(f"'{excerpt(name)}' is a glob this runner cannot honour exactly")
        else:
            unknown.append(name)
    if unknown:
        notes.append(f"tools not available here, left out: {excerpt(', '.join(unknown), 200)}")
    result: dict[str, object] = {"tools": ours or ["none"]}
    if not any(item.startswith("ext:") or "__" in item for item in ours):
        result["extensions"] = False
    return result


def _mcp_servers(value: object, notes: list[str], path: Path) -> Mapping[str, object]:
    return host_servers(
        value, notes, path, gemini_entry, ("a map of server name to definition", "a mapping")
    )


def _minutes(value: object, notes: list[str], path: Path) -> Mapping[str, object]:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"expected a positive number of minutes, got '{excerpt(value)}'")
    return {"timeout": value * 60}


def _model(value: object, notes: list[str], path: Path) -> Mapping[str, object]:
    if not isinstance(value, str):
        raise ValueError(f"expected a model name, got {type(value).__name__}")
    spec = value.strip()
    if spec == "inherit" or ":" in spec:
        return {"model": spec}
    # A Gemini model id has no provider here; the model does not change what may run.
    notes.append(f"'{excerpt(spec)}' has no provider here: --model or SUBAGENT_MODEL is used")
    return {"model": None}


_FIELDS: dict[str, FieldRule] = {
    "name": FieldRule(H, "name", "the agent's id"),
    "description": FieldRule(H, "description", "one line for humans and hosts"),
    "kind": FieldRule(
        M,
        None,
        "local: runs here",
        values={"local": IGN},
        refusal="remote (an A2A agent) does not run here",
    ),
    "tools": FieldRule(
        M,
        "tools",
        "read_file, write_file, replace, run_shell_command, grep_search, glob, "
        "list_directory -> built-ins; mcp_*, mcp_SERVER_*, mcp_SERVER_TOOL -> servers' "
        "tools; no mcp_ entry = no server starts; others warned, left out",
        _tools,
    ),
    "mcpServers": FieldRule(
        M, "inline_servers", "inline {name: definition}: servers only this agent has", _mcp_servers
    ),
    "model": FieldRule(
        M,
        "model",
        "inherit or a Gemini id (warned) -> --model, SUBAGENT_MODEL; PROVIDER:MODEL as written",
        _model,
    ),
    "max_turns": FieldRule(H, "max_turns", "turn limit"),
    "timeout_mins": FieldRule(
        M, "timeout", "minutes -> the agent's `timeout` (wall-clock seconds)", _minutes
    ),
    "temperature": FieldRule(IGN, note="no sampling settings here"),
    "display_name": FieldRule(H, "display_name", "shown by `subagent agents` next to the id"),
}

GEMINI = Dialect("gemini", _FIELDS)
"""Files in `.gemini/agents/` and `~/.gemini/agents/`."""
