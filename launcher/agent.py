"""AgentLoop: turns over a live, scoped tool set, with the call-time veto.

Each turn offers the model a snapshot of the active set (the session's `Offer`, made
once per change: a turn with no change does no work per tool); every call is checked
against the scope as it is *now* before it runs, so a tool that was never offered,
or left scope mid-turn, never reaches its server.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from launcher.budget import CURRENT, Budget, Limits, RunUsage
from launcher.errors import ModelError, StreamStalled, SubagentError
from launcher.events import (
    AgentEnd,
    AgentStart,
    AssistantMessage,
    BudgetEvent,
    Event,
    RunStatus,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnd,
    TurnStart,
    UserMessage,
)
from launcher.models.base import Message, Model, ModelRequest, ToolCall
from launcher.models.prices import Pricer, spend_of
from launcher.telemetry import traces
from launcher.toolset.types import CALL_ID, NO_OFFER, CallGuard, Offer, ToolEntry, ToolResult

if TYPE_CHECKING:
    from launcher.toolset.registry import ToolRegistry

WRAP_UP_PROMPT = (
    "You have reached the turn limit. Do not call any more tools: "
    "reply now with your final answer, summarising what you found and what is left undone."
)
BUDGET_WRAP_UP_PROMPT = (
    "You have reached your {limit} budget. Do not call any more tools: "
    "reply now with your final answer, summarising what you found and what is left undone."
)
_LIMIT_WORDS = {RunStatus.MAX_TOKENS: "token", RunStatus.MAX_COST: "cost"}


class ToolHost(Protocol):
    """What the loop needs from a session: the next turn's offer, the veto, the registry."""

    def offer(self) -> Offer: ...

    def veto(self, name: str, offered: Collection[str]) -> ToolEntry | str: ...

    async def emit(self, event: Event) -> None: ...

    @property
    def registry(self) -> ToolRegistry: ...


class LoopHooks(CallGuard, Protocol):
    """The run's hooks (launcher/hooks/run.py): around each call, after a turn's calls,
    and when the agent would stop. `halted` says why a hook stopped the agent."""

    halted: str | None

    async def after_batch(
        self, calls: Sequence[tuple[str, str, dict[str, Any], ToolResult]]
    ) -> str | None: ...

    async def at_stop(self, last_message: str) -> str | None: ...


def not_available(name: str) -> ToolResult:
    """The veto's answer: the same for muted, unselected and unknown tools."""
    return ToolResult(content=f'Tool "{name}" is not available to this sub-agent.', is_error=True)


def system_prompt(base: str, deferred: int = 0) -> str:
    """The agent body; the provider receives the offered tools as tools, so the prompt does
    not repeat them. With tools on demand, one line says how many `tool_search` can load."""
    body = base.strip()
    if not deferred:
        return body
    note = (
        f"{deferred} more tools are available on demand: call `tool_search` with words "
        "describing what you need; the tools it finds are offered from your next turn."
    )
    return f"{body}\n\n{note}" if body else note


class AgentLoop:
    """An LLM tool-calling loop over a session's live tool set."""

    def __init__(
        self,
        host: ToolHost,
        model: Model,
        *,
        prompt: str = "",
        max_turns: int | None = None,
        hooks: LoopHooks | None = None,
        budget: Budget | None = None,
        pricer: Pricer | None = None,
    ) -> None:
        self.host = host
        self.hooks = hooks
        self.model = model
        self.base_prompt = prompt
        self.max_turns = max_turns
        self.budget = budget if budget is not None else Budget(Limits(max_turns=max_turns))
        self.pricer = pricer
        self._waiting_model = False
        self._streamed: list[str] = []
        self.messages: list[Message] = []
        self.usage = RunUsage()
        self.turn = 0
        self.status = RunStatus.QUEUED
        self.result = ""
        self._steering: list[str] = []
        self._stop_scope: anyio.CancelScope | None = None
        self._stop_requested = False
        self._failure: str | None = None

    def steer(self, message: str) -> None:
        """Queue a user message; it is delivered at the next turn boundary."""
        self._steering.append(message)

    def stop(self) -> None:
        """End the run as soon as possible; the status becomes `stopped`."""
        self._stop_requested = True
        if self._stop_scope is not None:
            self._stop_scope.cancel()

    def fail(self, reason: str) -> None:
        """End the run now with status `error` and this reason (a required server died)."""
        self._failure = reason
        if self._stop_scope is not None:
            self._stop_scope.cancel()

    async def run(self, prompt: str) -> AgentEnd:
        """Run to a final answer, the turn limit, an error or a stop. Call again to resume."""
        await self.host.emit(AgentStart(model=self.model.spec))
        await self._user(prompt, "prompt")
        self.status = RunStatus.RUNNING
        turns_this_run = 0
        error: str | None = None
        if self.hooks is not None:
            self.hooks.halted = None
        budget_token = CURRENT.set(self.budget)  # the `subagent` tool charges children here
        await self._report_budget()
        with anyio.CancelScope() as scope:
            self._stop_scope = scope
            self._rearm()
            try:
                while not self._stop_requested and self._failure is None and not self._halted:
                    await self._deliver_steering()
                    limit = self.budget.crossing()
                    wrap_up = limit is not None or (
                        self.max_turns is not None and turns_this_run >= self.max_turns
                    )
                    if wrap_up:
                        words = _LIMIT_WORDS.get(limit) if limit is not None else None
                        ask = BUDGET_WRAP_UP_PROMPT.format(limit=words) if words else WRAP_UP_PROMPT
                        await self._user(ask, "wrap_up")
                    turns_this_run += 1
                    done = await self._turn(offer_tools=not wrap_up)
                    if wrap_up:
                        self.status = limit or RunStatus.MAX_TURNS
                        break
                    if done and not self._steering and not self._halted:
                        # SubagentStop hooks may send the agent on, with their reason.
                        follow = await self.hooks.at_stop(self.result) if self.hooks else None
                        if follow is None:
                            self.status = RunStatus.COMPLETED
                            break
                        await self._user(follow, "hook")
            except StreamStalled as exc:
                self.status, error = RunStatus.IDLE_TIMEOUT, str(exc)
            except SubagentError as exc:
                self.status, error = RunStatus.ERROR, str(exc)
        self._stop_scope = None
        CURRENT.reset(budget_token)
        if self._ran_out(scope):
            self.status, error = self._out_of_time()
            self.result = "".join(self._streamed) or self.result
        elif self._failure is not None:
            self.status, error = RunStatus.ERROR, self._failure
            self._stop_requested = False
        elif self._stop_requested:
            self.status = RunStatus.STOPPED
            self._stop_requested = False  # a later resume runs again
        elif self._halted:
            self.status, error = RunStatus.STOPPED, f"stopped by a hook: {self._halted}"
        end = AgentEnd(
            status=self.status,
            result=self.result,
            usage=self.usage.as_dict(self.budget),
            error=error,
        )
        await self.host.emit(end)
        return end

    def _ran_out(self, scope: anyio.CancelScope) -> bool:
        """Whether the scope's deadline (timeout or idle_timeout) ended the run, not a stop."""
        return scope.cancelled_caught and not self._stop_requested and self._failure is None

    def _out_of_time(self) -> tuple[RunStatus, str]:
        limits = self.budget.limits
        if time.monotonic() >= self.budget.deadline:
            return RunStatus.TIMEOUT, f"timeout: the run took {limits.timeout:g} s"
        return (
            RunStatus.IDLE_TIMEOUT,
            f"idle_timeout: no progress for {limits.idle_timeout:g} s",
        )

    def _rearm(self) -> None:
        """Move the run's deadline: `timeout` from the start, or `idle_timeout` from now,
        whichever comes first. While the model is asked, its own read timeout (the same
        idle time, with the retry rules) watches the stream instead."""
        scope = self._stop_scope
        if scope is None:
            return
        now = time.monotonic()
        end = self.budget.deadline
        idle = self.budget.limits.idle_timeout
        if idle is not None and not self._waiting_model:
            end = min(end, now + idle)
        scope.deadline = math.inf if end == math.inf else anyio.current_time() + (end - now)

    async def _report_budget(self) -> None:
        turns = self.usage.turns
        await self.host.emit(
            BudgetEvent(
                limits=self.budget.limits.as_dict(),
                used=self.budget.used(turns),
                left=self.budget.left(turns),
            )
        )

    @property
    def _halted(self) -> str | None:
        """Why a hook stopped the agent (`continue: false`), if one did."""
        return self.hooks.halted if self.hooks is not None else None

    async def _deliver_steering(self) -> None:
        while self._steering:
            await self._user(self._steering.pop(0), "steer")

    async def _user(self, content: str, kind: str) -> None:
        self.messages.append(Message(role="user", content=content))
        await self.host.emit(UserMessage(turn=self.turn + 1, content=content, kind=kind))

    async def _turn(self, *, offer_tools: bool) -> bool:
        """One model turn and its tool calls; True when the model gave a final answer."""
        self.turn += 1
        self.usage.turns += 1
        turn = self.turn
        offer = self.host.offer() if offer_tools else NO_OFFER
        await self.host.emit(TurnStart(turn=turn, tools=offer.names, deferred=offer.deferred))

        self._streamed = []

        async def on_text(text: str) -> None:
            self._streamed.append(text)
            await self.host.emit(TextDelta(turn=turn, text=text))

        request = ModelRequest(
            system=system_prompt(self.base_prompt, offer.deferred),
            messages=list(self.messages),
            tools=offer.defs,
            on_text=on_text,
            resolve_tool=self.host.registry.resolve,
        )
        self._waiting_model = True
        self._rearm()
        try:
            with traces().chat(self.model.spec) as chat:
                response = await self.model.complete(request)
                chat.reply(request, response)
        except SubagentError:
            raise
        except Exception as exc:
            # A provider bug or a malformed reply must still end the run with agent_end.
            raise ModelError(f"{self.model.spec}: {type(exc).__name__}: {exc}") from exc
        finally:
            self._waiting_model = False
        self._rearm()
        spend = spend_of(response.usage, self.pricer)
        self.budget.charge(spend)
        self.usage.spend.add(spend)
        self._streamed = []
        if response.text:
            self.result = response.text
        calls = response.tool_calls if offer_tools else []
        self.messages.append(
            Message(role="assistant", content=response.text, tool_calls=list(calls))
        )
        await self.host.emit(
            AssistantMessage(
                turn=turn,
                text=response.text,
                tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls],
                usage={
                    **dataclasses.asdict(response.usage),
                    "cost_usd": spend.cost_usd,
                },
            )
        )
        if calls:
            results: list[ToolResult | None] = [None] * len(calls)
            context: str | None = None
            try:
                await self.run_calls(turn, calls, results, offer.by_name)
                if self.hooks is not None:
                    ran = [
                        (c.id, c.name, c.arguments, r)
                        for c, r in zip(calls, results, strict=True)
                        if r
                    ]
                    context = await self.hooks.after_batch(ran)
            finally:
                # Even when a stop cancels the calls, every call gets its answer: a
                # resumed conversation with an unanswered tool call is rejected by APIs.
                for index, (call, result) in enumerate(zip(calls, results, strict=True)):
                    result = result or ToolResult("Stopped before this call finished.", True)
                    if context and index == len(calls) - 1:
                        # PostToolBatch context goes next to the turn's last result.
                        result = ToolResult(
                            f"{result.content}\n\n[hook] {context}", result.is_error
                        )
                    self.messages.append(
                        Message(
                            role="tool",
                            content=result.content,
                            tool_call_id=call.id,
                            name=call.name,
                            is_error=result.is_error,
                        )
                    )
        await self.host.emit(TurnEnd(turn=turn))
        await self._report_budget()
        return not calls

    async def run_calls(
        self,
        turn: int,
        calls: list[ToolCall],
        results: list[ToolResult | None],
        offered: Mapping[str, ToolEntry],
    ) -> None:
        """Run one turn's calls in parallel, filling `results` in call order; `offered`:
        each offered name's entry (its server and original name go in the events)."""

        async def one(index: int, call: ToolCall) -> None:
            CALL_ID.set(call.id)  # this call's own context: names a spilled result's file
            origin = offered.get(call.name)
            server, tool = (origin.server, origin.tool) if origin else (None, None)
            await self.host.emit(
                ToolCallEvent(
                    turn=turn,
                    id=call.id,
                    name=call.name,
                    arguments=call.arguments,
                    server=server,
                    tool=tool,
                )
            )
            with traces().tool(call.id, call.name, server, tool, call.arguments) as traced:
                result = traced.result(await self._execute(call, offered))
            results[index] = result
            self._rearm()  # a tool's result is progress
            await self.host.emit(
                ToolResultEvent(
                    turn=turn,
                    id=call.id,
                    name=call.name,
                    is_error=result.is_error,
                    content=result.content,
                    server=server,
                    tool=tool,
                )
            )

        self.usage.tool_calls += len(calls)
        if len(calls) == 1:
            # Most turns make one call: it runs in this task, without a task group and a
            # task started for it; its CALL_ID is undone after it, as if it had its own.
            token = CALL_ID.set(calls[0].id)
            try:
                await one(0, calls[0])
            finally:
                CALL_ID.reset(token)
            return
        async with anyio.create_task_group() as tg:
            for index, call in enumerate(calls):
                tg.start_soon(one, index, call)

    async def _execute(self, call: ToolCall, offered: Collection[str]) -> ToolResult:
        """The call-time veto, then the entry the veto answered with runs (no second lookup)."""
        if self._stop_requested or self._halted:
            return ToolResult("The sub-agent was stopped; this call was not run.", True)
        entry = self.host.veto(call.name, offered)
        if isinstance(entry, str):
            traces().vetoed(entry)
            return not_available(call.name)
        if not isinstance(call.arguments, dict):
            return ToolResult(
                content=f"Arguments for {call.name} must be a JSON object.", is_error=True
            )
        try:
            return await entry.run(call.arguments, self.hooks)
        except Exception as exc:  # a caller must not raise; if one does, the model still answers
            return ToolResult(
                content=f"{call.name} failed: {type(exc).__name__}: {exc}", is_error=True
            )
