"""Claude Code's settings files narrow Claude Code agents: denials, `ask`, hooks, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.config.claude_settings import read_claude_settings, settings_files
from launcher.config.discovery import load_config
from launcher.config.types import Selector

CLAUDE_AGENT = (
    "---\nname: {name}\ndescription: x\ntools: Read, Bash, Edit, mcp__github\n---\nbody\n"
)
PI_AGENT = "---\nname: pi-one\ndescription: x\n---\nbody\n"


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


def project(tmp_path: Path, settings: object = None, local: object = None) -> Path:
    root = tmp_path / "proj"
    write(root / ".claude" / "agents" / "reviewer.md", CLAUDE_AGENT.format(name="reviewer"))
    write(root / ".pi" / "agents" / "pi-one.md", PI_AGENT)
    if settings is not None:
        write(root / ".claude" / "settings.json", settings)
    if local is not None:
        write(root / ".claude" / "settings.local.json", local)
    (tmp_path / "home").mkdir(exist_ok=True)
    return root


def raw(selectors: tuple[Selector, ...]) -> list[str]:
    return list(dict.fromkeys(s.raw for s in selectors))


def test_deny_and_ask_rules_narrow_a_claude_agent_and_leave_others_alone(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {"permissions": {"deny": ["Bash(rm:*)", "mcp__github__create_issue"], "ask": ["Edit"]}},
    )
    config = load_config(cwd=root, home=tmp_path / "home", env={})
    assert raw(config.agents["reviewer"].disallowed_tools) == [
        "bash",
        "mcp__github__create_issue",
        "edit",
    ]
    assert config.agents["pi-one"].disallowed_tools == ()
    notes = "\n".join(config.warnings)
    assert "'Bash(rm:*)': the whole Bash tool is denied" in notes
    assert "nobody to ask here, so these are denied" in notes


@pytest.mark.parametrize(
    ("rule", "entries"),
    [
        ("*", ["*"]),
        ("mcp__*", ["mcp__*"]),
        ("mcp__github", ["mcp__github"]),
        ("mcp__github__*", ["mcp__github__*"]),
        ("Read(./secrets/**)", ["read"]),
        ("Bash(*)", ["bash"]),
        ("B*", ["bash"]),
        ("WebFetch", []),
    ],
)
def test_each_kind_of_deny_rule(tmp_path: Path, rule: str, entries: list[str]) -> None:
    path = write(tmp_path / "s.json", {"permissions": {"deny": [rule]}})
    assert raw(read_claude_settings([path], None).deny) == entries


def test_rules_of_every_file_add_up_and_allow_is_ignored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home / ".claude" / "settings.json", {"permissions": {"deny": ["Write"]}})
    root = project(
        tmp_path,
        {"permissions": {"deny": ["Edit"], "allow": ["Bash", "mcp__github"]}},
        local={"permissions": {"deny": ["Read"]}},
    )
    settings = read_claude_settings(settings_files(root, home), root)
    assert raw(settings.deny) == ["write", "edit", "read"]
    assert len(settings.files) == 3


def test_a_hermetic_config_dir_reads_no_user_settings(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home / ".claude" / "settings.json", {"permissions": {"deny": ["Write"]}})
    assert settings_files(None, None) == []
    assert read_claude_settings(settings_files(None, None), None).deny == ()


@pytest.mark.parametrize("mode", ["plan", "dontAsk", "readOnly"])
def test_a_default_mode_that_would_narrow_refuses_claude_agents(tmp_path: Path, mode: str) -> None:
    text = json.dumps({"permissions": {"defaultMode": mode}}, indent=2)
    root = project(tmp_path, text)
    config = load_config(cwd=root, home=tmp_path / "home", env={})
    assert "reviewer" not in config.agents and "pi-one" in config.agents
    error = config.broken_agents["reviewer"]
    assert f"settings.json:3: field 'permissions.defaultMode': '{mode}'" in error


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions", "auto"])
def test_quiet_default_modes_change_nothing(tmp_path: Path, mode: str) -> None:
    root = project(tmp_path, {"permissions": {"defaultMode": mode}})
    assert "reviewer" in load_config(cwd=root, home=tmp_path / "home", env={}).agents


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{\n  "permissions": {\n    "deny": "Bash"\n  }\n}', ":3: field 'permissions.deny'"),
        ('{\n  "permissions": [1]\n}', ":2: field 'permissions'"),
        ('{\n  "hooks": {"PreToolUse": [{"hooks": [{"type": "http"}]}]}\n}', ":2: field 'hooks'"),
        ('{\n  "disableAllHooks": "yes"\n}', ":2: field 'disableAllHooks'"),
        ('{\n  "permissions": {\n', ":3: invalid JSON"),
        ("[1, 2]", ":1: expected a JSON object"),
    ],
)
def test_a_malformed_settings_file_refuses_claude_agents_naming_file_line_field(
    tmp_path: Path, text: str, where: str
) -> None:
    root = project(tmp_path, text)
    config = load_config(cwd=root, home=tmp_path / "home", env={})
    assert "reviewer" not in config.agents and "pi-one" in config.agents
    assert f"{root / '.claude' / 'settings.json'}{where}" in config.broken_agents["reviewer"]


def test_settings_hooks_join_an_agents_own_and_name_the_project(tmp_path: Path) -> None:
    hook = {"type": "command", "command": "./guard.sh"}
    root = project(tmp_path, {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}})
    write(
        root / ".claude" / "agents" / "own.md",
        "---\nname: own\nhooks:\n  PostToolUse:\n"
        "    - hooks: [{type: command, command: ./lint.sh}]\n---\n",
    )
    config = load_config(cwd=root, home=tmp_path / "home", env={})
    own = config.agents["own"]
    assert [(h.event, h.command, h.origin) for h in own.hooks] == [
        ("PostToolUse", "./lint.sh", "agent"),
        ("PreToolUse", "./guard.sh", "settings"),
    ]
    assert {h.project_dir for h in own.hooks} == {root}
    assert config.agents["pi-one"].hooks == ()


def test_one_handler_in_two_files_runs_once(tmp_path: Path) -> None:
    hooks = {
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}]
        }
    }
    root = project(tmp_path, hooks, local=hooks)
    assert len(read_claude_settings(settings_files(root, None), root).hooks) == 1


def test_disable_all_hooks_follows_precedence(tmp_path: Path) -> None:
    hooks = {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x"}]}]}}
    root = project(tmp_path, {**hooks, "disableAllHooks": True})
    config = load_config(cwd=root, home=tmp_path / "home", env={})
    assert config.agents["reviewer"].hooks == ()
    root = project(tmp_path, {**hooks, "disableAllHooks": True}, local={"disableAllHooks": False})
    config = load_config(cwd=root, home=tmp_path / "home", env={})
    assert len(config.agents["reviewer"].hooks) == 1


def test_user_settings_apply_without_a_config_dir(tmp_path: Path) -> None:
    root = project(tmp_path)
    write(tmp_path / "home" / ".claude" / "settings.json", {"permissions": {"deny": ["Bash"]}})
    config = load_config(cwd=root, home=tmp_path / "home", env={})
    assert raw(config.agents["reviewer"].disallowed_tools) == ["bash"]
