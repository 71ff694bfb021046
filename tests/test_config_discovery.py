"""Discovery order, first definition wins, and the hermetic config dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.config.discovery import load_config
from launcher.errors import ConfigError


def agent(directory: Path, stem: str, description: str, name: str | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{stem}.md"
    name_line = f"name: {name}\n" if name else ""
    path.write_text(f"---\n{name_line}description: {description}\n---\nprompt\n")
    return path


def servers(path: Path, **commands: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    entries = {name: {"command": command} for name, command in commands.items()}
    path.write_text(json.dumps({"mcpServers": entries}))


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    cwd, home = tmp_path / "project", tmp_path / "home"
    agent(cwd / ".subagent" / "agents", "shared", "from project")
    agent(home / ".config" / "subagent" / "agents", "shared", "from user")
    agent(home / ".config" / "subagent" / "agents", "user-only", "user agent")
    agent(home / ".config" / "subagent" / "agents", "general-purpose", "user override")
    servers(cwd / ".subagent" / "mcp.json", a="project-a")
    servers(cwd / ".mcp.json", a="dotmcp-a", b="dotmcp-b")
    servers(home / ".config" / "subagent" / "mcp.json", a="user-a", b="user-b", c="user-c")
    return cwd, home


def test_project_then_dot_mcp_then_user_then_builtins_first_wins(
    layout: tuple[Path, Path],
) -> None:
    cwd, home = layout
    config = load_config(cwd=cwd, home=home, env={})
    assert config.agents["shared"].description == "from project"
    assert config.agents["user-only"].description == "user agent"
    assert config.agents["general-purpose"].description == "user override"
    commands = {name: spec.command for name, spec in config.servers.items()}
    assert commands == {"a": "project-a", "b": "dotmcp-b", "c": "user-c"}


def test_dot_mcp_json_agents_are_not_read(tmp_path: Path) -> None:
    agent(tmp_path / "agents", "stray", "not a config dir")
    config = load_config(cwd=tmp_path, home=tmp_path / "nohome", env={})
    assert "stray" not in config.agents


def test_home_defaults_to_env_home(layout: tuple[Path, Path]) -> None:
    cwd, home = layout
    config = load_config(cwd=cwd, env={"HOME": str(home)})
    assert "user-only" in config.agents


def test_builtins_are_always_present(tmp_path: Path) -> None:
    config = load_config(cwd=tmp_path, home=tmp_path, env={})
    assert list(config.agents) == ["general-purpose"]
    assert config.servers == {}


def test_config_dir_is_hermetic(layout: tuple[Path, Path], tmp_path: Path) -> None:
    cwd, home = layout
    own = tmp_path / "own"
    agent(own / "agents", "mine", "hermetic")
    servers(own / "mcp.json", z="own-z")
    config = load_config(own, cwd=cwd, home=home, env={})
    assert set(config.agents) == {"mine", "general-purpose"}
    assert config.agents["general-purpose"].source is None
    assert set(config.servers) == {"z"}


def test_subagent_config_dir_env_is_hermetic_and_relative_to_cwd(
    layout: tuple[Path, Path],
) -> None:
    cwd, home = layout
    agent(cwd / "ci" / "agents", "ci-agent", "from env dir")
    config = load_config(cwd=cwd, home=home, env={"SUBAGENT_CONFIG_DIR": "ci"})
    assert set(config.agents) == {"ci-agent", "general-purpose"}
    assert config.servers == {}


def test_explicit_config_dir_beats_the_env_variable(tmp_path: Path) -> None:
    agent(tmp_path / "one" / "agents", "one", "d")
    agent(tmp_path / "two" / "agents", "two", "d")
    config = load_config(
        tmp_path / "one", cwd=tmp_path, env={"SUBAGENT_CONFIG_DIR": str(tmp_path / "two")}
    )
    assert "one" in config.agents and "two" not in config.agents


def test_missing_config_dir_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist") as info:
        load_config(tmp_path / "nope", cwd=tmp_path, env={})
    assert info.value.path == tmp_path / "nope"


def test_agent_name_comes_from_frontmatter_not_file_stem(tmp_path: Path) -> None:
    agent(tmp_path / "agents", "file-stem", "d", name="real-name")
    config = load_config(tmp_path, cwd=tmp_path, env={})
    assert "real-name" in config.agents and "file-stem" not in config.agents


def test_same_name_twice_in_one_dir_warns_and_first_file_wins(tmp_path: Path) -> None:
    agent(tmp_path / "agents", "a", "first", name="dup")
    agent(tmp_path / "agents", "b", "second", name="dup")
    config = load_config(tmp_path, cwd=tmp_path, env={})
    assert config.agents["dup"].description == "first"
    assert any("also defined" in w for w in config.warnings)


def test_broken_mcp_json_is_an_error(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text("{not json")
    with pytest.raises(ConfigError, match="invalid JSON") as info:
        load_config(cwd=tmp_path, home=tmp_path / "h", env={})
    assert info.value.path == tmp_path / ".mcp.json"


def test_server_variables_expand_from_the_given_env(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"s": {"command": "${BIN}"}}}))
    config = load_config(tmp_path, cwd=tmp_path, env={"BIN": "/x/srv"})
    assert config.servers["s"].command == "/x/srv"


def test_unusable_server_in_claude_codes_dot_mcp_json_is_skipped_with_a_warning(
    tmp_path: Path,
) -> None:
    (tmp_path / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "remote": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
                    "needs-token": {"command": "srv", "env": {"T": "${UNSET_TOKEN}"}},
                    "fine": {"command": "srv"},
                }
            }
        )
    )
    config = load_config(cwd=tmp_path, home=tmp_path / "h", env={})
    assert list(config.servers) == ["fine"]
    skipped = [w for w in config.warnings if w.startswith("server skipped")]
    assert len(skipped) == 2
    assert any("remote" in w for w in skipped) and any("UNSET_TOKEN" in w for w in skipped)


def test_unusable_server_in_our_own_mcp_json_is_still_an_error(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text(
        json.dumps({"mcpServers": {"needs-token": {"command": "srv", "env": {"T": "${UNSET_X}"}}}})
    )
    with pytest.raises(ConfigError, match="UNSET_X"):
        load_config(tmp_path, cwd=tmp_path, env={})
