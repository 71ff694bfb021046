"""RunHooks: one agent run's Claude Code hooks, at the points Claude Code runs them.

Around each call (`entry.run` hands the entry here): PreToolUse may deny it (`ask` and
`defer` too: nobody is here to answer), rewrite its arguments (read back from Claude Code's
shapes and checked against the schema again: a hook never changes which tool runs, nor
widens what the tool may touch) or stop the agent; PostToolUse / PostToolUseFailure may
add feedback and context, replace the output, or stop the agent. After a turn's calls,
PostToolBatch; at the end, SubagentStop may send the agent on with a reason (at most
`MAX_STOP_BLOCKS` times in a row, as Claude Code). Matching hooks run in parallel; each
one's decision is a `hook` event. Text a hook gives the model is masked like any result.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from launcher.config.hooks_field import (
    POST_TOOL_BATCH,
    POST_TOOL_USE,
    POST_TOOL_USE_FAILURE,
    PRE_TOOL_USE,
    STOP_EVENT,
    TOOL_EVENTS,
    HookSpec,
)
from launcher.events import Event, HookDecision
from launcher.hooks.claude_tools import call_arguments, hook_input, hook_response, output_text
from launcher.hooks.condition import condition_holds
from launcher.hooks.matcher import matches
from launcher.hooks.protocol import UNSET, Decision, Outcome, encode, read_outcome
from launcher.hooks.runner import default_project_dir, run_hook
from launcher.toolset.types import CALL_ID, ToolEntry, ToolResult

if TYPE_CHECKING:
    from launcher.procs.watchdog import Watchdog
    from launcher.secrets import SecretMask

MAX_STOP_BLOCKS = 8
"""Claude Code ends the agent anyway after this many consecutive Stop blocks."""
PERMISSION_MODE = "default"
"""What hooks read as `permission_mode`: a sub-agent here never asks, in no special mode."""

Proceed = Callable[[dict[str, Any]], Awaitable[ToolResult]]
BatchCall = tuple[str, str, dict[str, Any], ToolResult]
"""One call of a turn, for PostToolBatch: (id, tool name, arguments, result)."""


class RunHooks:
    """The hooks of one agent run, and the events they leave."""

    def __init__(
        self,
        specs: Sequence[HookSpec],
        *,
        agent: str,
        session_id: str,
        workspace: Path,
        transcript: Path,
        emit: Callable[[Event], Awaitable[None]],
        mask: SecretMask,
        watchdog: Watchdog | None = None,
    ) -> None:
        self.specs = tuple(specs)
        self.agent = agent
        self.session_id = session_id
        self.workspace = workspace
        self.transcript = transcript
        self.emit = emit
        self.mask = mask
        self.watchdog = watchdog
        self.halted: str | None = None
        """Why a hook stopped the agent (`continue: false`); the loop ends the run."""
        self._stop_blocks = 0
        self._by_event: dict[str, tuple[HookSpec, ...]] = {}
        for spec in self.specs:
            self._by_event[spec.event] = (*self._by_event.get(spec.event, ()), spec)
        self._batch = self.any(POST_TOOL_BATCH)
        self._names: dict[str, tuple[list[HookSpec], ...]] = {}
        self._shown: dict[str, tuple[str, Any]] = {}

    def any(self, event: str) -> bool:
        """Whether any hook runs at `event`."""
        return event in self._by_event

    async def around(
        self, entry: ToolEntry, arguments: dict[str, Any], proceed: Proceed
    ) -> ToolResult:
        """PreToolUse, the call, then PostToolUse or PostToolUseFailure."""
        pre, post, failed = self._named(entry.name)
        if not (pre or post or failed or self._batch):
            return await proceed(arguments)  # no hook can be about this call
        builtin = entry.source == "builtin"
        call_id = CALL_ID.get()
        shown = hook_input(entry.tool, builtin, arguments, self.workspace)
        self._remember(call_id, entry.name, shown)
        notes: list[str] = []
        pre = self._holding(pre, entry.name, shown)
        if pre:
            base = {"tool_name": entry.name, "tool_input": shown, "tool_use_id": call_id}
            outcomes = await self._run(pre, PRE_TOOL_USE, base, tool=entry.name)
            refusal = self._refusal(outcomes)
            if refusal is not None:
                return ToolResult(self._text(refusal, notes_of(outcomes)), is_error=True)
            updates = [o.updated_input for o in outcomes if o.updated_input is not None]
            if len({json.dumps(u, sort_keys=True) for u in updates}) > 1:
                return ToolResult("PreToolUse hooks rewrote this call in two ways; not run.", True)
            if updates:
                arguments = call_arguments(entry.tool, builtin, updates[0], self.workspace)
                if (invalid := entry.invalid(arguments)) is not None:
                    text = (
                        f"A PreToolUse hook's rewrite of this call does not fit: {invalid.content}"
                    )
                    return ToolResult(self.mask.text(text), is_error=True)
                shown = hook_input(entry.tool, builtin, arguments, self.workspace)
                self._remember(call_id, entry.name, shown)
            notes += notes_of(outcomes)
        started = time.monotonic()
        result = await proceed(arguments)
        event = POST_TOOL_USE_FAILURE if result.is_error else POST_TOOL_USE
        post = self._holding(failed if result.is_error else post, entry.name, shown)
        if post:
            base = {"tool_name": entry.name, "tool_input": shown, "tool_use_id": call_id}
            if result.is_error:
                base |= {"error": result.content, "is_interrupt": False}
            else:
                base["tool_response"] = hook_response(
                    entry.tool, builtin, arguments, result.content, self.workspace
                )
            base["duration_ms"] = int((time.monotonic() - started) * 1000)
            outcomes = await self._run(post, event, base, tool=entry.name)
            result = self._after(result, outcomes)
            notes += [f"{event} hook: {o.reason}" for o in outcomes if o.decision is Decision.BLOCK]
            notes += notes_of(outcomes)
        if notes:
            result = dataclasses.replace(result, content=self._text(result.content, notes))
        return result

    async def after_batch(self, calls: Sequence[BatchCall]) -> str | None:
        """PostToolBatch once a turn's calls are done: context for the model, or a stop."""
        specs = [s for s in self._by_event.get(POST_TOOL_BATCH, ()) if s.condition is None]
        if not specs or not calls:
            return None
        tool_calls = []
        for call_id, name, arguments, result in calls:
            shown = self._shown.pop(call_id, (name, arguments))[1]
            tool_calls.append(
                {
                    "tool_name": name,
                    "tool_input": shown,
                    "tool_use_id": call_id,
                    "tool_response": result.content,
                }
            )
        outcomes = await self._run(specs, POST_TOOL_BATCH, {"tool_calls": tool_calls})
        self._halt(outcomes)
        notes = notes_of(outcomes)
        return self.mask.text("\n\n".join(notes)) if notes else None

    async def at_stop(self, last_message: str) -> str | None:
        """SubagentStop: the reason the agent goes on (its next user message), or None."""
        # An `if` is read on tool events only; elsewhere Claude Code never runs its hook.
        specs = [
            spec
            for spec in self._by_event.get(STOP_EVENT, ())
            if spec.condition is None
            and (spec.written_as == "Stop" or matches(spec.matcher, self.agent))
        ]
        if not specs:
            return None
        base = {
            "stop_hook_active": self._stop_blocks > 0,
            "agent_transcript_path": str(self.transcript),
            "last_assistant_message": last_message,
            "background_tasks": [],
            "session_crons": [],
        }
        outcomes = await self._run(specs, STOP_EVENT, base)
        if self._halt(outcomes):
            return None
        reasons = [o.reason for o in outcomes if o.decision is Decision.BLOCK and o.reason]
        reasons += notes_of(outcomes)
        if not reasons or self._stop_blocks >= MAX_STOP_BLOCKS:
            self._stop_blocks = 0
            return None
        self._stop_blocks += 1
        return self.mask.text("\n\n".join(reasons))

    # ---- internals ---------------------------------------------------------------------

    def _remember(self, call_id: str, tool: str, shown: Any) -> None:
        """Keep a call's input as hooks saw it, for PostToolBatch (only when one runs)."""
        if self._batch:
            self._shown[call_id] = (tool, shown)

    def _named(self, tool: str) -> tuple[list[HookSpec], ...]:
        """PreToolUse's, PostToolUse's and PostToolUseFailure's hooks whose matcher names
        `tool` (their `if` not yet read); worked out once a tool name."""
        named = self._names.get(tool)
        if named is None:
            named = self._names[tool] = tuple(
                [spec for spec in self._by_event.get(event, ()) if matches(spec.matcher, tool)]
                for event in TOOL_EVENTS
            )
        return named

    def _holding(self, specs: list[HookSpec], tool: str, shown: Any) -> list[HookSpec]:
        """Those of `specs` whose `if` the call (as hooks see it) matches."""
        return [s for s in specs if condition_holds(s.condition, tool, shown, self._project(s))]

    def _project(self, spec: HookSpec) -> Path:
        return spec.project_dir or default_project_dir(self.workspace)

    async def _run(
        self, specs: Sequence[HookSpec], event: str, fields: dict[str, Any], tool: str | None = None
    ) -> list[Outcome]:
        """Run `specs` in parallel on one payload; their events, in config order."""
        payload = {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript),
            "cwd": str(self.workspace),
            "permission_mode": PERMISSION_MODE,
            "hook_event_name": event,
            "agent_id": self.session_id,
            "agent_type": self.agent,
            **fields,
        }
        stdin = encode(payload)
        outcomes: list[Outcome] = [Outcome()] * len(specs)

        async def one(index: int, spec: HookSpec) -> None:
            run = await run_hook(
                spec,
                stdin,
                cwd=self.workspace,
                project_dir=self._project(spec),
                watchdog=self.watchdog,
            )
            outcomes[index] = read_outcome(event, run, spec.timeout)

        async with anyio.create_task_group() as tg:
            for index, spec in enumerate(specs):
                tg.start_soon(one, index, spec)
        call_id = CALL_ID.get() if event in TOOL_EVENTS else None
        for spec, outcome in zip(specs, outcomes, strict=True):
            await self.emit(
                HookDecision(
                    event=event,
                    hook=" ".join((spec.command, *(spec.args or ()))),
                    decision=str(outcome.decision),
                    source=str(spec.source) if spec.source is not None else None,
                    tool=tool,
                    id=call_id,
                    reason=outcome.reason,
                    message=outcome.message,
                )
            )
        return outcomes

    def _refusal(self, outcomes: Sequence[Outcome]) -> str | None:
        """Why PreToolUse's hooks refuse the call (a stop first, then a deny), or None."""
        if self._halt(outcomes):
            return f"A PreToolUse hook stopped the agent: {self.halted}"
        for outcome in outcomes:
            if outcome.decision is Decision.DENY:
                return f"A PreToolUse hook denied this call: {outcome.reason or 'no reason given'}"
        return None

    def _halt(self, outcomes: Sequence[Outcome]) -> bool:
        for outcome in outcomes:
            if outcome.decision is Decision.STOP:
                self.halted = self.halted or self.mask.text(outcome.reason or "a hook stopped it")
                return True
        return False

    def _after(self, result: ToolResult, outcomes: Sequence[Outcome]) -> ToolResult:
        self._halt(outcomes)
        for outcome in outcomes:
            if outcome.updated_output is not UNSET:
                text = output_text(outcome.updated_output)
                if text is not None:
                    result = dataclasses.replace(
                        result, content=self.mask.text(text), structured=None
                    )
        return result

    def _text(self, content: str, notes: Sequence[str]) -> str:
        parts = [content, *(f"[hook] {note}" for note in notes)]
        return self.mask.text("\n\n".join(part for part in parts if part))


def notes_of(outcomes: Sequence[Outcome]) -> list[str]:
    """The hooks' `additionalContext`, in config order."""
    return [outcome.context for outcome in outcomes if outcome.context]
