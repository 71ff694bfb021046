"""Discovery of other tools' agent folders: order, first definition wins, hermetic config dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.config.discovery import load_config, resolve_agent
from launcher.errors import ConfigError


def agent(path: Path, description: str, extra: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ndescription: {description}\n{extra}---\nbody\n")


def test_discovery_order_first_definition_wins(tmp_path: Path) -> None:
    cwd, home = tmp_path / "p", tmp_path / "home"
    places = [
        cwd / ".subagent/agents",
        cwd / ".claude/agents",
        cwd / ".pi/agents",
        cwd / ".agents/agents",
        home / ".config/subagent/agents",
        home / ".claude/agents",
        home / ".pi/agent/agents",
    ]
    for rank in range(len(places)):
        for later in places[rank:]:
            agent(later / f"a{rank}.md", str(later))
    config = load_config(cwd=cwd, home=home, env={})
    for rank, folder in enumerate(places):
        assert config.agents[f"a{rank}"].description == str(folder)
    dialects = [config.agents[f"a{rank}"].dialect for rank in range(len(places))]
    assert dialects == ["subagent", "claude", "pi", "pi", "subagent", "claude", "pi"]


def test_config_dir_stays_hermetic(tmp_path: Path) -> None:
    cwd, home = tmp_path / "p", tmp_path / "home"
    agent(cwd / ".claude/agents/c.md", "claude")
    agent(home / ".pi/agent/agents/p.md", "pi")
    (tmp_path / "cfg").mkdir()
    config = load_config(tmp_path / "cfg", cwd=cwd, home=home, env={})
    assert set(config.agents) == {"general-purpose"}


def test_a_disabled_agent_hides_one_found_later(tmp_path: Path) -> None:
    cwd, home = tmp_path / "p", tmp_path / "home"
    agent(cwd / ".pi/agents/general-purpose.md", "off", "enabled: false\n")
    config = load_config(cwd=cwd, home=home, env={})
    assert "general-purpose" not in config.agents
    with pytest.raises(ConfigError, match="disabled"):
        resolve_agent(config, "general-purpose")
