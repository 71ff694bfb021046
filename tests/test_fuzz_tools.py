"""Issue 14.2: hostile `tools/list` answers driven through the registry and the scope.

Names empty, 10 000 characters, unicode, glob metacharacters, colliding after naming
(`s`/`s_`, `a__b`), hostile schemas. The property: no exception; every tool is either
active and in scope, or muted with a reason; the veto admits exactly the active names.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from hypothesis import example, given
from hypothesis import strategies as st

from launcher.bridge.schemas import valid_schema
from launcher.config.types import ORCHESTRATION_TOOLS, AgentSpec, Selector
from launcher.toolset.admission import admission
from launcher.toolset.registry import ToolRegistry
from launcher.toolset.scope import ToolScope
from launcher.toolset.types import ToolDef, ToolResult


def admitted(registry: ToolRegistry, name: str) -> bool:
    """Whether the call-time veto admits `name` now (one lookup in the registry)."""
    return not isinstance(registry.admit(name), str)


json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["type", "properties", "required", "$ref", "x"]), inner, max_size=3
        )
    ),
    max_leaves=10,
)
schemas = st.one_of(
    st.just({"type": "object"}),
    st.just({"type": "object", "properties": {"a": {"type": "nope"}}}),
    st.dictionaries(
        st.sampled_from(["type", "properties", "required", "$ref"]), json_values, max_size=3
    ),
)
names = st.one_of(
    st.sampled_from(
        ["", " ", "x", "x1", "x[1]", "x*", "X", "x__y", "__x", "x__", "spawn_subagent"]
    ),
    st.sampled_from(["Spawn_Subagent ", "list_agents\t", "x" * 10_000, "x\n", "é", "x/y", "s__x"]),
    st.text(max_size=12),
)
tools = st.lists(st.tuples(names, schemas), max_size=8)

SCOPED = AgentSpec(
    name="fuzz",
    tools=(Selector(kind="ext", server="s", tool="x*", raw="ext:s/x*"),),
    disallowed_tools=(Selector(kind="ext", server="s", tool="x1", raw="ext:s/x1"),),
)
LITERAL = AgentSpec(
    name="fuzz",
    tools=SCOPED.tools,
    disallowed_tools=(Selector(kind="ext", server="s", tool="x[1]", raw="ext:s/x[1]"),),
)


async def _call(args: dict) -> ToolResult:
    return ToolResult("ok")


def _in_scope(server: str, tool: str) -> bool:
    """The oracle: what SCOPED may ever reach, written independently of ToolScope."""
    return (
        server == "s"
        and fnmatchcase(tool, "x*")
        and tool != "x1"
        and tool.strip().lower() not in ORCHESTRATION_TOOLS
    )


@given(first=tools, second=tools)
@example(first=[("x", {"type": "object"})], second=[("x", {"type": "object"})])
@example(first=[("x[1]", {"type": "object"}), ("x1", {"type": "object"})], second=[])
@example(first=[("x" * 10_000, {"type": "object"}), ("", {"type": "object"})], second=[])
@example(first=[("Spawn_Subagent ", {"type": "object"})], second=[("x", {"type": "object"})])
def test_hostile_tool_lists_are_active_in_scope_or_muted(first: list, second: list) -> None:
    _check(ToolScope(SCOPED), first, second)


def test_literal_disallowed_name_with_glob_characters_is_blocked() -> None:
    # Found by the fuzzer above (issue 15.2): an exact literal match always counts.
    scope = ToolScope(LITERAL)
    registry = ToolRegistry(gate=admission(scope))
    registry.set_server_tools("s", [ToolDef("x[1]")], lambda _name: _call)
    assert not admitted(registry, "s__x_1_")


def _check(scope: ToolScope, first: list, second: list) -> None:
    registry = ToolRegistry(gate=admission(scope))
    for server, listing in (("s", first), ("s_", second)):
        defs = [
            ToolDef(
                name, "", schema, problem=None if valid_schema(schema) else "invalid input schema"
            )
            for name, schema in listing
        ]
        registry.set_server_tools(server, defs, lambda _name: _call)
    active = [e for e in registry.entries() if e.server is not None]
    muted = registry.muted()
    exposed = [e.name for e in active] + [e.name for e, _ in muted]
    assert len(set(exposed)) == len(exposed), "two tools share an exposed name"
    for entry in active:
        assert _in_scope(entry.server, entry.tool), f"{entry.server}/{entry.tool!r} out of scope"
        assert admitted(registry, entry.name)
    for entry, reason in muted:
        assert isinstance(reason, str) and reason
        assert not admitted(registry, entry.name)
    listed = {(server, name) for server, lst in (("s", first), ("s_", second)) for name, _ in lst}
    seen = {(e.server, e.tool) for e in active} | {(e.server, e.tool) for e, _ in muted}
    assert listed <= seen, f"tools neither active nor muted: {listed - seen}"
