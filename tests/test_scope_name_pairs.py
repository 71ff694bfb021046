"""Issue 15.2, hole 2: exposed-name selectors match (server, tool) pairs, not joined strings.

`s__*` means "every tool of server `s`". As a glob over the joined `SERVER__TOOL` it also
matched `s___x`, the tool `x` of server `s_`. The rule now: split the selector at a `__`
and match the server part against the server, the tool part against the tool.
"""

from __future__ import annotations

from typing import Any

import pytest

from launcher.config.types import AgentSpec, Selector, ServerSpec
from launcher.toolset.admission import admission
from launcher.toolset.registry import ToolRegistry
from launcher.toolset.scope import ToolScope
from launcher.toolset.types import ToolDef, ToolResult

SERVERS = {name: ServerSpec(name, command="true") for name in ("s", "s_", "s__x")}


async def _call(args: dict) -> ToolResult:
    return ToolResult("ok")


def exposed(glob: str) -> Selector:
    return Selector(kind="name", name=glob, raw=glob)


def agent(**fields: Any) -> AgentSpec:
    return AgentSpec(name="t", **fields)


def registry_with(scope: ToolScope, listings: dict[str, list[str]]) -> ToolRegistry:
    registry = ToolRegistry(gate=admission(scope))
    for server, tools in listings.items():
        registry.set_server_tools(server, [ToolDef(t) for t in tools], lambda _name: _call)
    return registry


def active_pairs(scope: ToolScope, registry: ToolRegistry) -> set[tuple[str | None, str]]:
    return {(e.server, e.tool) for e in registry.entries()}


def test_server_glob_does_not_select_the_tools_of_a_longer_server_name() -> None:
    scope = ToolScope(agent(tools=(exposed("s__*"),)))
    registry = registry_with(scope, {"s": ["a"], "s_": ["x", "_y"]})
    assert active_pairs(scope, registry) == {("s", "a")}
    muted = {(e.server, e.tool): reason for e, reason in registry.muted()}
    assert muted == {("s_", "x"): "not selected", ("s_", "_y"): "not selected"}
    assert scope.servers_to_start(SERVERS) == ["s"]


def test_disallowed_server_glob_leaves_a_longer_server_name_alone() -> None:
    scope = ToolScope(agent(disallowed_tools=(exposed("s__*"),)))
    registry = registry_with(scope, {"s": ["a"], "s_": ["x"]})
    assert active_pairs(scope, registry) == {("s_", "x")}


def test_tool_glob_may_span_the_separator_but_the_server_part_may_not() -> None:
    # `*` in the tool part may span `__`: `s__*` selects s's tool `y__z`.
    scope = ToolScope(agent(tools=(exposed("s__*"),)))
    registry = registry_with(scope, {"s": ["y__z"], "s__y": ["z"]})
    assert active_pairs(scope, registry) == {("s", "y__z")}


def test_selector_naming_a_server_that_contains_the_separator() -> None:
    scope = ToolScope(agent(tools=(exposed("s__x__*"),)))
    registry = registry_with(scope, {"s": ["x__a"], "s__x": ["b"], "s_": ["_x__c"]})
    # Splits: (s, x__*) and (s__x, *); `s_` matches neither server part.
    assert active_pairs(scope, registry) == {("s", "x__a"), ("s__x", "b")}
    assert scope.servers_to_start(SERVERS) == ["s", "s__x"]


def test_a_literal_joined_name_that_two_pairs_spell_matches_both() -> None:
    # `s___x` is the plain name of (s, _x) and of (s_, x); a selector cannot tell them
    # apart, so it names both (`ext:s_/x` names one).
    scope = ToolScope(agent(disallowed_tools=(exposed("s___x"),)))
    registry = registry_with(scope, {"s": ["_x", "keep"], "s_": ["x"]})
    assert active_pairs(scope, registry) == {("s", "keep")}


def test_server_part_may_be_a_glob_over_server_names() -> None:
    scope = ToolScope(agent(tools=(exposed("*__read"),)))
    registry = registry_with(scope, {"s": ["read", "write"], "s_": ["read"]})
    assert active_pairs(scope, registry) == {("s", "read"), ("s_", "read")}


@pytest.mark.parametrize(
    ("glob", "expected"),
    [("s__*", ["s"]), ("s_*__*", ["s_", "s__x"]), ("s___*", ["s", "s_"]), ("*__x", list(SERVERS))],
)
def test_servers_to_start_follow_the_server_part(glob: str, expected: list[str]) -> None:
    assert ToolScope(agent(tools=(exposed(glob),))).servers_to_start(SERVERS) == expected


def test_configured_server_name_with_unsafe_characters_is_matched_raw_or_sanitized() -> None:
    for glob in ("my.srv__get", "my_srv__get"):
        scope = ToolScope(agent(tools=(exposed(glob),)))
        registry = registry_with(scope, {"my.srv": ["get", "put"]})
        assert active_pairs(scope, registry) == {("my.srv", "get")}, glob
