"""Readable help placeholders: `--model SPEC`, `--config-dir DIR`, never `<list[str]>`.

typer names a value by its Python type (`<str>`, `<int range>`, `<list[str]>`), and a
missing argument by its parameter name (`Missing argument 'args'`). Each command's
parameters get a metavar here, by name, after typer built the click command; a
parameter no table names gets one from its type, so a newly added option is readable too.
"""

from __future__ import annotations

from typing import Any

METAVARS: dict[str, str] = {
    # Arguments (also what a usage error calls a missing one).
    "args": "PROMPT",
    "agent": "AGENT",
    "agents": "AGENT",
    "targets": "AGENT|CHECKFILE",
    "tasks": "TASKS.jsonl",
    "ref": "ID|last|prune",
    "server": "SERVER",
    "directory": "DIR",
    # Options.
    "agent_opt": "NAME",
    "ext": "NAME",
    "model": "SPEC",
    "max_turns": "N",
    "base_url": "URL",
    "config_dir": "DIR",
    "workspace": "DIR",
    "resume": "ID|last",
    "settle": "SECONDS",
    "max_concurrent": "N",
    "task_ttl": "SECONDS",
    "out": "FILE",
    "jobs": "N",
    "engine": "local|ray",
    "address": "ADDRESS",
    "num_cpus": "CPUS",
    "max_retries": "N",
    "n": "N",
    "query": "TEXT",
    "older_than": "AGE",
    "junit": "FILE",
    "timeout": "SECONDS",
    "servers_from": "HOST,...",
    "scripted_dir": "DIR",
    "sandbox": "on|off|required",
    "isolation": "worktree",
}
"""A parameter's name (the Python one) -> its placeholder in help and usage errors."""

USAGE: dict[str, str] = {"args": "[AGENT] PROMPT", "targets": "[AGENT|CHECKFILE]..."}
"""Arguments shown otherwise in the usage line and the Arguments list (spawn's are two)."""

BY_TYPE = {"int": "N", "float": "NUMBER", "path": "PATH", "bool": "BOOL"}
"""The fallback for a parameter the table does not name, by click's type name."""


def placeholder(param: Any) -> str:
    """The placeholder for one click parameter: from the table, its type, or its name."""
    name = str(param.name or "")
    if name in METAVARS:
        return METAVARS[name]
    kind = ""
    try:  # typer's parameters name their Python type; plain click ones their click type
        kind = str(param.bare_type()) if hasattr(param, "bare_type") else str(param.type.name)
    except Exception:  # help must never fail over a placeholder: fall back to the name
        kind = ""
    for key, value in BY_TYPE.items():
        if key in kind.lower():
            return value
    return name.upper().replace("_", "-") or "VALUE"


def make_readable(command: Any) -> Any:
    """Give every value-taking parameter of `command` a placeholder (not its subcommands:
    the group builds each one on first use, cli/group.py, and makes it readable then)."""
    for param in getattr(command, "params", []):
        if getattr(param, "is_flag", False) or getattr(param, "metavar", None) is not None:
            continue
        param.metavar = placeholder(param)
        if getattr(param, "param_type_name", "") == "argument":
            _plain_argument(param)
    return command


def _plain_argument(param: Any) -> None:
    """An argument reads `[AGENT] PROMPT` in usage and help, not `{PROMPT}... <list[str]>`.

    typer's argument class has no setting for either, so this one instance's two display
    methods are replaced.
    """
    shown = USAGE.get(str(param.name))
    if shown is None:
        shown = param.metavar if param.required else f"[{param.metavar}]"
        shown += "..." if param.nargs != 1 else ""
    param.get_usage_pieces = lambda ctx: [shown]
    param.display_type_rich = lambda ctx: None
    param._rich_display_name = lambda: shown
