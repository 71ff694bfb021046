"""Steering lands at the next turn boundary; a resumed agent keeps its history and scope.

Runs a real Session with a real stub server; the model is the scripted model, wrapped
only to record the messages each turn was given.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from launcher.agent import AgentLoop
from launcher.config.types import AgentSpec, Selector, ServerSpec
from launcher.events import Event, EventBus, TurnStart
from launcher.models.base import Message, ModelRequest, ModelResponse
from launcher.models.scripted import ScriptedModel, load_script
from launcher.run_plan import RunPlan
from launcher.session import Session
from tests.e2e.spawn_support import call_log

SCRIPT = """
steps:
  - sleep: 1
    call: [{tool: lazy__echo, args: {text: first}}]
  - say: first answer
  - call:
      - {tool: lazy__early, args: {}}
      - {tool: lazy__echo, args: {text: resumed}}
  - say: second answer
"""


class Recording:
    """The scripted model, plus a copy of the messages each turn saw."""

    def __init__(self, inner: ScriptedModel) -> None:
        self.inner = inner
        self.spec = inner.spec
        self.seen: list[list[Message]] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.seen.append(list(request.messages))
        return await self.inner.complete(request)


@pytest.mark.anyio
async def test_steer_arrives_next_turn_and_resume_keeps_history_and_scope(tmp_path: Path) -> None:
    log = tmp_path / "calls"
    script = tmp_path / "s.yaml"
    script.write_text(SCRIPT)
    server = ServerSpec(
        name="lazy",
        command=sys.executable,
        args=("-m", "mcp_servers.lazy", "--at", "0:early", "--call-log", str(log)),
    )
    agent = AgentSpec(
        name="steered",
        tools=(Selector(kind="ext", server="lazy", tool="echo", raw="ext:lazy/echo"),),
        prompt="Be brief.",
    )
    bus = EventBus()
    offered: list[list[str]] = []
    loops: list[AgentLoop] = []

    async def record(event: Event) -> None:
        if isinstance(event, TurnStart):
            offered.append(list(event.tools))
            if event.turn == 1:
                # Steer during turn 1: after it started, before its model (1 s think) answers.
                loops[0].steer("Also mention the steering.")

    bus.subscribe(record)
    plan = RunPlan(agent, {"lazy": server}, workspace=tmp_path, state_home=tmp_path / "state")
    session = Session(plan, bus=bus)
    model = Recording(ScriptedModel(load_script(script)))

    async def body(s: Session) -> tuple[str, str]:
        loop = AgentLoop(s, model, prompt=agent.prompt)
        loops.append(loop)
        first = await loop.run("Start.")
        second = await loop.run("Follow up.")
        return first.status + ":" + first.result, second.status + ":" + second.result

    with anyio.fail_after(60):
        first, second = await session.run(body)

    assert first == "completed:first answer"
    assert second == "completed:second answer"
    # Turn 2 saw the steering message right after turn 1's tool result, not before.
    turn2 = model.seen[1]
    assert [m.role for m in turn2] == ["user", "assistant", "tool", "user"]
    assert turn2[-1].content == "Also mention the steering."
    assert "Also mention the steering." not in [m.content for m in model.seen[0]]
    # The resumed run continues the same conversation.
    turn3 = model.seen[2]
    assert turn3[: len(turn2)] == turn2
    assert turn3[-1].content == "Follow up."
    # ...under the same scope: the muted tool is neither offered nor executed.
    assert all(tools == ["lazy__echo"] for tools in offered)
    assert [c["tool"] for c in call_log(log)] == ["echo", "echo"]
