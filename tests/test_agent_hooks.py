"""The agent loop with a run's hooks: a stop ends the run, a batch's context reaches the
model, a Stop hook's reason is the next message; real hook processes decide."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest

from launcher.agent import AgentLoop
from launcher.config.hooks_field import HookSpec
from launcher.events import Event, UserMessage
from launcher.hooks.run import RunHooks
from launcher.models.base import ModelRequest, ModelResponse, ToolCall
from launcher.secrets import SecretMask
from launcher.toolset.registry import ToolRegistry
from launcher.toolset.types import Offer, ToolEntry, ToolResult


class Host:
    """A session stand-in offering one tool, `Bash`, whose calls it records."""

    def __init__(self) -> None:
        self.registry = ToolRegistry()
        self.events: list[Event] = []
        self.calls: list[dict[str, Any]] = []

        async def call(arguments: dict[str, Any]) -> ToolResult:
            self.calls.append(arguments)
            return ToolResult("ran")

        self.entry = ToolEntry("Bash", "builtin", "bash", "", {"type": "object"}, call)

    def offer(self) -> Offer:
        return Offer.of([self.entry])

    def veto(self, name: str, offered: Collection[str]) -> ToolEntry | str:
        return self.entry if name in offered else "not offered"

    async def emit(self, event: Event) -> None:
        self.events.append(event)


class Script:
    """A model that answers from a list, and keeps every request it was sent."""

    spec = "script:test"

    def __init__(self, *replies: ModelResponse) -> None:
        self.replies = list(replies)
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return self.replies.pop(0) if self.replies else ModelResponse(text="out of replies")


def bash(command: str, call_id: str = "c1") -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCall(call_id, "Bash", {"command": command})])


def run_hooks(host: Host, tmp_path: Path, *specs: HookSpec) -> RunHooks:
    return RunHooks(
        specs,
        agent="guard",
        session_id="S",
        workspace=tmp_path,
        transcript=tmp_path / "t.jsonl",
        emit=host.emit,
        mask=SecretMask(),
    )


@pytest.mark.anyio
async def test_continue_false_ends_the_run_as_stopped_before_the_call(tmp_path: Path) -> None:
    host = Host()
    stop = HookSpec(
        event="PreToolUse", command="""echo '{"continue":false,"stopReason":"frozen"}'"""
    )
    model = Script(bash("make deploy"), ModelResponse(text="never asked"))
    end = await AgentLoop(host, model, hooks=run_hooks(host, tmp_path, stop)).run("go")
    assert (end.status, end.error) == ("stopped", "stopped by a hook: frozen")
    assert host.calls == [] and len(model.requests) == 1


@pytest.mark.anyio
async def test_a_batch_hooks_context_reaches_the_model_next_to_the_last_result(
    tmp_path: Path,
) -> None:
    host = Host()
    context = (
        """echo '{"hookSpecificOutput":{"hookEventName":"PostToolBatch","""
        """"additionalContext":"run pytest before finishing"}}'"""
    )
    model = Script(bash("ls"), ModelResponse(text="done"))
    hooks = run_hooks(host, tmp_path, HookSpec(event="PostToolBatch", command=context))
    end = await AgentLoop(host, model, hooks=hooks).run("go")
    assert end.status == "completed"
    last = model.requests[1].messages[-1]
    assert (last.role, last.content) == ("tool", "ran\n\n[hook] run pytest before finishing")


@pytest.mark.anyio
async def test_a_stop_hooks_reason_is_the_next_user_message(tmp_path: Path) -> None:
    host = Host()
    once = HookSpec(
        event="SubagentStop",
        command="grep -q '\"stop_hook_active\":false' "
        "&& echo 'write the summary' >&2 && exit 2; true",
        written_as="Stop",
    )
    model = Script(ModelResponse(text="done"), ModelResponse(text="summary written"))
    end = await AgentLoop(host, model, hooks=run_hooks(host, tmp_path, once)).run("go")
    assert (end.status, end.result) == ("completed", "summary written")
    steered = [e for e in host.events if isinstance(e, UserMessage) and e.kind == "hook"]
    assert [e.content for e in steered] == ["write the summary"]


@pytest.mark.anyio
async def test_a_resumed_run_is_not_stopped_by_the_last_runs_hook(tmp_path: Path) -> None:
    host = Host()
    hooks = run_hooks(host, tmp_path)
    hooks.halted = "from before"
    end = await AgentLoop(host, Script(ModelResponse(text="hi")), hooks=hooks).run("go on")
    assert end.status == "completed"
