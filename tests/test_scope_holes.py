"""Issue 15.2's scope holes: literal names with glob characters, `s__*` vs server `s_`, and
which of two colliding tools gets the plain name (config order, whoever lists first)."""

from __future__ import annotations

from typing import Any

from launcher.config.agents import parse_agent_text
from launcher.config.types import ServerSpec
from launcher.toolset.naming import name_hash
from launcher.toolset.registry import ToolRegistry
from launcher.toolset.scope import ToolScope
from launcher.toolset.types import ToolCaller, ToolDef, ToolResult


async def _call(args: dict[str, Any]) -> ToolResult:
    return ToolResult("ok")


def make_caller(name: str) -> ToolCaller:
    return _call


def scope_of(frontmatter: str) -> ToolScope:
    return ToolScope(parse_agent_text(f"---\n{frontmatter}\n---\n", "a.md"))


def test_a_disallowed_literal_name_with_glob_characters_is_blocked() -> None:
    scope = scope_of("disallowed_tools: ['ext:s/x[1]']")
    registry = ToolRegistry(gate=scope.gate)
    registry.set_server_tools("s", [ToolDef("x[1]"), ToolDef("x2")], make_caller)
    assert [(e.tool, why) for e, why in registry.rejected()] == [("x[1]", "disallowed")]
    assert not scope.allows("s__x_1_", registry)
    assert scope.allows("s__x2", registry)


def test_an_exposed_name_glob_selects_by_server_not_by_joined_string() -> None:
    scope = scope_of("tools: ['s__*']")
    registry = ToolRegistry(gate=scope.gate)
    registry.set_server_tools("s", [ToolDef("a")], make_caller)
    registry.set_server_tools("s_", [ToolDef("x")], make_caller)  # joined: `s___x`
    assert [e.name for e in scope.active(registry.entries())] == ["s__a"]
    servers = {name: ServerSpec(name, command="true") for name in ("s", "s_")}
    assert scope.servers_to_start(servers) == ["s"]
    # A literal exposed name still counts, and `*__a` means any server's `a`.
    assert scope_of("tools: ['s___x']").selects(registry.get("s___x")) is None  # type: ignore[arg-type]
    assert scope_of("tools: ['*__x']").selects(registry.get("s___x")) is None  # type: ignore[arg-type]


def _names(order: list[str], listing: list[str]) -> dict[str, str]:
    registry = ToolRegistry(order=order)
    changes = [registry.set_server_tools(s, [ToolDef("t")], make_caller) for s in listing]
    names = {e.source: e.name for e in registry.entries()}
    assert len(set(names.values())) == 2
    return {"names": names, "changes": changes}  # type: ignore[return-value]


def test_colliding_tools_get_names_by_config_order_whoever_lists_first() -> None:
    plain = "a_b__t"
    hashed = f"a_b__t_{name_hash('a_b', 't')}"
    early_first = _names(["a.b", "a_b"], ["a.b", "a_b"])
    late_first = _names(["a.b", "a_b"], ["a_b", "a.b"])
    assert early_first["names"] == late_first["names"] == {"a.b": plain, "a_b": hashed}
    # Listing first did not keep the plain name: the later-configured server was renamed.
    (rename,) = late_first["changes"][1].others
    assert (rename.source, rename.removed, rename.added) == ("a_b", [plain], [hashed])
    assert _names(["a_b", "a.b"], ["a.b", "a_b"])["names"] == {
        "a_b": plain,
        "a.b": f"a_b__t_{name_hash('a.b', 't')}",
    }
