"""Dialect by place: a `.claude` folder holds Claude Code files whichever flag names it;
a broken file claims its `name:` so a wider agent of that name never runs instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.config.discovery import (
    PROJECT_AGENT_DIRS,
    USER_AGENT_DIRS,
    load_config,
    resolve_agent,
)
from launcher.config.places import folder_dialect
from launcher.errors import ConfigError
from launcher.toolset.scope import ToolScope

CLAUDE_AGENT = "---\nname: reviewer\ndisallowedTools: [Write, Edit]\n---\nReview.\n"


def test_every_discovery_folder_has_the_dialect_its_place_says() -> None:
    for folder, dialect in (*PROJECT_AGENT_DIRS, *USER_AGENT_DIRS):
        assert (folder_dialect(Path(folder)) or "subagent") == dialect.name


@pytest.mark.parametrize(
    ("folder", "dialect"),
    [(".claude", "claude"), (".pi", "pi"), (".subagent", "subagent"), ("cfg", "subagent")],
)
def test_config_dir_is_read_in_the_dialect_of_its_place(
    tmp_path: Path, folder: str, dialect: str
) -> None:
    agents = tmp_path / "proj" / folder / "agents"
    agents.mkdir(parents=True)
    (agents / "a.md").write_text("---\ndescription: x\n---\nhi\n")
    config = load_config(tmp_path / "proj" / folder, cwd=tmp_path, home=tmp_path, env={})
    assert config.agents["a"].dialect == dialect


def test_config_dir_at_a_claude_folder_honours_disallowed_tools(tmp_path: Path) -> None:
    agents = tmp_path / "proj" / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(CLAUDE_AGENT)
    config = load_config(tmp_path / "proj" / ".claude", cwd=tmp_path, home=tmp_path, env={})
    builtins = ToolScope(config.agents["reviewer"]).builtin_names()
    assert "write" not in builtins and "edit" not in builtins and "read" in builtins
    assert not [w for w in config.warnings if "unknown field" in w]


@pytest.mark.parametrize("spelling", ["plain", "dotdot", "symlink"])
def test_config_dir_spelt_any_way_reads_the_claude_folder_and_its_settings(
    tmp_path: Path, spelling: str
) -> None:
    claude = tmp_path / "proj" / ".claude"
    (claude / "agents").mkdir(parents=True)
    (claude / "agents" / "reviewer.md").write_text("---\nname: reviewer\n---\nReview.\n")
    (claude / "settings.json").write_text('{"permissions": {"deny": ["Bash"]}}')
    (tmp_path / "link").symlink_to(claude)
    given = {"plain": claude, "dotdot": claude / "agents" / "..", "symlink": tmp_path / "link"}
    config = load_config(given[spelling], cwd=tmp_path, home=tmp_path, env={})
    assert config.agents["reviewer"].dialect == "claude"
    assert "bash" not in ToolScope(config.agents["reviewer"]).builtin_names()


@pytest.mark.parametrize(
    ("folder", "file", "text"),
    [
        (
            ".codex/agents",
            "r.toml",
            'name = "r"\nsandbox_mode = "read-only"\ndeveloper_instructions = "x"\n',
        ),
        (".gemini/agents", "r.md", "---\nname: r\ntools: [read_file]\n---\nx\n"),
        (".opencode/agent", "r.md", "---\ntools:\n  write: false\n---\nx\n"),
    ],
)
def test_a_host_folder_is_read_in_its_dialect(
    tmp_path: Path, folder: str, file: str, text: str
) -> None:
    (tmp_path / folder).mkdir(parents=True)
    (tmp_path / folder / file).write_text(text)
    host = tmp_path / folder.split("/")[0]
    config = load_config(host, cwd=tmp_path, home=tmp_path, env={})
    assert config.agents["r"].dialect == host.name.lstrip(".")
    assert "write" not in ToolScope(config.agents["r"]).builtin_names()


@pytest.mark.parametrize(
    "broken",
    [
        "---\nname: reviewer\ntools: Read\npermissionMode: plan\n---\n",
        "\n---\nname: reviewer\ntools: Read\n---\n",
        "---\nname: reviewer\non: push\n---\n",
        "---\nname: 'reviewer'\ntools: [Read\n---\n",
        "---\nname: &n reviewer\ntools: Read\n---\n",
        "---\nname: !!str reviewer\ntools: Read\n---\n",
        "---\nname: >-\n  reviewer\ntools: [Read\n---\n",
        '---\nname: "rev\\x69ewer"\ntools: [Read\n---\n',
    ],
    ids=["refused-field", "displaced", "bad-key", "bad-yaml", "anchor", "tag", "block", "escape"],
)
def test_a_broken_file_claims_its_name_over_a_wider_agent_found_later(
    tmp_path: Path, broken: str
) -> None:
    project = tmp_path / "proj"
    (project / ".claude" / "agents").mkdir(parents=True)
    (project / ".claude" / "agents" / "narrow-reviewer.md").write_text(broken)
    home_agents = tmp_path / "home" / ".claude" / "agents"
    home_agents.mkdir(parents=True)
    (home_agents / "reviewer.md").write_text("---\nname: reviewer\n---\nEvery tool.\n")
    config = load_config(cwd=project, home=tmp_path / "home", env={})
    assert "reviewer" not in config.agents
    with pytest.raises(ConfigError):
        resolve_agent(config, "reviewer")


def test_a_project_agent_file_symlinked_out_of_the_project_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("root:x:0:0:the secret prompt\n")
    agents = tmp_path / "proj" / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "passwd.md").symlink_to(outside)
    (agents / "inside.md").symlink_to(agents.parent / "kept.txt")
    (agents.parent / "kept.txt").write_text("---\ndescription: x\n---\nHi.\n")
    config = load_config(cwd=tmp_path / "proj", home=tmp_path / "home", env={})
    assert "passwd" not in config.agents and "inside" in config.agents
    assert any("passwd.md" in w and "symlink out of the project" in w for w in config.warnings)
