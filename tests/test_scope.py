"""ToolScope: the scope table of DESIGN.md, at connect time and for late tools."""

from __future__ import annotations

from typing import Any

import pytest

from launcher.config.types import (
    BUILTIN_TOOLS,
    MEMORY_TOOLS,
    AgentSpec,
    Selector,
    ServerSpec,
)
from launcher.toolset.admission import admission
from launcher.toolset.registry import ToolRegistry
from launcher.toolset.scope import ToolScope
from launcher.toolset.types import ToolCaller, ToolDef, ToolEntry, ToolResult


def admitted(registry: ToolRegistry, name: str) -> bool:
    """Whether the call-time veto admits `name` now (one lookup in the registry)."""
    return not isinstance(registry.admit(name), str)


SERVERS = {name: ServerSpec(name, command="true") for name in ("S", "T", "U")}


async def _call(args: dict[str, Any]) -> ToolResult:
    return ToolResult("ok")


def make_caller(name: str) -> ToolCaller:
    return _call


def ext(server: str, tool: str | None = None) -> Selector:
    raw = f"ext:{server}" + (f"/{tool}" if tool else "")
    return Selector(kind="ext", server=server, tool=tool, raw=raw)


def builtin(name: str) -> Selector:
    return Selector(kind="builtin", name=name, raw=name)


def exposed(glob: str) -> Selector:
    return Selector(kind="name", name=glob, raw=glob)


ALL = Selector(kind="all", raw="*")
NONE = Selector(kind="none", raw="none")


def agent(**fields: Any) -> AgentSpec:
    return AgentSpec(name="test", **fields)


def start(scope: ToolScope) -> ToolRegistry:
    """A registry as a session builds it: scope gate, every local tool offered."""
    registry = ToolRegistry(gate=admission(scope))
    registry.add_local(
        ToolEntry(n, "builtin", n, "", {"type": "object"}, _call) for n in BUILTIN_TOOLS
    )
    registry.add_local(
        ToolEntry(n, "memory", n, "", {"type": "object"}, _call) for n in MEMORY_TOOLS
    )
    return registry


def register(registry: ToolRegistry, server: str, *tools: str) -> None:
    registry.set_server_tools(server, [ToolDef(t) for t in tools], make_caller)


def active(scope: ToolScope, registry: ToolRegistry) -> list[str]:
    return [e.name for e in registry.entries() if e.server is not None]


def muted(scope: ToolScope, registry: ToolRegistry) -> dict[str, str]:
    return {e.name: reason for e, reason in registry.muted()}


# -- no ext: selector ---------------------------------------------------------


def test_tool_at_connect_without_ext_selector_is_active() -> None:
    scope = ToolScope(agent())
    registry = start(scope)
    register(registry, "S", "x")
    assert active(scope, registry) == ["S__x"]
    assert admitted(registry, "S__x")
    assert scope.servers_to_start(SERVERS) == ["S", "T", "U"]


def test_late_tool_without_ext_selector_becomes_active() -> None:
    scope = ToolScope(agent())
    registry = start(scope)
    register(registry, "S")
    assert not admitted(registry, "S__late")
    register(registry, "S", "late")
    assert active(scope, registry) == ["S__late"]
    assert admitted(registry, "S__late")


# -- ext:S selects its server --------------------------------------------------


def test_tool_at_connect_under_selected_ext_is_active() -> None:
    scope = ToolScope(agent(tools=(ext("S"),)))
    registry = start(scope)
    register(registry, "S", "x")
    assert active(scope, registry) == ["S__x"]


def test_late_tool_under_selected_ext_becomes_active() -> None:
    scope = ToolScope(agent(tools=(ext("S"),)))
    registry = start(scope)
    register(registry, "S", "x")
    assert not admitted(registry, "S__late")
    register(registry, "S", "x", "late")
    assert active(scope, registry) == ["S__x", "S__late"]
    assert admitted(registry, "S__late")


def test_removed_tool_is_vetoed_after_it_leaves() -> None:
    scope = ToolScope(agent(tools=(ext("S"),)))
    registry = start(scope)
    register(registry, "S", "x")
    assert admitted(registry, "S__x")
    register(registry, "S")
    assert not admitted(registry, "S__x")


# -- ext:T selects another server ---------------------------------------------


def test_tool_under_unselected_ext_is_muted_not_selected() -> None:
    scope = ToolScope(agent(tools=(ext("T"),)))
    registry = start(scope)
    register(registry, "S", "x")
    assert active(scope, registry) == []
    assert muted(scope, registry) == {"S__x": "not selected"}
    assert not admitted(registry, "S__x")


def test_late_tool_under_unselected_ext_stays_muted() -> None:
    scope = ToolScope(agent(tools=(ext("T"),)))
    registry = start(scope)
    register(registry, "S")
    register(registry, "T", "t")
    register(registry, "S", "late")
    assert active(scope, registry) == ["T__t"]
    assert muted(scope, registry) == {"S__late": "not selected"}
    assert not admitted(registry, "S__late")


def test_unselected_server_is_not_started() -> None:
    scope = ToolScope(agent(tools=(ext("T"),)))
    assert scope.servers_to_start(SERVERS) == ["T"]


# -- ext:S/late_* --------------------------------------------------------------


def test_ext_tool_glob_activates_only_the_matching_late_tool() -> None:
    scope = ToolScope(agent(tools=(ext("S", "late_*"),)))
    registry = start(scope)
    register(registry, "S", "early")
    assert active(scope, registry) == []
    register(registry, "S", "early", "late_x")
    assert active(scope, registry) == ["S__late_x"]
    assert muted(scope, registry) == {"S__early": "not selected"}
    assert admitted(registry, "S__late_x")
    assert not admitted(registry, "S__early")
    assert scope.servers_to_start(SERVERS) == ["S"]


# -- disallowed_tools always wins ---------------------------------------------


@pytest.mark.parametrize(
    "disallowed",
    [exposed("S__x"), exposed("S__*x"), ext("S", "x"), ext("S", "?")],
    ids=["exposed-name", "exposed-glob", "ext-tool", "ext-glob"],
)
def test_disallowed_tool_is_muted_whoever_selects_it(disallowed: Selector) -> None:
    scope = ToolScope(
        agent(tools=(ext("S"), exposed("S__x")), disallowed_tools=(disallowed,)), ext=["S"]
    )
    registry = start(scope)
    register(registry, "S", "x", "keep")
    assert active(scope, registry) == ["S__keep"]
    assert muted(scope, registry) == {"S__x": "disallowed"}
    assert not admitted(registry, "S__x")


def test_late_disallowed_tool_stays_muted() -> None:
    scope = ToolScope(agent(disallowed_tools=(ext("S", "late_*"),)))
    registry = start(scope)
    register(registry, "S", "x")
    register(registry, "S", "x", "late_y")
    assert muted(scope, registry) == {"S__late_y": "disallowed"}
    assert not admitted(registry, "S__late_y")


def test_server_with_every_tool_disallowed_is_not_started() -> None:
    scope = ToolScope(agent(disallowed_tools=(ext("S"),)))
    assert scope.servers_to_start(SERVERS) == ["T", "U"]


def test_disallowed_builtin_is_not_given() -> None:
    scope = ToolScope(agent(disallowed_tools=(builtin("bash"),)))
    registry = start(scope)
    assert "bash" not in scope.builtin_names()
    assert registry.get("bash") is None
    assert not admitted(registry, "bash")


# -- isolated / extensions: false ---------------------------------------------


@pytest.mark.parametrize("fields", [{"isolated": True}, {"extensions": False}])
def test_static_agent_gets_builtins_only(fields: dict[str, Any]) -> None:
    scope = ToolScope(agent(tools=(builtin("read"), ext("S")), **fields), ext=["T"])
    registry = start(scope)
    assert scope.static
    assert scope.servers_to_start(SERVERS) == []
    assert [e.name for e in registry.entries()] == ["read"]
    register(registry, "S", "x")
    assert registry.get("S__x") is None
    assert muted(scope, registry) == {"S__x": "isolated"}
    assert not admitted(registry, "S__x")


# -- which built-ins -----------------------------------------------------------


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        (None, BUILTIN_TOOLS),
        ((ALL,), BUILTIN_TOOLS),
        ((Selector(kind="all", raw="all"), ext("S")), BUILTIN_TOOLS),
        ((NONE,), ()),
        ((ext("S"),), ()),
        ((exposed("S__*"),), ()),
        ((builtin("ls"), builtin("read"), ext("S")), ("read", "ls")),
    ],
    ids=["omitted", "star", "all-with-ext", "none", "only-ext", "only-name", "named"],
)
def test_builtin_set_follows_tools_field(
    tools: tuple[Selector, ...] | None, expected: tuple[str, ...]
) -> None:
    scope = ToolScope(agent(tools=tools))
    registry = start(scope)
    assert scope.builtin_names() == expected
    assert [e.name for e in registry.entries()] == list(expected)


def test_unrequested_builtins_are_not_listed_as_muted() -> None:
    scope = ToolScope(agent(tools=(NONE,)))
    registry = start(scope)
    assert muted(scope, registry) == {}
    assert not admitted(registry, "read")


def test_cli_ext_never_changes_the_builtin_set() -> None:
    scope = ToolScope(agent(), ext=["S"])
    registry = start(scope)
    register(registry, "S", "x")
    register(registry, "T", "y")
    assert scope.builtin_names() == BUILTIN_TOOLS
    assert active(scope, registry) == ["S__x"]
    assert muted(scope, registry) == {"T__y": "not selected"}
    assert scope.servers_to_start(SERVERS) == ["S"]


# -- memory --------------------------------------------------------------------


def test_memory_tools_are_active_for_memory_agent() -> None:
    scope = ToolScope(agent(tools=(ext("S"),), memory="project"))
    registry = start(scope)
    assert scope.builtin_names() == MEMORY_TOOLS
    assert [e.name for e in registry.entries()] == list(MEMORY_TOOLS)


def test_disallowed_memory_tool_is_not_active() -> None:
    scope = ToolScope(agent(memory="project", disallowed_tools=(builtin("memory_write"),)))
    registry = start(scope)
    assert "memory_write" not in scope.builtin_names()
    assert not admitted(registry, "memory_write")
    assert admitted(registry, "memory_read")


def test_memory_tools_kept_for_isolated_memory_agent() -> None:
    scope = ToolScope(agent(isolated=True, tools=(NONE,), memory="user"))
    registry = start(scope)
    assert [e.name for e in registry.entries()] == list(MEMORY_TOOLS)


def test_no_memory_tools_without_memory() -> None:
    scope = ToolScope(agent())
    registry = start(scope)
    assert not admitted(registry, "memory_read")


# -- the rest of the gate ------------------------------------------------------


def test_orchestration_tools_are_muted_from_any_server() -> None:
    scope = ToolScope(agent())
    registry = start(scope)
    register(registry, "S", "spawn_subagent", "x")
    assert active(scope, registry) == ["S__x"]
    assert muted(scope, registry) == {"S__spawn_subagent": "orchestration"}


def test_server_outside_extensions_list_is_not_started_or_admitted() -> None:
    scope = ToolScope(agent(extensions=("T",)), ext=["S", "T"])
    assert scope.servers_to_start(SERVERS) == ["T"]
    registry = start(scope)
    register(registry, "S", "x")
    assert muted(scope, registry) == {"S__x": "extension not allowed"}


# -- name selectors --------------------------------------------------------------


def test_name_selector_selects_matching_exposed_names() -> None:
    scope = ToolScope(agent(tools=(exposed("S__get_*"),)))
    registry = start(scope)
    register(registry, "S", "get_a", "put_a")
    register(registry, "S", "get_a", "put_a", "get_late")
    assert active(scope, registry) == ["S__get_a", "S__get_late"]
    assert muted(scope, registry) == {"S__put_a": "not selected"}


@pytest.mark.parametrize(
    ("glob", "expected"),
    [
        ("S__*", ["S"]),
        ("?__x", ["S", "T", "U"]),
        ("[ST]__*", ["S", "T"]),
        ("[!S]__*", ["T", "U"]),
        ("*__read", ["S", "T", "U"]),
        ("X__*", []),
        ("S", []),
    ],
)
def test_name_selector_starts_only_servers_it_could_match(glob: str, expected: list[str]) -> None:
    scope = ToolScope(agent(tools=(exposed(glob),)))
    assert scope.servers_to_start(SERVERS) == expected


def test_name_selector_uses_the_sanitized_server_prefix() -> None:
    # scope mirrors naming's character rule; this catches the two drifting apart.
    scope = ToolScope(agent(tools=(exposed("my_srv__*"),)))
    servers = {"my.srv": ServerSpec("my.srv", command="true")}
    assert scope.servers_to_start(servers) == ["my.srv"]
    registry = start(scope)
    register(registry, "my.srv", "x")
    assert active(scope, registry) == ["my_srv__x"]


def test_disallowed_exposed_name_still_matches_a_tool_that_got_a_hashed_name() -> None:
    # `delete.repo` takes the plain name gh__delete_repo first, so `delete_repo` is hashed;
    # the user's disallowed_tools entry names the tool, not the hash.
    scope = ToolScope(agent(disallowed_tools=(exposed("gh__delete_repo"),)))
    registry = start(scope)
    register(registry, "gh", "delete.repo", "delete_repo", "list")
    assert active(scope, registry) == ["gh__list"]


def test_disallowed_name_matches_an_over_long_tool_name() -> None:
    tool = "t" * 80
    scope = ToolScope(agent(disallowed_tools=(exposed(f"gh__{tool}"),)))
    registry = start(scope)
    register(registry, "gh", tool, "ok")
    assert active(scope, registry) == ["gh__ok"]


def test_name_selector_in_tools_selects_a_hashed_tool() -> None:
    scope = ToolScope(agent(tools=(exposed("gh__delete_repo"),)))
    registry = start(scope)
    register(registry, "gh", "delete.repo", "delete_repo")
    assert len(active(scope, registry)) == 2
