"""Locks from live sessions: pin an agent's tool surface, and diff two pins.

The lock's data, file and run-time check live in `launcher/config/lockfile.py` (a leaf, so the
session and the serve worker can enforce it); they are re-exported here for `check`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from launcher.config.lockfile import (
    CHANGED_SINCE_LOCK,
    LOCK_FILE,
    LOCK_REASONS,
    NOT_IN_LOCK,
    AgentPin,
    Lock,
    PinnableTool,
    ServerPin,
    ToolPin,
    load_lock,
    pin_entry,
    write_lock,
)
from launcher.secrets import SecretMask

if TYPE_CHECKING:
    from launcher.session import Session

__all__ = [
    "CHANGED_SINCE_LOCK",
    "LOCK_FILE",
    "LOCK_REASONS",
    "NOT_IN_LOCK",
    "AgentPin",
    "Drift",
    "DriftKind",
    "Lock",
    "ServerPin",
    "ToolPin",
    "diff",
    "format_drift",
    "load_lock",
    "pin_session",
    "session_drift",
    "write_lock",
]

DriftKind = Literal["added", "removed", "description", "schema"]


@dataclass(frozen=True)
class Drift:
    """One difference between a pin and the live surface, for the tool `tool`."""

    tool: str
    kind: DriftKind
    detail: str


def pin_session(session: Session) -> AgentPin:
    """The pin of a live session's server tools (built-ins are never locked).

    The active set plus whatever only the session's own lock mutes: a session that
    enforces a lock still pins what its servers announce, so `diff` sees the drift.
    A tool with a secret (in any of its forms) in its names, description or schema is
    left out and counted in `withheld`: the lock file is made to be committed, and a pin
    needs the real name, so such a tool stays unpinned (muted under the lock).
    """
    mask = session.mask
    entries = [e for e in session.active() if e.server is not None]
    entries += [e for e, reason in session.muted() if reason in LOCK_REASONS]
    withheld: Counter[str] = Counter()
    tools: dict[str, ToolPin] = {}
    for entry in entries:
        if entry.server is not None and _holds_secret(entry, mask):
            withheld[entry.server] += 1
        else:
            tools[entry.name] = pin_entry(entry)
    servers = {
        name: ServerPin(status.info.get("name"), status.info.get("version"))
        for name, status in session.status().items()
        if status.info is not None
    }
    return AgentPin(
        tools=dict(sorted(tools.items())), servers=servers, withheld=dict(sorted(withheld.items()))
    )


def _holds_secret(entry: PinnableTool, mask: SecretMask) -> bool:
    """Whether a secret is in anything a pin of `entry` reads (its hashes included: a hash
    of a short description gives its text away to whoever tries candidates)."""
    schema = json.dumps(entry.input_schema, sort_keys=True, ensure_ascii=False, default=str)
    texts = (entry.name, entry.tool, entry.description, schema)
    return any(mask.finds(text) for text in texts)


def session_drift(session: Session) -> list[Drift] | None:
    """A live session's drift from its agent's pin; None when the agent is not locked
    (no lock file, no pin for it, or the session was assembled with `lock=False`)."""
    if session.pin is None:
        return None
    return diff(session.pin, pin_session(session))


def diff(locked: AgentPin, current: AgentPin) -> list[Drift]:
    """What changed from `locked` to `current`, ordered by tool name."""
    drifts: list[Drift] = []
    for name in sorted(locked.tools.keys() | current.tools.keys()):
        old, new = locked.tools.get(name), current.tools.get(name)
        if old is None and new is not None:
            drifts.append(Drift(name, "added", f"new tool from server '{new.server}'"))
        elif new is None and old is not None:
            drifts.append(Drift(name, "removed", f"no longer announced by '{old.server}'"))
        elif old is not None and new is not None:
            if (old.server, old.tool) != (new.server, new.tool):
                drifts.append(Drift(name, "removed", f"was {old.server}/{old.tool}"))
                drifts.append(Drift(name, "added", f"now {new.server}/{new.tool}"))
                continue
            if old.description_sha256 != new.description_sha256:
                drifts.append(Drift(name, "description", "description changed"))
            if old.schema_sha256 != new.schema_sha256:
                drifts.append(Drift(name, "schema", "input schema changed"))
    return drifts


_MARK = {"added": "+", "removed": "-", "description": "~", "schema": "~"}


def format_drift(drift: Drift) -> str:
    """One line: `+ NAME`, `- NAME`, `~ NAME (description changed)`."""
    if drift.kind in ("description", "schema"):
        return f"~ {drift.tool} ({drift.detail})"
    return f"{_MARK[drift.kind]} {drift.tool}"
