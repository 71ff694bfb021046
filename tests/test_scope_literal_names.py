"""Issue 15.2, hole 1: a selector that spells a tool's name exactly always matches it.

A tool may be named `x[1]` or `x*`; as an fnmatch glob, `x[1]` means only `x1`. An exact
literal match counts in addition to the glob, for `tools` and `disallowed_tools`, in both
the `ext:SERVER/TOOL` and the exposed-name (`SERVER__TOOL`) forms.
"""

from __future__ import annotations

import pytest

from launcher.config.types import AgentSpec, Selector
from launcher.toolset.admission import admission
from launcher.toolset.registry import ToolRegistry
from launcher.toolset.scope import ToolScope
from launcher.toolset.types import ToolDef, ToolResult


def admitted(registry: ToolRegistry, name: str) -> bool:
    """Whether the call-time veto admits `name` now (one lookup in the registry)."""
    return not isinstance(registry.admit(name), str)


async def _call(args: dict) -> ToolResult:
    return ToolResult("ok")


def ext(server: str, tool: str | None = None) -> Selector:
    raw = f"ext:{server}" + (f"/{tool}" if tool else "")
    return Selector(kind="ext", server=server, tool=tool, raw=raw)


def exposed(glob: str) -> Selector:
    return Selector(kind="name", name=glob, raw=glob)


def registry_with(scope: ToolScope, *tools: str) -> ToolRegistry:
    registry = ToolRegistry(gate=admission(scope))
    registry.set_server_tools("s", [ToolDef(t) for t in tools], lambda _name: _call)
    return registry


def tool_states(scope: ToolScope, registry: ToolRegistry) -> dict[str, str | None]:
    """Original tool name -> None when active, else the muted reason."""
    states: dict[str, str | None] = {e.tool: None for e in registry.entries()}
    states.update({e.tool: reason for e, reason in registry.muted()})
    return states


@pytest.mark.parametrize(
    "selector",
    [ext("s", "x[1]"), exposed("s__x[1]"), ext("s", "x*"), exposed("s__x*")],
    ids=["ext-brackets", "exposed-brackets", "ext-star", "exposed-star"],
)
def test_disallowed_literal_name_with_glob_characters_is_muted(selector: Selector) -> None:
    literal = (selector.tool or selector.name or "").removeprefix("s__")
    scope = ToolScope(AgentSpec(name="t", disallowed_tools=(selector,)))
    registry = registry_with(scope, literal, "keep")
    assert tool_states(scope, registry)[literal] == "disallowed"
    assert tool_states(scope, registry)["keep"] is None
    entry = registry.server_tools("s")[literal]
    assert not admitted(registry, entry.name)


@pytest.mark.parametrize("selector", [ext("s", "x[1]"), exposed("s__x[1]")], ids=["ext", "exposed"])
def test_literal_name_with_glob_characters_is_selected(selector: Selector) -> None:
    scope = ToolScope(AgentSpec(name="t", tools=(selector,)))
    registry = registry_with(scope, "x[1]", "other")
    assert tool_states(scope, registry) == {"x[1]": None, "other": "not selected"}


def test_glob_meaning_still_counts_beside_the_literal_one() -> None:
    # `x[1]` names the tool `x[1]` and, as a glob, `x1`: disallowed errs towards blocking.
    scope = ToolScope(AgentSpec(name="t", disallowed_tools=(ext("s", "x[1]"),)))
    registry = registry_with(scope, "x[1]", "x1", "x2")
    assert tool_states(scope, registry) == {"x[1]": "disallowed", "x1": "disallowed", "x2": None}


def test_literal_exposed_name_of_a_hashed_tool_matches_only_that_tool() -> None:
    # `a.b` takes s__a_b, so `a_b` gets a hashed name; writing that name picks it alone.
    probe = ToolRegistry()
    probe.set_server_tools("s", [ToolDef("a.b"), ToolDef("a_b")], lambda _name: _call)
    hashed = probe.server_tools("s")["a_b"].name
    assert hashed != "s__a_b"
    scope = ToolScope(AgentSpec(name="t", disallowed_tools=(exposed(hashed),)))
    registry = registry_with(scope, "a.b", "a_b")
    assert tool_states(scope, registry) == {"a.b": None, "a_b": "disallowed"}
