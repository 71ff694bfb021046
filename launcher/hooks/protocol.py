"""Claude Code's hook protocol: the JSON a hook reads on stdin, and what its answer means.

Input is one compact JSON object (as Claude Code writes it: no spaces, non-ASCII as is).
The answer is the exit code, stdout and stderr, read as Claude Code's hooks reference
says: exit 2 blocks (stderr is the reason, or the JSON's own); stdout that starts with
`{` is JSON output, read on every exit code; JSON that does not fit the schema, any other
exit code without JSON, a timeout or a command that cannot start decide nothing (the call
goes on, as in Claude Code) and are reported as `error`. `ask` and `defer` need someone to
answer, and nobody is here: they deny.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from launcher.config.hooks_field import (
    POST_TOOL_BATCH,
    POST_TOOL_USE,
    POST_TOOL_USE_FAILURE,
    PRE_TOOL_USE,
    STOP_EVENT,
)

BLOCKING_EXIT = 2
MAX_TEXT_CHARS = 10_000
"""Claude Code caps a hook's strings (reason, context, message) at this many characters."""
UNSET: Any = object()
"""No `updatedToolOutput` given (None is a value a hook may give)."""


class Decision(StrEnum):
    """What one hook decided, as the `hook` event records it."""

    NONE = "none"
    ALLOW = "allow"
    DENY = "deny"
    BLOCK = "block"
    """PostToolUse: feedback next to the result; SubagentStop: the agent goes on."""
    STOP = "stop"
    """`continue: false` (or PostToolBatch's block): the agent stops."""
    ERROR = "error"
    """The hook failed; it decided nothing and the run went on."""


@dataclass(frozen=True)
class HookRun:
    """How one hook process ended: its exit code (None: timed out), output and errors."""

    code: int | None
    stdout: str = ""
    stderr: str = ""
    failure: str | None = None
    """Why it could not run at all (the command could not be started)."""


@dataclass
class Outcome:
    """One hook's answer, read."""

    decision: Decision = Decision.NONE
    reason: str | None = None
    updated_input: dict[str, Any] | None = None
    context: str | None = None
    """`additionalContext`: told to the model next to the result (or to go on)."""
    updated_output: Any = UNSET
    message: str | None = None
    """`systemMessage`: for the user; recorded in the event."""


def encode(payload: Mapping[str, Any]) -> bytes:
    """A hook's stdin: compact JSON as Claude Code writes it (JSON.stringify)."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def read_outcome(event: str, run: HookRun, timeout: float) -> Outcome:
    """What `run` (a hook of `event`) decided."""
    if run.failure is not None:
        return Outcome(Decision.ERROR, f"could not run: {run.failure}")
    if run.code is None:
        return Outcome(Decision.ERROR, f"timed out after {timeout:g} s; it decided nothing")
    data = _json(run.stdout)
    problem = _schema_problem(event, data) if data is not None else None
    if run.code == BLOCKING_EXIT:
        outcome = _apply(event, data) if data is not None and problem is None else Outcome()
        if outcome.decision is Decision.STOP:
            return outcome
        blocked = Decision.DENY if event == PRE_TOOL_USE else Decision.BLOCK
        if event == POST_TOOL_BATCH:
            blocked = Decision.STOP
        if outcome.decision not in (Decision.DENY, Decision.BLOCK, Decision.STOP):
            outcome.reason = _cap(run.stderr.strip()) or f"{event} hook exited with status 2"
        outcome.decision = blocked
        return outcome
    if data is not None and problem is None:
        return _apply(event, data)
    if problem is not None:
        return Outcome(Decision.ERROR, f"its JSON output was refused: {problem}")
    if run.code != 0:
        first = run.stderr.strip().splitlines()[0] if run.stderr.strip() else ""
        return Outcome(Decision.ERROR, _cap(f"exit status {run.code}: {first}".rstrip(": ")))
    return Outcome()


def _json(stdout: str) -> dict[str, Any] | None:
    """stdout as a JSON object when it starts with `{` (leading space ignored), else None."""
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


_TYPES: Mapping[str, type | tuple[type, ...]] = {
    "continue": bool,
    "stopReason": str,
    "suppressOutput": bool,
    "systemMessage": str,
    "reason": str,
    "decision": str,
    "hookSpecificOutput": dict,
}
_SPECIFIC_TYPES: Mapping[str, type | tuple[type, ...]] = {
    "hookEventName": str,
    "permissionDecision": str,
    "permissionDecisionReason": str,
    "updatedInput": dict,
    "additionalContext": str,
}
_PERMISSIONS = ("allow", "deny", "ask", "defer")
_DECISIONS: Mapping[str, tuple[str, ...]] = {PRE_TOOL_USE: ("approve", "block")}
"""Top-level `decision` values; PreToolUse's are its deprecated spellings of allow, deny."""


def _schema_problem(event: str, data: Mapping[str, Any]) -> str | None:
    """Why Claude Code's output schema would refuse `data`, or None."""
    for key, kind in _TYPES.items():
        if key in data and data[key] is not None and not isinstance(data[key], kind):
            return f"'{key}' must be a {_name(kind)}"
    decision = data.get("decision")
    if decision is not None and decision not in _DECISIONS.get(event, ("block",)):
        return f"'decision' cannot be '{decision}' for {event}"
    specific = data.get("hookSpecificOutput") or {}
    for key, kind in _SPECIFIC_TYPES.items():
        if key in specific and specific[key] is not None and not isinstance(specific[key], kind):
            return f"'hookSpecificOutput.{key}' must be a {_name(kind)}"
    named = specific.get("hookEventName")
    if named is not None and named not in (event, "Stop" if event == STOP_EVENT else event):
        return f"'hookSpecificOutput.hookEventName' is '{named}' in a {event} hook"
    permission = specific.get("permissionDecision")
    if permission is not None and (event != PRE_TOOL_USE or permission not in _PERMISSIONS):
        return f"'hookSpecificOutput.permissionDecision' cannot be '{permission}' for {event}"
    return None


def _apply(event: str, data: Mapping[str, Any]) -> Outcome:
    """The decision of JSON output that fits the schema."""
    specific = data.get("hookSpecificOutput") or {}
    outcome = Outcome(context=_cap(specific.get("additionalContext")))
    outcome.message = _cap(data.get("systemMessage"))
    if data.get("continue") is False:
        outcome.decision = Decision.STOP
        outcome.reason = _cap(data.get("stopReason")) or f"a {event} hook stopped the agent"
        return outcome
    reason = _cap(data.get("reason"))
    decision = data.get("decision")
    if event == PRE_TOOL_USE:
        permission = specific.get("permissionDecision") or {
            "approve": "allow",
            "block": "deny",
        }.get(str(decision))
        reason = _cap(specific.get("permissionDecisionReason")) or reason
        if permission in ("deny", "ask", "defer"):
            outcome.decision = Decision.DENY
            outcome.reason = reason if permission == "deny" else _nobody(permission, reason)
        elif permission == "allow":
            outcome.decision = Decision.ALLOW
            outcome.reason = reason
        if permission not in ("deny", "defer"):
            outcome.updated_input = specific.get("updatedInput")
        return outcome
    if decision == "block":
        outcome.decision = Decision.STOP if event == POST_TOOL_BATCH else Decision.BLOCK
        outcome.reason = reason or f"a {event} hook blocked without a reason"
    if event in (POST_TOOL_USE, POST_TOOL_USE_FAILURE):
        for key in ("updatedToolOutput", "updatedMCPToolOutput"):
            if key in specific:
                outcome.updated_output = specific[key]
    return outcome


def _nobody(permission: str, reason: str | None) -> str:
    said = f": {reason}" if reason else ""
    return (
        f"the hook answered '{permission}' and there is nobody to ask here, so it is denied{said}"
    )


def _cap(text: object) -> str | None:
    if not isinstance(text, str) or not text:
        return None
    if len(text) <= MAX_TEXT_CHARS:
        return text
    return f"{text[:MAX_TEXT_CHARS]}... [{len(text) - MAX_TEXT_CHARS} characters cut]"


def _name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(
        {bool: "boolean", str: "string", dict: "object"}.get(k, k.__name__) for k in kinds
    )
