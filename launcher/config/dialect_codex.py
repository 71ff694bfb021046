"""Codex's agent files (`.codex/agents/*.toml`, `~/.codex/agents/`) as a dialect.

A Codex agent is a TOML file: `developer_instructions` is the prompt, `sandbox_mode`
says what its shell and edits may touch, `mcp_servers` adds servers (with Codex's own
`enabled_tools` / `disabled_tools`). Codex agents have no tool allowlist: every built-in
and server runs unless a field narrows it. The model is offered Codex's names (`shell`,
`read_file`, `mcp__SERVER__TOOL`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path

from launcher.config.dialect import Action, Dialect, FieldRule, RawField
from launcher.config.dialect_claude import host_servers
from launcher.config.host_entries import codex_entry
from launcher.config.model_spec import provider_slash_model
from launcher.errors import ConfigError

H, M, IGN, REF = Action.HONOURED, Action.MAPPED, Action.IGNORED, Action.REFUSED

PROMPT_FIELD = "developer_instructions"
_TOML_LINE = re.compile(r"at line (\d+)")
_KEY_LINE = re.compile(r'^\s*(?:"([^"]+)"|([A-Za-z0-9_-]+))\s*[=.]|^\s*\[+\s*"?([A-Za-z0-9_-]+)')


def read_codex(text: str, path: Path) -> tuple[dict[str, RawField], str]:
    """A Codex agent file's top-level fields (each with its line) and its prompt."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_LINE.search(str(exc))
        line = int(found.group(1)) if found else None
        raise ConfigError(f"invalid TOML: {str(exc)[:200]}", path=path, line=line) from exc
    except RecursionError as exc:
        raise ConfigError("TOML is nested too deeply", path=path) from exc
    lines = text.splitlines()
    where = _key_lines(lines)
    entries = {key: RawField(value, where.get(key, 1)) for key, value in data.items()}
    for key, entry in entries.items():
        if key not in _FIELDS:
            # A Codex agent file is a config layer: a key not read here (`features`,
            # `shell_environment_policy`, ...) may narrow the agent.
            raise ConfigError(
                "a Codex setting this runner does not read; it may narrow the agent, so "
                "without it the agent could run wider: refused",
                path=path,
                line=entry.line,
                field=key,
            )
    prompt = entries.pop(PROMPT_FIELD, None)
    if prompt is None or not isinstance(prompt.value, str) or not prompt.value.strip():
        raise ConfigError("a Codex agent needs its prompt as text", path=path, field=PROMPT_FIELD)
    return entries, prompt.value.strip()


def _key_lines(lines: list[str]) -> dict[str, int]:
    """The first line of each top-level key (`key =`, `"key" =`, `[key]`, `[key.x]`), in
    one pass: a file of many keys costs no more than its length."""
    found: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        match = _KEY_LINE.match(line)
        if match is not None:
            found.setdefault(next(g for g in match.groups() if g is not None), number)
    return found


def _model(value: object, notes: list[str], path: Path) -> Mapping[str, object]:
    return {"model": provider_slash_model(value)}


def _sandbox_mode(value: object, notes: list[str], path: Path) -> Mapping[str, object]:
    if value == "read-only":
        # A read-only shell cannot be offered here: no shell, no file changes (narrower).
        return {"disallowed_tools": ["bash", "write", "edit"]}
    if value == "workspace-write":
        return {"sandbox": "required"}
    raise ValueError(f"unknown sandbox mode '{value}'")  # the table refuses it first


def _mcp_servers(value: object, notes: list[str], path: Path) -> Mapping[str, object]:
    return host_servers(value, notes, path, codex_entry, ("tables [mcp_servers.NAME]", "a table"))


_FIELDS: dict[str, FieldRule] = {
    "name": FieldRule(H, "name", "the agent's id"),
    "description": FieldRule(H, "description", "one line for humans and hosts"),
    PROMPT_FIELD: FieldRule(M, None, "the prompt (the file has no body)"),
    "model": FieldRule(
        M, "model", "gpt-*, o3, codex-* -> openai:; PROVIDER:MODEL as written", _model
    ),
    "sandbox_mode": FieldRule(
        M,
        None,
        "read-only: no shell, no write or edit; workspace-write: sandbox required",
        _sandbox_mode,
        values={"read-only": M, "workspace-write": M, "danger-full-access": IGN},
        refusal="a sandbox mode unknown here would narrow the agent",
    ),
    "approval_policy": FieldRule(
        M,
        None,
        "nobody to ask here: a call that would need approval is not run outside the sandbox",
        values={"never": IGN, "on-request": IGN, "on-failure": IGN},
        refusal="untrusted (ask before every command) would narrow the agent",
    ),
    "mcp_servers": FieldRule(
        M,
        "inline_servers",
        "[mcp_servers.NAME] tables: servers only this agent has (enabled_tools, "
        "disabled_tools as in mcp.json; enabled = false never starts it)",
        _mcp_servers,
    ),
    "nickname_candidates": FieldRule(IGN, note="display only"),
    "model_reasoning_effort": FieldRule(IGN, note="no reasoning settings here"),
    "model_reasoning_summary": FieldRule(IGN, note="no reasoning settings here"),
    "model_verbosity": FieldRule(IGN, note="no reasoning settings here"),
    "web_search": FieldRule(IGN, note="no web search tool here"),
    "skills": FieldRule(IGN, note="no skills here"),
}

CODEX = Dialect("codex", _FIELDS, suffix=".toml", reader=read_codex)
"""Files in `.codex/agents/` and `~/.codex/agents/`."""
