"""A turn's offer is made once per change: a turn with no change does no work per tool.

Counted, not timed: the admission gate's calls, the offers built, the definitions measured;
and the model gets the very same tool list object turn after turn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

import launcher.toolset.ondemand as ondemand
from launcher.agent import AgentLoop, system_prompt
from launcher.config.types import AgentSpec
from launcher.events import Event, TurnStart
from launcher.models.base import ModelRequest, ModelResponse, ToolCall
from launcher.run_plan import RunPlan
from launcher.session import Session
from launcher.toolset.registry import ToolRegistry
from launcher.toolset.scope import ToolScope
from launcher.toolset.types import Offer, ToolCaller, ToolDef, ToolEntry, ToolResult

TOOLS = 1000
TURNS = 30


def defs(count: int) -> list[ToolDef]:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    return [ToolDef(f"t{i:04d}", f"Filler tool number {i}.", schema) for i in range(count)]


def make_caller(name: str) -> ToolCaller:
    async def call(arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(f"{name} ok")

    return call


class Counter:
    """Counts calls of the function it wraps."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.wrapped(*args, **kwargs)


def test_offer_is_made_once_per_change_and_reused_until_the_next() -> None:
    gate = Counter(lambda entry: None)
    registry = ToolRegistry(gate=gate)
    registry.set_server_tools("big", defs(TOOLS), make_caller)
    assert gate.calls == TOOLS  # once per entry, at the change
    first = registry.offer()
    assert [registry.offer() for _ in range(TURNS)] == [first] * TURNS
    assert all(registry.offer() is first for _ in range(TURNS))
    assert gate.calls == TOOLS  # no turn asked the gate again
    registry.set_server_tools("big", defs(TOOLS), make_caller)  # the same list again
    assert registry.offer() is first and gate.calls == TOOLS
    registry.set_server_tools("big", defs(TOOLS + 1), make_caller)  # one tool more
    assert gate.calls == 2 * TOOLS + 1
    second = registry.offer()
    assert second is not first and len(second.defs) == TOOLS + 1


class LoopModel:
    """Calls one tool a turn for TURNS turns; keeps each request's tool list."""

    spec = "loop:model"

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.tools: list[object] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.tools.append(request.tools)
        if len(self.tools) > TURNS:
            return ModelResponse(text="done")
        return ModelResponse(tool_calls=[ToolCall(f"c{len(self.tools)}", self.tool, {})])


async def run_turns(session: Session, model: LoopModel) -> list[TurnStart]:
    starts: list[TurnStart] = []

    async def sink(event: Event) -> None:
        if isinstance(event, TurnStart):
            starts.append(event)

    session.bus.subscribe(sink)

    async def body(s: Session) -> str:
        s.registry.set_server_tools("big", defs(TOOLS), make_caller)
        end = await AgentLoop(s, model).run("go")
        return end.status

    with anyio.fail_after(30):
        assert await session.run(body) == "completed"
    return starts


@pytest.mark.anyio
async def test_turns_with_no_change_ask_no_gate_and_build_no_offer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Counter(ToolScope.gate)
    monkeypatch.setattr(ToolScope, "gate", lambda self, entry: gate(self, entry))
    built = Counter(Offer.of.__func__)  # type: ignore[attr-defined]
    monkeypatch.setattr(Offer, "of", classmethod(lambda cls, *a, **k: built(cls, *a, **k)))
    # A secret in the environment: every event is masked, the turn's names included.
    monkeypatch.setenv("BENCH_API_KEY", "sk-test-0123456789abcdef")
    agent = AgentSpec(name="t", tool_search="off")
    session = Session(RunPlan(agent, {}, workspace=tmp_path, state_home=tmp_path / "state"))
    model = LoopModel("big__t0007")
    starts = await run_turns(session, model)
    assert len(starts) == TURNS + 1
    # Built-ins at registration, then the 1 000 tools' change: nothing a turn.
    assert gate.calls <= 2 * (TOOLS + 20)
    assert built.calls == 1
    assert all(tools is model.tools[0] for tools in model.tools)
    assert len(model.tools[0]) > TOOLS  # type: ignore[arg-type]
    assert all(start.tools is starts[0].tools for start in starts)  # masked once, not a turn


@pytest.mark.anyio
async def test_tools_on_demand_measure_definitions_once_per_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    measured = Counter(ondemand.definition_bytes)
    monkeypatch.setattr(ondemand, "definition_bytes", measured)
    agent = AgentSpec(name="t", tool_search=1000)
    session = Session(RunPlan(agent, {}, workspace=tmp_path, state_home=tmp_path / "state"))
    model = LoopModel("tool_search")
    starts = await run_turns(session, model)
    assert measured.calls == TOOLS  # each definition once, whatever the number of turns
    assert [s.deferred for s in starts[:2]] == [TOOLS, TOOLS]
    assert starts[-1].tools == starts[1].tools  # a search for nothing loads nothing
    assert all(tools is model.tools[0] for tools in model.tools)


def test_system_prompt_does_not_repeat_the_tools() -> None:
    assert system_prompt("You help.") == "You help."
    assert "tool_search" in system_prompt("You help.", deferred=12)
    assert "12 more tools" in system_prompt("", deferred=12)


def test_offer_of_keeps_entries_in_order_with_their_definitions() -> None:
    async def call(_: dict[str, Any]) -> ToolResult:
        return ToolResult("")

    entries = [ToolEntry(n, "s", n, f"{n} tool", {"type": "object"}, call) for n in ("b", "a")]
    offer = Offer.of(entries)
    assert offer.names == ("b", "a")
    assert [d.name for d in offer.defs] == ["b", "a"]
    assert offer.by_name["a"] is entries[1]


def test_turn_start_json_is_the_same_with_cached_names() -> None:
    import json

    from launcher.events import ToolNames

    event = TurnStart(turn=2, tools=ToolNames(("a", "b\u00e9")), deferred=3)
    plain = TurnStart(turn=2, tools=["a", "b\u00e9"], deferred=3, ts=event.ts)
    assert json.loads(event.to_json()) == json.loads(plain.to_json()) == plain.to_dict()
    assert list(json.loads(event.to_json())) == ["type", "ts", "turn", "tools", "deferred"]
