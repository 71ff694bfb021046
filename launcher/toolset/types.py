"""Tool data shared by every room: a tool as announced, its registry entry, a call's result.

A leaf module like `config` and `events`: everyone may import it. Naming is in naming.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from launcher.events import ToolNames


@dataclass
class ToolResult:
    """What a tool call returned; `is_error` results are shown to the model as errors."""

    content: str
    is_error: bool = False
    structured: dict[str, Any] | None = None


ToolCaller = Callable[[dict[str, Any]], Awaitable[ToolResult]]
"""Runs one call of a tool with its arguments. Must not raise: failures are results."""

ArgumentCheck = Callable[[dict[str, Any]], str | None]
"""Why a call's arguments do not fit the tool's input schema, or None when they do."""

CALL_ID: ContextVar[str] = ContextVar("subagent_call_id", default="result")
"""The id of the tool call being run, set in each call's own task by the agent loop:
a caller that keeps an oversized result names its file after it."""


@dataclass(frozen=True)
class ToolDef:
    """A tool as its source announced it: original name, description, input schema.

    `problem` says why the tool can never be offered (e.g. an invalid input schema);
    `check` is the argument checker its source compiled from the schema, if any.
    """

    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    problem: str | None = None
    check: ArgumentCheck | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ToolEntry:
    """A registered tool: exposed name, where it came from, and how to call it.

    `source` is `builtin`, `memory`, or the server name; `server` is the server name
    or None for built-in and memory tools. `problem` and `check` come from the ToolDef.
    The entry the registry admits is the one that runs: `run` checks, then calls.
    """

    name: str
    source: str
    tool: str
    description: str
    input_schema: dict[str, Any]
    call: ToolCaller = field(compare=False, repr=False)
    problem: str | None = None
    check: ArgumentCheck | None = field(default=None, compare=False, repr=False)

    @property
    def server(self) -> str | None:
        return None if self.source in ("builtin", "memory") else self.source

    async def run(self, arguments: dict[str, Any], guard: CallGuard | None = None) -> ToolResult:
        """Check the arguments against the schema, then call; never raises for the check.

        A `guard` (the run's hooks) decides about this call around it: the arguments it
        calls with are checked again, so a rewrite never skips the schema.
        """
        invalid = self.invalid(arguments)
        if invalid is not None:
            return invalid
        if guard is None:
            return await self.call(arguments)

        async def proceed(given: dict[str, Any]) -> ToolResult:
            if given is not arguments and (problem := self.invalid(given)) is not None:
                return problem
            return await self.call(given)

        return await guard.around(self, arguments, proceed)

    def invalid(self, arguments: dict[str, Any]) -> ToolResult | None:
        """The error result for arguments that do not fit the input schema, else None."""
        problem = self.check(arguments) if self.check is not None else None
        if problem is None:
            return None
        # Checked here, not left to the server: many never validate and fail obscurely.
        return ToolResult(f"Invalid arguments for tool '{self.tool}': {problem}", is_error=True)


class CallGuard(Protocol):
    """Decides about one call around it (Claude Code's hooks, launcher/hooks/run.py):
    deny it, rewrite its arguments, call `proceed`, add to or replace its result."""

    async def around(
        self,
        entry: ToolEntry,
        arguments: dict[str, Any],
        proceed: Callable[[dict[str, Any]], Awaitable[ToolResult]],
    ) -> ToolResult: ...


@dataclass(frozen=True, eq=False)
class Offer:
    """The tools a turn offers the model, made once per change of what is offered and shared
    by every turn until the next: a turn with no change does no work per tool.

    `defs` is what the provider receives; `names` what `turn_start` lists; `by_name` each
    offered name's entry (the veto's "offered this turn" and the events' server and tool);
    `deferred` counts the in-scope tools left to `tool_search` (tools on demand).
    """

    entries: tuple[ToolEntry, ...] = ()
    defs: tuple[ToolDef, ...] = ()
    names: ToolNames = field(default_factory=ToolNames)
    by_name: Mapping[str, ToolEntry] = field(default_factory=lambda: MappingProxyType({}))
    deferred: int = 0

    @classmethod
    def of(cls, entries: Iterable[ToolEntry], *, deferred: int = 0) -> Offer:
        """The offer of `entries`, in the order given."""
        listed = tuple(entries)
        return cls(
            entries=listed,
            defs=tuple(ToolDef(e.name, e.description, e.input_schema) for e in listed),
            names=ToolNames(e.name for e in listed),
            by_name=MappingProxyType({e.name: e for e in listed}),
            deferred=deferred,
        )


NO_OFFER = Offer()
"""What a turn offers when it offers nothing (the wrap-up turn at the turn limit)."""
