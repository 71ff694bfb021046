"""ToolRegistry: diffs, stable names, collisions, gate, notifications, resolve."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from launcher.config.types import BUILTIN_TOOLS, MEMORY_TOOLS
from launcher.toolset.naming import MAX_NAME_LEN, name_hash
from launcher.toolset.registry import RegistryChange, ToolRegistry
from launcher.toolset.types import ToolCaller, ToolDef, ToolEntry, ToolResult


def caller_for(tag: str) -> ToolCaller:
    async def call(args: dict[str, Any]) -> ToolResult:
        return ToolResult(f"{tag}:{args}")

    return call


def make_caller(name: str) -> ToolCaller:
    return caller_for(name)


def local(name: str, source: str = "builtin") -> ToolEntry:
    return ToolEntry(name, source, name, f"{name} tool", {"type": "object"}, caller_for(name))


def defs(*names: str) -> list[ToolDef]:
    return [ToolDef(name, f"{name} tool") for name in names]


def names(registry: ToolRegistry) -> list[str]:
    return [entry.name for entry in registry.entries()]


def test_first_list_reports_every_tool_added() -> None:
    registry = ToolRegistry()
    change = registry.set_server_tools("s", defs("a", "b"), make_caller)
    assert change == RegistryChange("s", added=["s__a", "s__b"])
    assert names(registry) == ["s__a", "s__b"]


def test_relist_diffs_added_removed_and_changed() -> None:
    registry = ToolRegistry()
    registry.set_server_tools("s", defs("a", "b", "c"), make_caller)
    relist = [ToolDef("a", "a tool"), ToolDef("b", "new text"), ToolDef("d", "d tool")]
    change = registry.set_server_tools("s", relist, make_caller)
    assert change == RegistryChange("s", added=["s__d"], removed=["s__c"], changed=["s__b"])
    assert names(registry) == ["s__a", "s__b", "s__d"]
    assert registry.get("s__b") is not None
    assert registry.get("s__b").description == "new text"  # type: ignore[union-attr]


def test_changed_schema_counts_as_changed() -> None:
    registry = ToolRegistry()
    registry.set_server_tools("s", defs("a"), make_caller)
    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    change = registry.set_server_tools("s", [ToolDef("a", "a tool", schema)], make_caller)
    assert change.changed == ["s__a"]


def test_unchanged_relist_keeps_entries_and_is_not_a_change() -> None:
    registry = ToolRegistry()
    registry.set_server_tools("s", defs("a"), make_caller)
    before = registry.get("s__a")
    change = registry.set_server_tools("s", defs("a"), make_caller)
    assert change.empty
    assert registry.get("s__a") is before


def test_tool_order_follows_the_latest_list() -> None:
    registry = ToolRegistry()
    registry.set_server_tools("s", defs("a", "b"), make_caller)
    registry.set_server_tools("s", defs("b", "a"), make_caller)
    assert names(registry) == ["s__b", "s__a"]


def test_duplicate_tool_in_one_list_keeps_the_first() -> None:
    registry = ToolRegistry()
    tools = [ToolDef("a", "first"), ToolDef("a", "second")]
    change = registry.set_server_tools("s", tools, make_caller)
    assert change.added == ["s__a"]
    assert registry.get("s__a").description == "first"  # type: ignore[union-attr]


def test_colliding_tools_get_distinct_names_that_survive_relists() -> None:
    registry = ToolRegistry()
    registry.set_server_tools("s", defs("a.b", "a_b"), make_caller)
    hashed = f"s__a_b_{name_hash('s', 'a_b')}"
    assert names(registry) == ["s__a_b", hashed]
    # The first holder leaving must not rename the other one.
    registry.set_server_tools("s", defs("a_b"), make_caller)
    assert names(registry) == [hashed]
    registry.set_server_tools("s", defs("a_b", "a.b", "c"), make_caller)
    assert registry.server_tools("s")["a_b"].name == hashed


def test_tool_that_leaves_and_returns_keeps_its_name() -> None:
    registry = ToolRegistry()
    registry.set_server_tools("s", defs("a.b", "a_b"), make_caller)
    second = registry.server_tools("s")["a_b"].name
    registry.remove_server("s")
    registry.set_server_tools("s", defs("a_b"), make_caller)
    assert registry.server_tools("s")["a_b"].name == second


def test_collision_across_servers_gets_a_hash() -> None:
    registry = ToolRegistry()
    registry.set_server_tools("a.b", defs("t"), make_caller)
    registry.set_server_tools("a_b", defs("t"), make_caller)
    assert names(registry) == ["a_b__t", f"a_b__t_{name_hash('a_b', 't')}"]


def test_over_long_exposed_name_is_at_most_64_chars() -> None:
    registry = ToolRegistry()
    registry.set_server_tools("server", defs("t" * 80, "t" * 80 + "x"), make_caller)
    got = names(registry)
    assert len(set(got)) == 2
    assert all(len(name) <= MAX_NAME_LEN for name in got)


def test_builtin_is_never_shadowed_by_a_server_tool() -> None:
    registry = ToolRegistry()
    registry.set_server_tools("s", defs("t"), make_caller)
    # A local tool arriving later under that name wins it; the server tool moves.
    change = registry.add_local([local("s__t", "memory")])
    assert change.added == ["s__t"]
    assert registry.get("s__t").source == "memory"  # type: ignore[union-attr]
    moved = registry.server_tools("s")["t"].name
    assert moved != "s__t"
    assert registry.get(moved) is not None
    assert registry.resolve("s", "t") == moved


def test_server_tool_never_takes_a_local_name() -> None:
    registry = ToolRegistry()
    registry.add_local([local("s__t", "memory")])
    registry.set_server_tools("s", defs("t"), make_caller)
    assert registry.get("s__t").source == "memory"  # type: ignore[union-attr]
    assert registry.server_tools("s")["t"].name != "s__t"


def test_add_local_rejects_server_sources() -> None:
    registry = ToolRegistry()
    with pytest.raises(ValueError):
        registry.add_local([local("x", "s")])
    assert registry.entries() == []


def test_entries_put_builtins_first_in_builtin_order_then_memory_then_servers() -> None:
    registry = ToolRegistry(order=("z", "a"))
    registry.set_server_tools("a", defs("t"), make_caller)
    registry.set_server_tools("z", defs("t"), make_caller)
    registry.add_local([local(n, "memory") for n in reversed(MEMORY_TOOLS)])
    registry.add_local([local(n) for n in reversed(BUILTIN_TOOLS)])
    expected = [*BUILTIN_TOOLS, *MEMORY_TOOLS, "z__t", "a__t"]
    assert names(registry) == expected
    assert registry.servers() == ["a", "z"]  # registration order


def test_servers_come_in_config_order_whichever_answered_first() -> None:
    # The same config offers the same list in the same order every run (prompt caches).
    first, second = ToolRegistry(order=("b", "a", "c")), ToolRegistry(order=("b", "a", "c"))
    for server in ("c", "a", "b"):
        first.set_server_tools(server, defs("t"), make_caller)
    for server in ("a", "b", "c", "x"):
        second.set_server_tools(server, defs("t"), make_caller)
    assert names(first) == ["b__t", "a__t", "c__t"]
    assert names(second) == ["b__t", "a__t", "c__t", "x__t"]  # unconfigured: last, by name


def test_remove_server_reports_removed_and_forgets_it() -> None:
    registry = ToolRegistry()
    registry.set_server_tools("s", defs("a", "b"), make_caller)
    view = registry.server_tools("s")
    change = registry.remove_server("s")
    assert change == RegistryChange("s", removed=["s__a", "s__b"])
    assert registry.entries() == []
    assert registry.servers() == []
    assert len(view) == 0
    assert registry.remove_server("s").empty


def test_server_tools_is_a_live_view() -> None:
    registry = ToolRegistry()
    registry.set_server_tools("s", defs("a"), make_caller)
    view = registry.server_tools("s")
    registry.set_server_tools("s", defs("a", "late"), make_caller)
    assert list(view) == ["a", "late"]


def test_gate_rejections_are_kept_but_never_returned() -> None:
    registry = ToolRegistry(gate=lambda e: "nope" if e.tool == "bad" else None)
    change = registry.set_server_tools("s", defs("ok", "bad"), make_caller)
    assert change.added == ["s__ok", "s__bad"]
    assert names(registry) == ["s__ok"]
    assert registry.get("s__bad") is None
    assert [(e.name, r) for e, r in registry.rejected()] == [("s__bad", "nope")]
    assert set(registry.server_tools("s")) == {"ok", "bad"}


def test_gate_is_reapplied_to_every_entry_on_every_change() -> None:
    blocked: set[str] = set()
    registry = ToolRegistry(gate=lambda e: "blocked" if e.name in blocked else None)
    registry.set_server_tools("s", defs("a"), make_caller)
    assert names(registry) == ["s__a"]
    blocked.add("s__a")
    registry.set_server_tools("other", defs("b"), make_caller)
    assert names(registry) == ["other__b"]
    blocked.clear()
    registry.remove_server("other")
    assert names(registry) == ["s__a"]


def test_gate_that_raises_fails_closed() -> None:
    def gate(entry: ToolEntry) -> str | None:
        raise RuntimeError("boom")

    registry = ToolRegistry(gate=gate)
    registry.set_server_tools("s", defs("a"), make_caller)
    assert registry.entries() == []
    assert "boom" in registry.rejected()[0][1]


def test_resolve_gives_registered_name_or_naming_rule() -> None:
    registry = ToolRegistry(gate=lambda e: "no")
    registry.set_server_tools("s", defs("a.b", "a_b"), make_caller)
    assert registry.resolve("s", "a_b") == f"s__a_b_{name_hash('s', 'a_b')}"
    assert registry.resolve("s", "missing") == "s__missing"
    assert registry.resolve("my.srv", "x") == "my_srv__x"


def test_entry_calls_the_caller_made_for_its_original_name() -> None:
    registry = ToolRegistry()
    registry.set_server_tools("s", defs("a.b"), make_caller)
    entry = registry.get("s__a_b")
    assert entry is not None
    result = anyio.run(entry.call, {"k": 1})
    assert result.content == "a.b:{'k': 1}"
