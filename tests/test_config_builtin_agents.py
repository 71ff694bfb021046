"""The shipped built-in agents."""

from __future__ import annotations

from launcher.config.discovery import builtin_agents


def test_general_purpose_has_all_builtins_and_every_server() -> None:
    (spec,) = [s for s in builtin_agents() if s.name == "general-purpose"]
    assert spec.description == (
        "General-purpose agent: all built-in tools and every allowed MCP server."
    )
    assert spec.tools is None
    assert spec.extensions is True
    assert spec.isolated is False
    assert spec.source is None
    assert len(spec.prompt) > 50
