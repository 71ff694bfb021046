"""Resolving agents and `--ext` names; broken files and unknown servers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.config.discovery import check_ext_names, load_config, resolve_agent
from launcher.errors import ConfigError, UsageError


def make_dir(tmp_path: Path, agents: dict[str, str], servers: tuple[str, ...] = ()) -> Path:
    (tmp_path / "agents").mkdir()
    for stem, text in agents.items():
        (tmp_path / "agents" / f"{stem}.md").write_text(text)
    entries = {name: {"command": "srv"} for name in servers}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": entries}))
    return tmp_path


def test_broken_agent_file_is_reported_and_does_not_hide_others(tmp_path: Path) -> None:
    cfg = make_dir(tmp_path, {"bad": "---\nmax_turns: zero\n---\n", "good": "---\n---\nhi\n"})
    config = load_config(cfg, cwd=tmp_path, env={})
    assert "good" in config.agents and "bad" not in config.agents
    assert "max_turns" in config.broken_agents["bad"]
    assert any("agent file skipped" in w and "bad.md" in w for w in config.warnings)


def test_resolving_a_broken_agent_raises_its_config_error(tmp_path: Path) -> None:
    cfg = make_dir(tmp_path, {"bad": "---\nmemory: global\n---\n"})
    config = load_config(cfg, cwd=tmp_path, env={})
    with pytest.raises(ConfigError) as info:
        resolve_agent(config, "bad")
    assert not isinstance(info.value, UsageError)
    assert "bad.md:2: field 'memory'" in str(info.value)


def test_broken_project_agent_is_not_replaced_by_a_later_one(tmp_path: Path) -> None:
    project = tmp_path / ".subagent" / "agents"
    project.mkdir(parents=True)
    (project / "general-purpose.md").write_text("---\nisolated: maybe\n---\n")
    config = load_config(cwd=tmp_path, home=tmp_path / "h", env={})
    with pytest.raises(ConfigError, match="isolated"):
        resolve_agent(config, "general-purpose")


def test_unknown_agent_is_usage_error_listing_known_names(tmp_path: Path) -> None:
    config = load_config(make_dir(tmp_path, {"alpha": "hi"}), cwd=tmp_path, env={})
    with pytest.raises(UsageError, match="unknown agent 'zeta'") as info:
        resolve_agent(config, "zeta")
    assert "alpha, general-purpose" in str(info.value)
    assert info.value.exit_code == 2


def test_resolve_returns_the_agent(tmp_path: Path) -> None:
    config = load_config(make_dir(tmp_path, {"alpha": "hi"}), cwd=tmp_path, env={})
    assert resolve_agent(config, "alpha").prompt == "hi"


def test_ext_name_of_no_configured_server_is_usage_error(tmp_path: Path) -> None:
    config = load_config(make_dir(tmp_path, {}, ("github",)), cwd=tmp_path, env={})
    check_ext_names(config, ["github"])
    with pytest.raises(UsageError, match="no configured server named 'gitlab'") as info:
        check_ext_names(config, ["github", "gitlab"])
    assert info.value.field == "--ext"
    assert "github" in str(info.value)


def test_ext_selector_naming_no_server_is_a_warning(tmp_path: Path) -> None:
    text = "---\ntools: read, ext:github, ext:ghost/x\nextensions: [phantom]\n---\n"
    config = load_config(make_dir(tmp_path, {"a": text}, ("github",)), cwd=tmp_path, env={})
    assert "a" in config.agents
    joined = "\n".join(config.warnings)
    assert "'ext:ghost/x' names no configured server" in joined
    assert "'phantom' names no configured server" in joined
    assert "ext:github'" not in joined
