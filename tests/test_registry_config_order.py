"""Issue 15.2, hole 3: colliding exposed names follow config order, not listing order.

Servers `a.b` and `a_b` both reduce to `a_b__t` for their tool `t`. Whichever listed first
used to get the plain name. Now the server earlier in mcp.json gets it, the later one a
hashed name, whatever the order they list in, and no registered name ever changes.
"""

from __future__ import annotations

import itertools

from launcher.toolset.naming import name_hash
from launcher.toolset.registry import RegistryChange, ToolRegistry
from launcher.toolset.types import ToolDef, ToolResult

ORDER = ("a.b", "a_b")
HASHED = f"a_b__t_{name_hash('a_b', 't')}"


async def _call(args: dict) -> ToolResult:
    return ToolResult("ok")


def register(registry: ToolRegistry, server: str, *tools: str) -> RegistryChange:
    return registry.set_server_tools(server, [ToolDef(t) for t in tools], lambda _name: _call)


def names(registry: ToolRegistry) -> dict[tuple[str, str], str]:
    return {
        (server, tool): entry.name
        for server in registry.servers()
        for tool, entry in registry.server_tools(server).items()
    }


def test_earlier_configured_server_gets_the_plain_name_though_it_lists_last() -> None:
    registry = ToolRegistry(order=ORDER)
    assert register(registry, "a_b", "t") == RegistryChange("a_b", added=[HASHED])
    assert register(registry, "a.b", "t") == RegistryChange("a.b", added=["a_b__t"])
    assert names(registry) == {("a_b", "t"): HASHED, ("a.b", "t"): "a_b__t"}


def test_names_are_the_same_whichever_server_lists_first() -> None:
    seen = []
    for first, second in itertools.permutations(ORDER):
        registry = ToolRegistry(order=ORDER)
        register(registry, first, "t", "u")
        register(registry, second, "t", "u")
        seen.append(names(registry))
    assert seen[0] == seen[1]
    assert seen[0][("a.b", "t")] == "a_b__t"
    assert seen[0][("a_b", "u")] == f"a_b__u_{name_hash('a_b', 'u')}"


def test_config_order_decides_not_the_server_name() -> None:
    registry = ToolRegistry(order=("a_b", "a.b"))
    register(registry, "a.b", "t")
    register(registry, "a_b", "t")
    assert names(registry)[("a_b", "t")] == "a_b__t"
    assert names(registry)[("a.b", "t")] == f"a_b__t_{name_hash('a.b', 't')}"


def test_names_survive_relists_and_the_later_server_leaving() -> None:
    registry = ToolRegistry(order=ORDER)
    register(registry, "a_b", "t")
    register(registry, "a.b", "t")
    registry.remove_server("a.b")
    # The plain name stays reserved for `a.b`: `a_b` keeps its hashed name.
    assert register(registry, "a_b", "t", "v").added == [f"a_b__v_{name_hash('a_b', 'v')}"]
    assert names(registry)[("a_b", "t")] == HASHED
    assert register(registry, "a.b", "t").added == ["a_b__t"]


def test_shorter_server_name_owns_names_a_longer_one_would_spell() -> None:
    # (s, _x) and (s_, x) both reduce to s___x; `s` comes first in the config.
    for listing in (("s_", "s"), ("s", "s_")):
        registry = ToolRegistry(order=("s", "s_"))
        for server in listing:
            register(registry, server, "_x" if server == "s" else "x")
        assert names(registry) == {
            ("s", "_x"): "s___x",
            ("s_", "x"): f"s___x_{name_hash('s_', 'x')}",
        }


def test_server_outside_the_order_yields_to_configured_servers() -> None:
    registry = ToolRegistry(order=("a.b",))
    register(registry, "a_b", "t")
    register(registry, "a.b", "t")
    assert names(registry) == {("a_b", "t"): HASHED, ("a.b", "t"): "a_b__t"}


def test_servers_that_cannot_collide_keep_plain_names() -> None:
    registry = ToolRegistry(order=("github", "github_enterprise", "gh"))
    register(registry, "gh", "t")
    register(registry, "github_enterprise", "t")
    register(registry, "github", "t")
    assert set(names(registry).values()) == {"gh__t", "github_enterprise__t", "github__t"}


def test_without_an_order_the_first_to_list_keeps_the_plain_name() -> None:
    registry = ToolRegistry()
    register(registry, "a_b", "t")
    register(registry, "a.b", "t")
    hashed = f"a_b__t_{name_hash('a.b', 't')}"
    assert names(registry) == {("a_b", "t"): "a_b__t", ("a.b", "t"): hashed}


def test_resolve_follows_the_order_before_anything_registers() -> None:
    registry = ToolRegistry(order=ORDER)
    assert registry.resolve("a_b", "t") == HASHED
    assert registry.resolve("a.b", "t") == "a_b__t"
