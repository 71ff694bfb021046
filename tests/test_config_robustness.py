"""Issue 15.6: hostile config shapes are exit 2 naming the file or option, never a crash or hang."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from launcher.config.agents import parse_agent_text
from launcher.config.discovery import load_config
from launcher.config.servers import parse_servers_text
from launcher.config.types import AgentSpec
from launcher.errors import ConfigError
from launcher.models.scripted import load_script
from launcher.toolset.admission import admission
from launcher.toolset.registry import ToolRegistry
from launcher.toolset.scope import ToolScope
from launcher.toolset.types import ToolDef, ToolResult

DEEP = 5000


def config_dir(tmp_path: Path) -> Path:
    root = tmp_path / "conf"
    (root / "agents").mkdir(parents=True)
    (root / "agents" / "ok.md").write_text("---\ndescription: fine\n---\nhi\n")
    return root


def test_deeply_nested_frontmatter_is_a_config_error() -> None:
    text = "---\ntools: " + "[" * DEEP + "]" * DEEP + "\n---\n"
    with pytest.raises(ConfigError, match="nested too deeply") as info:
        parse_agent_text(text, "deep.md")
    assert info.value.path == Path("deep.md")


def test_one_deeply_nested_agent_file_is_skipped_not_fatal(tmp_path: Path) -> None:
    root = config_dir(tmp_path)
    (root / "agents" / "deep.md").write_text("---\ntools: " + "[" * DEEP + "]" * DEEP + "\n---\n")
    config = load_config(root, cwd=tmp_path, env={})
    assert "ok" in config.agents
    assert "nested too deeply" in config.broken_agents["deep"]
    assert any("deep.md" in w for w in config.warnings)


def test_deeply_nested_mcp_json_is_a_config_error() -> None:
    text = '{"mcpServers": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(ConfigError, match="nested too deeply") as info:
        parse_servers_text(text, Path("mcp.json"), {})
    assert info.value.path == Path("mcp.json")


def test_binary_script_is_a_config_error(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_bytes(b"\xff\xfe\x00\x80steps: []")
    with pytest.raises(ConfigError, match="not UTF-8") as info:
        load_script(script)
    assert info.value.path == script


@pytest.mark.parametrize("value", [".inf", ".nan", "-.inf", "1.0e9"])
def test_non_finite_or_absurd_sleep_is_a_config_error(tmp_path: Path, value: str) -> None:
    script = tmp_path / "s.yaml"
    script.write_text(f"steps:\n  - sleep: {value}\n    say: hi\n")
    with pytest.raises(ConfigError) as info:
        load_script(script)
    assert (info.value.path, info.value.field, info.value.line) == (script, "sleep", 2)


def test_deeply_nested_script_is_a_config_error(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("steps:\n  - call: [{tool: x, args: {a: " + "[" * DEEP + "]" * DEEP + "}}]\n")
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_script(script)


def test_script_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    os.mkfifo(script)
    with pytest.raises(ConfigError, match="not a regular file"):
        load_script(script)


async def _call(args: dict) -> ToolResult:
    return ToolResult("ok")


@pytest.mark.parametrize("tool", ["Spawn_Subagent", " spawn_subagent", "LIST_AGENTS\t"])
def test_orchestration_muting_is_case_insensitive_and_trimmed(tool: str) -> None:
    scope = ToolScope(AgentSpec(name="t"))
    registry = ToolRegistry(gate=admission(scope))
    registry.set_server_tools("S", [ToolDef(tool), ToolDef("fine")], lambda name: _call)
    reasons = {entry.tool: reason for entry, reason in registry.muted()}
    assert reasons == {tool: "orchestration"}
    assert [e.tool for e in registry.entries() if e.server] == ["fine"]
