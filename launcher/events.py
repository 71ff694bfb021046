"""The typed event stream: the one record of what a session did.

Renderers, `--json` output, the serve-mode worker protocol and the tests all read
these events; nothing else reports what happened.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import json.encoder
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, TextIO

from launcher.event_line import encode as _encode
from launcher.event_line import field_text as _field
from launcher.secrets import UNMASKED

READ_BACK = {UNMASKED: True}
"""Field metadata: an id, name, path or spec the program reads back, so never masked."""
SCHEMA_VERSION = 1
"""The events schema's version (docs/events.schema.json), in every `session_start`. Added
event types and fields keep it; a field removed, renamed or retyped raises it."""


class RunStatus(StrEnum):
    """A run's status, wherever one is reported: `agent_end`, serve, batch, check, the store.

    A StrEnum: it is its value in JSON, SQLite and f-strings, so every shape stays the same.
    """

    COMPLETED = "completed"
    ERROR = "error"
    MAX_TURNS = "max_turns"
    STOPPED = "stopped"
    MAX_TOKENS = "max_tokens"
    MAX_COST = "max_cost"
    TIMEOUT = "timeout"
    IDLE_TIMEOUT = "idle_timeout"
    """A limit of the run's budget (launcher/budget.py) ended it."""
    SKIPPED = "skipped"
    """A batch task never started: the batch's `--max-cost-total` was reached first."""
    QUEUED = "queued"
    RUNNING = "running"
    INTERRUPTED = "interrupted"
    """The store's word for a run left `running` by a process that is gone."""
    ENDED = "ended"
    """The store's word for a session that ran no agent (`tools`, a check without `run`)."""

    @property
    def final(self) -> bool:
        """An `agent_end` status: the run ended and never leaves it."""
        return self in (
            RunStatus.COMPLETED,
            RunStatus.ERROR,
            RunStatus.MAX_TURNS,
            RunStatus.STOPPED,
            RunStatus.MAX_TOKENS,
            RunStatus.MAX_COST,
            RunStatus.TIMEOUT,
            RunStatus.IDLE_TIMEOUT,
        )

    @property
    def ok(self) -> bool:
        """The run did what it was asked (`spawn` exits 0, a batch task is done)."""
        return self is RunStatus.COMPLETED

    @classmethod
    def of(cls, value: object) -> RunStatus:
        """The status a peer reported (a worker's line, a results file); unknown: `error`."""
        try:
            return cls(str(value))
        except ValueError:
            return cls.ERROR


@dataclass(kw_only=True)
class Event:
    """Base event; `type` is the wire name, `ts` the wall-clock time it happened."""

    type: ClassVar[str] = "event"
    ts: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-lines form: `type` first, then the fields (values shared, not copied:
        an event's values are plain JSON data, and no sink changes them)."""
        names, fields = _names(type(self)), self.__dict__
        if len(fields) == len(names):
            # Every field set by __init__, in order, and nothing else: the instance's own dict.
            return {"type": self.type, **fields}
        return {"type": self.type, **{name: getattr(self, name) for name in names}}

    def to_json(self) -> str:
        """`json.dumps(self.to_dict(), ensure_ascii=False, default=str)`, made once: the mask's
        check and every JSON sink read it (an event is not changed once made; masking copies)."""
        line: str | None = self.__dict__.get(_LINE)
        if line is None:
            line = self.__dict__[_LINE] = self._line()
        return line

    def _line(self) -> str:
        return _encode(self.to_dict())


_LINE = "_json_line"
"""Where an event keeps its JSON text (not a field: no dataclass function sees it)."""
_NAMES_AT = "_names_at"
"""Where a `turn_start` keeps the offset of its offer's names in that text."""


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _names(cls: type[Event]) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


class ToolNames(tuple[str, ...]):
    """The names a turn offers: one object shared by every `turn_start` until the offer
    changes, so its JSON is made once, not once a turn."""

    @functools.cached_property
    def json(self) -> str:
        return json.dumps(list(self), ensure_ascii=False)


@dataclass(kw_only=True)
class SessionStart(Event):
    type: ClassVar[str] = "session_start"
    agent: str = field(metadata=READ_BACK)
    session_id: str = field(metadata=READ_BACK)
    servers: list[str] = field(default_factory=list, metadata=READ_BACK)
    log_dir: str | None = field(default=None, metadata=READ_BACK)
    schema_version: int = SCHEMA_VERSION


@dataclass(kw_only=True)
class ServerState(Event):
    """A server moved to `starting`, `connected`, `failed` or `closed`.

    `server_info` is the server's own `{"name", "version"}` (from initialize), once known.
    """

    type: ClassVar[str] = "server_state"
    server: str = field(metadata=READ_BACK)
    state: str = field(metadata=READ_BACK)
    error: str | None = None
    tools: int = 0
    log: str | None = field(default=None, metadata=READ_BACK)
    protocol: str | None = None
    server_info: dict[str, str | None] | None = None


@dataclass(kw_only=True)
class ToolsChanged(Event):
    """The registry changed: tools added, removed, or changed (description or schema)."""

    type: ClassVar[str] = "tools_changed"
    source: str = field(metadata=READ_BACK)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class AgentStart(Event):
    """An agent run (or a resume of it) begins on `model` (the resolved PROVIDER:MODEL spec)."""

    type: ClassVar[str] = "agent_start"
    model: str = field(metadata=READ_BACK)


@dataclass(kw_only=True)
class UserMessage(Event):
    """A user message joins the conversation before `turn`: the prompt, a steer, the wrap-up."""

    type: ClassVar[str] = "user_message"
    turn: int
    content: str
    kind: str = "prompt"


@dataclass(kw_only=True)
class AssistantMessage(Event):
    """The model's whole reply for `turn`: its text, the tool calls it asked for, and the
    tokens it cost (`input_tokens`, `output_tokens`)."""

    type: ClassVar[str] = "assistant_message"
    turn: int
    text: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class TurnStart(Event):
    """A turn begins; `tools` are the names offered this turn, `deferred` the in-scope tools
    not offered but loadable through `tool_search` (tools on demand; 0 otherwise)."""

    type: ClassVar[str] = "turn_start"
    turn: int
    tools: Sequence[str] = field(default_factory=list)
    deferred: int = 0

    def _line(self) -> str:
        if not isinstance(self.tools, ToolNames):
            return super()._line()
        head = json.dumps({"type": self.type, "ts": self.ts, "turn": self.turn})
        # The offer's names, serialized once per offer: a turn costs the same at 5 000 tools.
        head = f'{head[:-1]}, "tools": '
        self.__dict__[_NAMES_AT] = len(head)
        return f'{head}{self.tools.json}, "deferred": {self.deferred}}}'

    def names_span(self) -> tuple[int, int] | None:
        """Where the offer's shared names (`tools.json`) sit in `to_json()`; None when
        `tools` is not a ToolNames."""
        if not isinstance(self.tools, ToolNames):
            return None
        self.to_json()
        start: int = self.__dict__[_NAMES_AT]
        return start, start + len(self.tools.json)


@dataclass(kw_only=True)
class ToolsLoaded(Event):
    """A `tool_search` call (`id`: its tool call) loaded tools: `loaded` join the offer from
    the next turn; `query` is the words or pattern the model searched for."""

    type: ClassVar[str] = "tools_loaded"
    id: str
    query: str
    loaded: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class TextDelta(Event):
    type: ClassVar[str] = "text_delta"
    turn: int
    text: str


@dataclass(kw_only=True)
class ToolCallEvent(Event):
    type: ClassVar[str] = "tool_call"
    turn: int
    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    server: str | None = None
    """The offered tool's server (None: a built-in, or a name this turn did not offer)."""
    tool: str | None = None
    """The offered tool's own name (`list_issues` for `mcp__github__list_issues`)."""

    def _line(self) -> str:
        # Every call writes it: made from the fields, not a dict walked (tests/test_events_line)
        if type(self) is not ToolCallEvent:
            return super()._line()
        f = _field
        return (
            f'{{"type": "tool_call", "ts": {f(self.ts)}, "turn": {f(self.turn)}, "id": '
            f'{f(self.id)}, "name": {f(self.name)}, "arguments": {f(self.arguments)}, '
            f'"server": {f(self.server)}, "tool": {f(self.tool)}}}'
        )


@dataclass(kw_only=True)
class ToolResultEvent(Event):
    type: ClassVar[str] = "tool_result"
    turn: int
    id: str
    name: str
    is_error: bool
    content: str
    server: str | None = None
    tool: str | None = None

    def _line(self) -> str:
        if type(self) is not ToolResultEvent:  # as ToolCallEvent's
            return super()._line()
        f = _field
        return (
            f'{{"type": "tool_result", "ts": {f(self.ts)}, "turn": {f(self.turn)}, "id": '
            f'{f(self.id)}, "name": {f(self.name)}, "is_error": {f(self.is_error)}, "content": '
            f'{f(self.content)}, "server": {f(self.server)}, "tool": {f(self.tool)}}}'
        )


@dataclass(kw_only=True)
class HookDecision(Event):
    """One Claude Code hook ran, and what it decided (launcher/hooks/protocol.py `Decision`).

    `event` is the hook event (PreToolUse, ..., SubagentStop); `hook` its command; `tool`
    and `id` the call it decided about (None at the run's end); `reason` what the model or
    the user is told; `message` the hook's `systemMessage`.
    """

    type: ClassVar[str] = "hook"
    event: str = field(metadata=READ_BACK)
    hook: str
    decision: str = field(metadata=READ_BACK)
    source: str | None = field(default=None, metadata=READ_BACK)
    tool: str | None = None  # masked as a tool_call's name is
    id: str | None = None
    reason: str | None = None
    message: str | None = None


@dataclass(kw_only=True)
class BudgetEvent(Event):
    """The run's budget at its start and at each turn's end: its `limits`, what it `used`
    (turns, tokens, cost_usd, elapsed_s; children included) and what is `left`."""

    type: ClassVar[str] = "budget"
    limits: dict[str, Any] = field(default_factory=dict)
    used: dict[str, Any] = field(default_factory=dict)
    left: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class TurnEnd(Event):
    type: ClassVar[str] = "turn_end"
    turn: int


@dataclass(kw_only=True)
class AgentEnd(Event):
    """The agent finished: `completed`, `error`, `max_turns`, `stopped`, or a limit of its
    budget: `max_tokens`, `max_cost`, `timeout`, `idle_timeout`."""

    type: ClassVar[str] = "agent_end"
    status: RunStatus = field(metadata=READ_BACK)  # a learned "completed" must not mask it
    result: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


@dataclass(kw_only=True)
class SessionEnd(Event):
    type: ClassVar[str] = "session_end"
    error: str | None = None


@dataclass(kw_only=True)
class WorktreeEnd(Event):
    """An isolated run's worktree once its session ended (it comes after `session_end`):
    kept with its changes on `branch` (`diffstat` against `base`), or removed (`path`
    None) because the run changed nothing."""

    type: ClassVar[str] = "worktree"
    branch: str
    path: str | None
    base: str
    changed: bool
    diffstat: str = ""
    error: str | None = None


EventSink = Callable[[Event], Awaitable[None]]
"""Where a session sends its events; sinks must not raise."""


class EventBus:
    """Fan-out of events to subscribers, in subscription order; a sink that takes only some
    event types is not even called for the others (each type's sinks found once)."""

    def __init__(self) -> None:
        self._sinks: tuple[tuple[EventSink, tuple[type[Event], ...] | None], ...] = ()
        self._routes: dict[type[Event], tuple[EventSink, ...]] = {}

    def subscribe(self, sink: EventSink, only: tuple[type[Event], ...] | None = None) -> None:
        """`sink` gets every event from now on, or those of the types `only` names."""
        # A new tuple: an emit under way goes on over the sinks it started with.
        self._sinks = (*self._sinks, (sink, only))
        self._routes = {}

    async def emit(self, event: Event) -> None:
        kind = type(event)
        sinks = self._routes.get(kind)
        if sinks is None:
            sinks = tuple(s for s, only in self._sinks if only is None or issubclass(kind, only))
            self._routes[kind] = sinks
        for sink in sinks:
            await sink(event)


def jsonl_sink(out: TextIO) -> EventSink:
    """Write each event as one JSON line to `out` (stdout, a pipe), flushed at once.

    A reader that went away (closed pipe, hung-up terminal) must not stop the session
    from closing its servers, so write errors are dropped.
    """

    async def sink(event: Event) -> None:
        with contextlib.suppress(OSError, ValueError):
            out.write(event.to_json() + "\n")
            out.flush()

    return sink


def jsonl_file_sink(path: Path) -> EventSink:
    """Append each event as one JSON line to `path` (a session's `events.jsonl`, 0600)."""
    return _JsonlFile(path)


class _JsonlFile:
    """An events.jsonl writer: each event one write (O_APPEND, so concurrent lines stay
    whole); the file stays open from the first event to `session_end` (opening and closing
    it for every event cost a tool call a tenth of its client time), and opens again for an
    event after that."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    async def __call__(self, event: Event) -> None:
        try:  # not contextlib.suppress: no context manager made for every event
            if self._fd is None:
                from launcher.state import private_dir, private_opener

                if not self.path.parent.exists():
                    private_dir(self.path.parent)
                flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
                self._fd = private_opener(str(self.path), flags)
            os.write(self._fd, (event.to_json() + "\n").encode())
        except OSError:
            pass  # a full disk or a removed directory must not stop the session
        if isinstance(event, SessionEnd) and self._fd is not None:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                os.close(fd)
