"""Issue 22.1: one admission decision, evaluated once per registry change.

The composed gate (schema problem, scope, selection, lock pin) runs when the registry
changes, never when a turn reads the active set or a call looks a name up; the entry the
call-time answer returns carries its own caller and argument checker.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from launcher.config.lockfile import NOT_IN_LOCK, AgentPin, lock_reason, pin_entry
from launcher.config.types import AgentSpec, Selector
from launcher.toolset.admission import admission, compose
from launcher.toolset.registry import NOT_REGISTERED, ToolRegistry
from launcher.toolset.scope import NOT_SELECTED, ToolScope
from launcher.toolset.types import ToolDef, ToolEntry, ToolResult

calls: list[tuple[str, dict[str, Any]]] = []


def caller(tool: str):
    async def call(arguments: dict[str, Any]) -> ToolResult:
        calls.append((tool, arguments))
        return ToolResult(f"{tool} ran")

    return call


def ext(server: str, tool: str | None = None) -> Selector:
    return Selector(kind="ext", server=server, tool=tool, raw=f"ext:{server}/{tool}")


def test_the_order_of_reasons_is_problem_scope_selection_pin() -> None:
    scope = ToolScope(AgentSpec(name="t", tools=(ext("s", "picked*"),)))
    pin = AgentPin()
    registry = ToolRegistry(gate=admission(scope, lambda e: lock_reason(pin, e)))
    registry.set_server_tools(
        "s",
        [
            ToolDef("picked_bad", problem="invalid input schema"),
            ToolDef("spawn_subagent"),  # orchestration: the scope's exclusion
            ToolDef("other"),
            ToolDef("picked"),
        ],
        caller,
    )
    reasons = {e.tool: r for e, r in registry.muted()}
    assert reasons == {
        "picked_bad": "invalid input schema",
        "spawn_subagent": "orchestration",
        "other": NOT_SELECTED,  # not `not in lock`: an unselected tool was never pinned
        "picked": NOT_IN_LOCK,
    }
    pin.tools["s__picked"] = pin_entry(registry.server_tools("s")["picked"])
    registry.set_server_tools("s", [ToolDef("picked")], caller)
    assert [e.name for e in registry.entries()] == ["s__picked"]


def test_the_gate_runs_per_change_not_per_turn_or_call() -> None:
    seen: list[str] = []

    def counting(entry: ToolEntry) -> str | None:
        seen.append(entry.name)
        return None

    registry = ToolRegistry(gate=compose(counting))
    registry.set_server_tools("s", [ToolDef("a"), ToolDef("b")], caller)
    assert sorted(seen) == ["s__a", "s__b"]
    seen.clear()
    for _ in range(3):  # turns and calls read the kept verdicts
        assert [e.name for e in registry.entries()] == ["s__a", "s__b"]
        assert isinstance(registry.admit("s__a"), ToolEntry)
        assert registry.admit("s__zz") == NOT_REGISTERED
    assert seen == []
    registry.set_server_tools("s", [ToolDef("a")], caller)
    assert seen == ["s__a"]
    assert registry.admit("s__b") == NOT_REGISTERED


def test_a_gate_that_raises_refuses() -> None:
    def broken(entry: ToolEntry) -> str | None:
        raise RuntimeError("boom")

    registry = ToolRegistry(gate=compose(broken))
    registry.set_server_tools("s", [ToolDef("a")], caller)
    assert registry.entries() == []
    assert str(registry.admit("s__a")).startswith("gate failed")


@pytest.mark.anyio
async def test_the_admitted_entry_checks_its_arguments_before_its_caller() -> None:
    def needs_n(arguments: dict[str, Any]) -> str | None:
        return None if isinstance(arguments.get("n"), int) else "'n' is a required integer"

    registry = ToolRegistry(gate=compose())
    registry.set_server_tools("s", [ToolDef("count", check=needs_n)], caller)
    entry = registry.admit("s__count")
    assert isinstance(entry, ToolEntry)
    calls.clear()
    with anyio.fail_after(5):
        refused = await entry.run({"n": "two"})
        done = await entry.run({"n": 2})
    assert refused.is_error and "Invalid arguments for tool 'count'" in refused.content
    assert done.content == "count ran" and calls == [("count", {"n": 2})]
