"""Claude Code's `hooks` (an agent file's field, a settings file's key) read as data.

`{EVENT: [{matcher: STR, hooks: [{type: command, command: STR, ...}]}]}`: each handler
becomes one HookSpec for the event it runs at here. Every event has a row in one table
(docs/hooks.md shows it): honoured, mapped (an agent's `Stop` runs as `SubagentStop`, as
Claude Code converts it), ignored (it never fires for a sub-agent here, or only informs)
or refused (it could narrow the agent and cannot run here: the agent is refused). Only
`type: command` handlers run; any other type refuses the agent. Structure errors raise
ValueError naming the place (`PreToolUse[0].hooks[1].type`); callers add file and line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from launcher.config.dialect import Action

HookOrigin = Literal["agent", "settings"]
"""Where a hook was written: an agent file's frontmatter, or a Claude Code settings file."""

DEFAULT_HOOK_TIMEOUT_S = 600.0
"""Claude Code's default for `command` hooks (10 minutes since Claude Code 2.1.3)."""

PRE_TOOL_USE = "PreToolUse"
POST_TOOL_USE = "PostToolUse"
POST_TOOL_USE_FAILURE = "PostToolUseFailure"
POST_TOOL_BATCH = "PostToolBatch"
STOP_EVENT = "SubagentStop"
TOOL_EVENTS: tuple[str, ...] = (PRE_TOOL_USE, POST_TOOL_USE, POST_TOOL_USE_FAILURE)
"""Events whose matcher filters the tool name (`Bash`, `mcp__github__.*`)."""


@dataclass(frozen=True)
class EventRule:
    """What one Claude Code hook event does here, written in an agent file or in settings."""

    agent: Action
    settings: Action
    note: str
    runs_as: str | None = None
    """The event it runs at here (`Stop` in an agent file runs as `SubagentStop`)."""


H, M, IGN, REF = Action.HONOURED, Action.MAPPED, Action.IGNORED, Action.REFUSED
_NEVER = "never fires for a sub-agent here"

EVENTS: Mapping[str, EventRule] = {
    PRE_TOOL_USE: EventRule(H, H, "before each tool call: allow, deny, ask (= deny), rewrite"),
    POST_TOOL_USE: EventRule(H, H, "after each call that succeeded: feedback, context, stop"),
    POST_TOOL_USE_FAILURE: EventRule(H, H, "after each call that failed: feedback, context"),
    POST_TOOL_BATCH: EventRule(H, H, "after a turn's calls: context, or stop the agent"),
    "Stop": EventRule(
        M,
        IGN,
        "an agent's Stop runs as SubagentStop (as Claude Code converts it); in settings it "
        "fires only when Claude Code's main agent stops",
        runs_as=STOP_EVENT,
    ),
    STOP_EVENT: EventRule(H, H, "when the agent ends: block with a reason to go on"),
    "SubagentStart": EventRule(IGN, IGN, "only adds context; the agent starts from its prompt"),
    "SessionStart": EventRule(IGN, IGN, f"{_NEVER}: Claude Code's main session only"),
    "SessionEnd": EventRule(IGN, IGN, f"{_NEVER}: Claude Code's main session only"),
    "Setup": EventRule(IGN, IGN, f"{_NEVER}: Claude Code's --init only"),
    "UserPromptSubmit": EventRule(IGN, IGN, f"{_NEVER}: a sub-agent's prompt is no user prompt"),
    "UserPromptExpansion": EventRule(IGN, IGN, f"{_NEVER}: no slash commands here"),
    "PermissionRequest": EventRule(IGN, IGN, f"{_NEVER}: nothing here asks for permission"),
    "PermissionDenied": EventRule(IGN, IGN, f"{_NEVER}: Claude Code's auto mode only"),
    "Notification": EventRule(IGN, IGN, f"{_NEVER}: no notifications here"),
    "MessageDisplay": EventRule(IGN, IGN, f"{_NEVER}: display only"),
    "StopFailure": EventRule(IGN, IGN, "Claude Code ignores its output too"),
    "TeammateIdle": EventRule(IGN, IGN, f"{_NEVER}: no agent teams here"),
    "TaskCreated": EventRule(IGN, IGN, f"{_NEVER}: no task tools here"),
    "TaskCompleted": EventRule(IGN, IGN, f"{_NEVER}: no task tools here"),
    "InstructionsLoaded": EventRule(IGN, IGN, f"{_NEVER}: no CLAUDE.md is loaded here"),
    "ConfigChange": EventRule(IGN, IGN, f"{_NEVER}: config is read once, at the start"),
    "CwdChanged": EventRule(IGN, IGN, f"{_NEVER}: the working directory never changes"),
    "DirectoryAdded": EventRule(IGN, IGN, f"{_NEVER}: no directories are added"),
    "FileChanged": EventRule(IGN, IGN, f"{_NEVER}: no files are watched"),
    "PreCompact": EventRule(IGN, IGN, f"{_NEVER}: no compaction here"),
    "PostCompact": EventRule(IGN, IGN, f"{_NEVER}: no compaction here"),
    "WorktreeRemove": EventRule(IGN, IGN, "only informs; the worktree is removed regardless"),
    "WorktreeCreate": EventRule(
        REF, REF, "it replaces git's worktree creation and can fail it, which cannot run here"
    ),
    "Elicitation": EventRule(
        REF, REF, "it can decline a server's request, which the launcher answers itself"
    ),
    "ElicitationResult": EventRule(
        REF, REF, "it can decline a server's request, which the launcher answers itself"
    ),
}
"""Every Claude Code hook event; a name not listed is refused (a misspelt guard never runs)."""

HANDLER_TYPES: Mapping[str, Action] = {
    "command": H,
    "http": REF,
    "mcp_tool": REF,
    "prompt": REF,
    "agent": REF,
}
"""Handler types: only `command` runs here; the others (a URL, a tool, a model) refuse."""

_KNOWN_HANDLER_KEYS = frozenset(
    {"type", "command", "args", "timeout", "shell", "if", "async", "asyncRewake"}
    | {"statusMessage", "once"}
)


@dataclass(frozen=True)
class HookSpec:
    """One hook handler and where it runs: the event here, the matcher, the command."""

    event: str
    """The event it runs at here (PreToolUse, PostToolUse, ..., SubagentStop)."""
    command: str
    matcher: str | None = None
    """The group's matcher as written; None or "" or "*" match everything."""
    args: tuple[str, ...] | None = None
    """Exec form: `command` is run directly with these arguments, no shell."""
    timeout: float = DEFAULT_HOOK_TIMEOUT_S
    shell: str | None = None
    """`bash` when asked for; None: `sh -c` (Claude Code's shell form on Linux and macOS)."""
    condition: str | None = None
    """The handler's `if` (a permission rule: `Bash(git push *)`)."""
    written_as: str = ""
    """The event as written (`Stop` for one that runs as SubagentStop)."""
    origin: HookOrigin = field(default="agent", compare=False)
    source: Path | None = field(default=None, compare=False)
    line: int | None = field(default=None, compare=False)
    project_dir: Path | None = field(default=None, compare=False)
    """CLAUDE_PROJECT_DIR: the project whose `.claude/` discovery read (None: the workspace)."""


def table_rows() -> list[tuple[str, str, str, str]]:
    """(event, in an agent file, in settings, why) per event: the table docs/hooks.md shows."""
    return [(name, str(r.agent), str(r.settings), r.note) for name, r in EVENTS.items()]


def parse_hooks(
    value: object,
    *,
    origin: HookOrigin,
    source: Path | None,
    notes: list[str],
    line: int | None = None,
) -> tuple[HookSpec, ...]:
    """The handlers of a `hooks` mapping that run here; ValueError names a bad place.

    Ignored events and fields are said once in `notes`; refused ones raise.
    """
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise ValueError(f"expected a mapping of event: [matcher groups], got {_kind(value)}")
    specs: list[HookSpec] = []
    ignored: list[str] = []
    for event, groups in value.items():
        if not isinstance(event, str):
            raise ValueError(f"expected an event name, got {_kind(event)}")
        rule = EVENTS.get(event)
        if rule is None:
            raise ValueError(
                f"unknown hook event '{event}': a hook that never runs would leave the agent "
                "unguarded, so it is refused (see docs/hooks.md for the events)"
            )
        action = rule.agent if origin == "agent" else rule.settings
        if action is REF:
            raise ValueError(f"{event} hooks cannot be honoured here: {rule.note}")
        handlers = _handlers(event, groups)
        if action is IGN:
            if handlers:
                ignored.append(event)
            continue
        runs_as = rule.runs_as if action is M and rule.runs_as else event
        for matcher, place, raw in handlers:
            spec = _spec(runs_as, event, matcher, place, raw, notes)
            if spec is not None:
                specs.append(replace(spec, origin=origin, source=source, line=line))
    if ignored:
        notes.append(f"hooks with no effect here, ignored: {', '.join(ignored)}")
    return tuple(specs)


def _handlers(event: str, groups: object) -> list[tuple[str | None, str, dict[str, object]]]:
    """(matcher, place, handler) of every handler of `event`'s matcher groups."""
    if groups is None:
        return []
    if not isinstance(groups, list):
        raise ValueError(f"{event}: expected a list of matcher groups, got {_kind(groups)}")
    found: list[tuple[str | None, str, dict[str, object]]] = []
    for i, group in enumerate(groups):
        where = f"{event}[{i}]"
        if not isinstance(group, dict):
            raise ValueError(f"{where}: expected {{matcher, hooks}}, got {_kind(group)}")
        unknown = sorted(str(k) for k in group if k not in ("matcher", "hooks"))
        if unknown:
            # A misspelt `hooks` would drop the handlers: a guard that never runs.
            raise ValueError(f"{where}: unknown key '{unknown[0]}' (expected matcher, hooks)")
        matcher = group.get("matcher")
        if matcher is not None and not isinstance(matcher, str):
            raise ValueError(f"{where}.matcher: expected a string, got {_kind(matcher)}")
        _check_matcher(matcher, f"{where}.matcher")
        handlers = group.get("hooks")
        if not isinstance(handlers, list):
            raise ValueError(f"{where}.hooks: expected a list of handlers, got {_kind(handlers)}")
        for j, handler in enumerate(handlers):
            place = f"{where}.hooks[{j}]"
            if not isinstance(handler, dict):
                raise ValueError(f"{place}: expected a handler mapping, got {_kind(handler)}")
            found.append((matcher, place, handler))
    return found


def _spec(
    runs_as: str,
    written: str,
    matcher: str | None,
    place: str,
    raw: dict[str, object],
    notes: list[str],
) -> HookSpec | None:
    """The handler as a HookSpec; None for a background one (it only informs: ignored)."""
    kind = raw.get("type")
    if HANDLER_TYPES.get(str(kind)) is not H:
        raise ValueError(
            f"{place}.type: '{kind}' hooks cannot be honoured here: only type: command hooks "
            "run (a URL, a tool or a model cannot be called as Claude Code would)"
        )
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ValueError(f"{place}.command: expected a non-empty string")
    args = raw.get("args")
    if args is not None and (
        not isinstance(args, list) or not all(isinstance(a, str) for a in args)
    ):
        raise ValueError(f"{place}.args: expected a list of strings")
    timeout = raw.get("timeout", DEFAULT_HOOK_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise ValueError(f"{place}.timeout: expected a positive number of seconds")
    shell = raw.get("shell")
    if shell not in (None, "bash"):
        raise ValueError(f"{place}.shell: '{shell}' cannot run here (bash or sh only)")
    condition = raw.get("if")
    if condition is not None and not isinstance(condition, str):
        raise ValueError(f"{place}.if: expected a permission rule such as Bash(git *)")
    for flag in ("async", "asyncRewake"):
        if raw.get(flag) is True:
            # Claude Code applies no decision of a background hook: it only informs.
            notes.append(f"{place}: a background ({flag}) hook only informs; not run here")
            return None
    unknown = sorted(str(k) for k in raw if k not in _KNOWN_HANDLER_KEYS)
    if unknown:
        notes.append(f"{place}: unknown handler field '{unknown[0]}' ignored")
    return HookSpec(
        event=runs_as,
        command=command,
        matcher=matcher,
        args=tuple(args) if isinstance(args, list) else None,
        timeout=float(timeout),
        shell=shell if isinstance(shell, str) else None,
        condition=condition.strip() if isinstance(condition, str) else None,
        written_as=written,
    )


def _check_matcher(matcher: str | None, place: str) -> None:
    from launcher.hooks.matcher import compile_matcher

    try:
        compile_matcher(matcher)
    except re.error as exc:
        raise ValueError(f"{place}: '{matcher}' is not a regular expression here: {exc}") from exc


def _kind(value: object) -> str:
    return type(value).__name__
