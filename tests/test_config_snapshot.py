"""config/snapshot.py: a loaded config, frozen as JSON and thawed in a child, is the same
config; no expanded secret travels in it (issue 28.3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.config.discovery import load_config
from launcher.config.lockfile import AgentPin, Lock, ServerPin, ToolPin
from launcher.config.snapshot import freeze, snapshot_of, thaw
from launcher.config.types import Config, SandboxMode

SECRET = "s3cret-value-for-the-snapshot"
AGENT = """---
name: builder
description: Builds.
tools: [read, bash, "ext:gh/list_*", subagent]
disallowed_tools: [gh__delete]
allowed_subagents: [helper]
max_depth: 1
memory: project
max_turns: 7
isolation: worktree
sandbox: {mode: required, network: true, deny_read: [~/keys]}
expect:
  settle: 1.5
  tools_present: [read]
  run:
    scripted: s.yaml
    prompt: go
    tool_errors: [gh__list_issues]
---
You build.
"""
CLAUDE = """---
name: reviewer
tools: Read, mcp__gh__get
hooks:
  PreToolUse:
    - matcher: Read
      hooks: [{type: command, command: "echo checked", timeout: 5}]
mcpServers:
  - gh
  - solo:
      command: solo-server
      env: {TOKEN: '${SNAPSHOT_TOKEN}'}
---
You review.
"""
SERVERS = {
    "mcpServers": {
        "gh": {
            "command": "python",
            "args": ["-m", "mcp_servers.github"],
            "env": {"GITHUB_TOKEN": "${SNAPSHOT_TOKEN}"},
            "disabled_tools": ["delete"],
        },
        "remote": {
            "type": "http",
            "url": "https://example.invalid/mcp",
            "headers": {"Authorization": "Bearer ${SNAPSHOT_TOKEN}"},
            "auth": "oauth",
            "client_id": "cid",
            "scopes": ["read"],
        },
    },
    "sandbox": {"mode": "on", "network": False},
}


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    monkeypatch.setenv("SNAPSHOT_TOKEN", SECRET)
    root = tmp_path / "cfg"
    (root / "agents").mkdir(parents=True)
    (root / "agents" / "s.yaml").write_text("steps: [{say: hi}]\n")
    (root / "agents" / "builder.md").write_text(AGENT)
    (root / "agents" / "broken.md").write_text("---\nname: broken\ntools: 3\n---\nx\n")
    (root / "mcp.json").write_text(json.dumps(SERVERS))
    project = tmp_path / "project"
    (project / ".claude" / "agents").mkdir(parents=True)
    (project / ".claude" / "agents" / "reviewer.md").write_text(CLAUDE)
    (project / ".mcp.json").write_text(json.dumps(SERVERS))
    loaded = load_config(root, cwd=tmp_path)
    found = load_config(None, cwd=project, home=tmp_path / "home")  # a claude agent, inline
    return Config(
        agents={**loaded.agents, **found.agents},
        servers={**loaded.servers, **{f"p-{k}": v for k, v in found.servers.items()}},
        warnings=loaded.warnings,
        broken_agents=loaded.broken_agents,
        lock_path=loaded.lock_path,
        sandbox=loaded.sandbox,
    )


def round_trip(data: dict) -> dict:
    """Through JSON, as a Job line carries it."""
    return json.loads(json.dumps(data))


def test_a_thawed_config_equals_the_one_loaded(config: Config) -> None:
    assert {"builder", "reviewer", "general-purpose"} <= set(config.agents)
    assert config.agents["builder"].expect is not None and config.broken_agents

    thawed = thaw(round_trip(freeze(config, None)))

    assert thawed.config == config and thawed.lock is None
    builder = thawed.config.agents["builder"]
    assert builder.sandbox is not None and builder.sandbox.mode is SandboxMode.REQUIRED
    assert isinstance(builder.source, Path) and builder.expect == config.agents["builder"].expect
    assert thawed.config.agents["reviewer"].hooks == config.agents["reviewer"].hooks != ()
    assert thawed.config.agents["reviewer"].hooks[0].source is not None
    solo = thawed.config.agents["reviewer"].servers[0]
    assert solo.env == {"TOKEN": SECRET} and SECRET in solo.secrets  # masked as before
    assert thawed.config.servers["remote"].oauth == config.servers["remote"].oauth


def test_no_expanded_secret_is_in_the_snapshot(config: Config) -> None:
    text = json.dumps(freeze(config, None))
    assert SECRET not in text
    assert "${SNAPSHOT_TOKEN}" in text


def test_servers_are_expanded_in_the_child_from_its_own_environment(config: Config) -> None:
    thawed = thaw(round_trip(freeze(config, None)), env={"SNAPSHOT_TOKEN": "other-value-123"})
    assert thawed.config.servers["gh"].env == {"GITHUB_TOKEN": "other-value-123"}


def test_the_lock_travels_as_it_was_read(config: Config, tmp_path: Path) -> None:
    lock = Lock(
        {"builder": AgentPin({"gh__list": ToolPin("gh__list", "gh", "list", "d", "s")},
                             {"gh": ServerPin("github", "1.0")})}
    )  # fmt: skip
    assert thaw(round_trip(freeze(config, lock))).lock == lock
    assert config.lock_path is not None and not config.lock_path.exists()
    assert thaw(round_trip(snapshot_of(config))).lock is None  # no lock file: no pins


def test_a_snapshot_of_another_version_or_an_unknown_type_is_refused(config: Config) -> None:
    with pytest.raises(ValueError, match="version"):
        thaw({**freeze(config, None), "version": 99})
    with pytest.raises(TypeError, match="cannot hold a object"):
        freeze(Config(agents={}, servers={}, warnings=(object(),)), None)  # type: ignore[arg-type]
