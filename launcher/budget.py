"""A run's budget: its limits, resolved once, and a value charged after each model reply.

Limits come from the agent file and the request (a CLI option, a `spawn_subagent`
argument, a batch task field): the most specific wins, but never above the agent file's
value. A nested sub-agent's limits are clamped to what its parent has left. `Budget`
decides "stop now, and why" in one place; the loop only asks it.
"""

from __future__ import annotations

import contextvars
import dataclasses
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from launcher.config.types import AgentSpec
from launcher.events import RunStatus

DEFAULT_IDLE_TIMEOUT_S = 600.0
"""No progress (model bytes, a tool result) for this long ends a run: nothing waits forever."""

LIMIT_FIELDS: tuple[str, ...] = (
    "max_turns",
    "max_tokens",
    "max_cost_usd",
    "timeout",
    "idle_timeout",
)
"""The limits, in the order `agents --json` and the `budget` event show them."""

_OPTION = {
    "max_turns": "--max-turns",
    "max_tokens": "--max-tokens",
    "max_cost_usd": "--max-cost",
    "timeout": "--timeout",
    "idle_timeout": "--idle-timeout",
}
"""Each limit's CLI option, for the warning that lowers a request to the agent's value."""


@dataclass(frozen=True)
class Limits:
    """The five limits of a run; None = no limit (idle_timeout: the default applies)."""

    max_turns: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    timeout: float | None = None
    idle_timeout: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in LIMIT_FIELDS}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> Limits:
        """Limits from JSON (a job, a task line): unknown keys and nulls are left out."""
        if not data:
            return cls()
        return cls(**{k: data[k] for k in LIMIT_FIELDS if data.get(k) is not None})

    def any(self) -> bool:
        return any(getattr(self, name) is not None for name in LIMIT_FIELDS)

    def over(self, request: Limits) -> Limits:
        """`request`'s values where it sets them, else these (a batch task over the batch)."""
        return Limits(
            **{
                name: getattr(request, name)
                if getattr(request, name) is not None
                else getattr(self, name)
                for name in LIMIT_FIELDS
            }
        )

    def clamped(self, ceiling: Limits) -> Limits:
        """Each limit no higher than `ceiling`'s (a parent's remainder): the smaller wins."""
        return Limits(
            **{name: _smaller(getattr(self, name), getattr(ceiling, name)) for name in LIMIT_FIELDS}
        )


def limits_of(agent: AgentSpec) -> Limits:
    """The limits an agent file sets (the ceiling every request is held under)."""
    return Limits(**{name: getattr(agent, name) for name in LIMIT_FIELDS})


def _smaller(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def resolve_limits(
    agent: Limits, request: Limits, *, who: str = "agent"
) -> tuple[Limits, list[str]]:
    """The run's limits: `request`'s where set, else the agent file's; a request above the
    agent's value is lowered to it, with a warning (the file is the operator's word)."""
    warnings: list[str] = []
    values: dict[str, Any] = {}
    for name in LIMIT_FIELDS:
        own, asked = getattr(agent, name), getattr(request, name)
        if asked is not None and not math.isfinite(asked):
            asked = None  # NaN compares false with everything: it would lift the ceiling
        if asked is None:
            values[name] = own
        elif own is not None and not asked <= own:
            warnings.append(
                f"{_OPTION[name]} {asked:g} is above {who}'s {name} {own:g}: lowered to {own:g}"
            )
            values[name] = own
        else:
            values[name] = asked
    if values["idle_timeout"] is None:
        values["idle_timeout"] = DEFAULT_IDLE_TIMEOUT_S
    return Limits(**values), warnings


@dataclass
class Spend:
    """Tokens and money spent: a reply's, a run's own, or its children's."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = 0.0
    """None once any part was priced unknown."""

    @property
    def tokens(self) -> int:
        """Tokens billed, each cached token once (input counts cache reads and writes)."""
        return self.input_tokens + self.output_tokens

    def add(self, other: Spend) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        if self.cost_usd is None or other.cost_usd is None:
            self.cost_usd = None
        else:
            self.cost_usd += other.cost_usd

    def as_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["cost_usd"] = None if self.cost_usd is None else round(self.cost_usd, 8)
        return data

    @classmethod
    def from_usage(cls, usage: Mapping[str, Any] | None) -> Spend:
        """A `usage` dict's total (its `total` when it has one: children included)."""
        data = usage or {}
        total = data.get("total") if isinstance(data.get("total"), Mapping) else data
        assert isinstance(total, Mapping)
        cost = total.get("cost_usd", 0.0)
        return cls(
            input_tokens=int(total.get("input_tokens") or 0),
            output_tokens=int(total.get("output_tokens") or 0),
            cache_read_tokens=int(total.get("cache_read_tokens") or 0),
            cache_write_tokens=int(total.get("cache_write_tokens") or 0),
            cost_usd=None if cost is None else float(cost),
        )


@dataclass
class Budget:
    """A run's limits and what it has used; `charge` after each reply, ask `crossing`."""

    limits: Limits
    started: float = field(default_factory=time.monotonic)
    own: Spend = field(default_factory=Spend)
    children: Spend = field(default_factory=Spend)
    child_calls: int = 0
    child_turns: int = 0
    last: Spend = field(default_factory=Spend)
    """The last reply's spend: the next one is judged to cost about as much."""

    def charge(self, reply: Spend) -> None:
        """Count one model reply of this agent."""
        self.own.add(reply)
        self.last = reply

    def charge_child(self, usage: Mapping[str, Any] | None) -> None:
        """Count a finished child's whole usage (its `total`) against this run."""
        self.children.add(Spend.from_usage(usage))
        total = (usage or {}).get("total") or usage or {}
        self.child_calls += int(total.get("tool_calls") or 0)
        self.child_turns += int(total.get("turns") or 0)

    @property
    def tokens(self) -> int:
        return self.own.tokens + self.children.tokens

    @property
    def cost(self) -> float:
        return (self.own.cost_usd or 0.0) + (self.children.cost_usd or 0.0)

    @property
    def deadline(self) -> float:
        """time.monotonic() at which `timeout` ends the run (inf: none)."""
        timeout = self.limits.timeout
        return math.inf if timeout is None else self.started + timeout

    def crossing(self) -> RunStatus | None:
        """The limit the next reply would cross (judged from the last reply), if any."""
        lim = self.limits
        if lim.max_tokens is not None and self.tokens + self.last.tokens > lim.max_tokens:
            return RunStatus.MAX_TOKENS
        last_cost = self.last.cost_usd or 0.0
        if lim.max_cost_usd is not None and self.cost + last_cost > lim.max_cost_usd:
            return RunStatus.MAX_COST
        return None

    def used(self, turns: int) -> dict[str, Any]:
        return {
            "turns": turns,
            "tokens": self.tokens,
            "cost_usd": round(self.cost, 8),
            "elapsed_s": round(time.monotonic() - self.started, 3),
        }

    def left(self, turns: int) -> dict[str, Any]:
        """What is left of each limit (None: unlimited)."""
        lim = self.limits
        return {
            "turns": None if lim.max_turns is None else max(0, lim.max_turns - turns),
            "tokens": None if lim.max_tokens is None else max(0, lim.max_tokens - self.tokens),
            "cost_usd": None
            if lim.max_cost_usd is None
            else round(max(0.0, lim.max_cost_usd - self.cost), 8),
            "timeout_s": None
            if lim.timeout is None
            else round(max(0.0, self.deadline - time.monotonic()), 3),
        }

    def remainder(self) -> Limits:
        """A child's ceiling: what this run has left (turns and idle time are the child's)."""
        left = self.left(0)
        return Limits(
            max_tokens=left["tokens"],
            max_cost_usd=left["cost_usd"],
            timeout=left["timeout_s"],
        )


@dataclass
class RunUsage:
    """Totals for one agent run (and its resumes): its own; `total` adds its children's."""

    spend: Spend = field(default_factory=Spend)
    tool_calls: int = 0
    turns: int = 0
    started: float = field(default_factory=time.monotonic)

    @property
    def input_tokens(self) -> int:
        return self.spend.input_tokens

    @property
    def output_tokens(self) -> int:
        return self.spend.output_tokens

    def as_dict(self, budget: Budget | None = None) -> dict[str, Any]:
        own = {**self.spend.as_dict(), "tool_calls": self.tool_calls, "turns": self.turns}
        total = dict(own)
        if budget is not None:
            children = Spend(**dataclasses.asdict(self.spend))
            children.add(budget.children)
            total = {
                **children.as_dict(),
                "tool_calls": self.tool_calls + budget.child_calls,
                "turns": self.turns + budget.child_turns,
            }
        return {
            **own,
            "duration_s": round(time.monotonic() - self.started, 3),
            "total": total,
        }


CURRENT: contextvars.ContextVar[Budget | None] = contextvars.ContextVar(
    "subagent_budget", default=None
)
"""The budget of the run whose tool call is running: the `subagent` tool clamps its child
to it and charges the child's usage to it."""
