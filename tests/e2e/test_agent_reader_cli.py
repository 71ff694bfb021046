"""The agent reader through the real CLI and a real stub server: a deny entry spelt as the
model sees a sanitized server's tool is applied, `--config-dir PROJECT/.claude` reads
Claude Code files, and a broken file keeps a wider same-named agent from running."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Run, Subagent, stub

pytestmark = pytest.mark.e2e

DENIER = """---
name: denier
description: Works on issues, never files one, never runs a shell.
disallowedTools: [mcp__gh_stub__create_issue, bash]
---
You work on issues.
"""
REVIEWER = "---\nname: reviewer\ndisallowedTools: [Write, Edit]\n---\nReview.\n"
BROKEN = "\n---\nname: reviewer\ntools: Read\n---\nThe blank first line displaces it.\n"


@pytest.fixture
def project(subagent: Subagent) -> Path:
    root = subagent.cwd
    servers = {"gh.stub": stub("github", "--call-log", str(root.parent / "github.calls"))}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    agents = root / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "denier.md").write_text(DENIER)
    (agents / "reviewer.md").write_text(REVIEWER)
    (root.parent / "home").mkdir()
    return root


def run(subagent: Subagent, *args: str) -> Run:
    return subagent.run(*args, env={"HOME": str(subagent.cwd.parent / "home")})


def names(report: Run) -> set[str]:
    assert report.code == 0, report.stderr
    return {tool["name"] for tool in report.json()["active"]}


def test_a_deny_spelt_as_the_model_sees_a_sanitized_server_applies(
    subagent: Subagent, project: Path
) -> None:
    report = run(subagent, "tools", "denier", "--json")
    offered = names(report)
    assert "mcp__gh_stub__list_issues" in offered
    assert "mcp__gh_stub__create_issue" not in offered
    assert "Bash" not in offered and "Read" in offered
    assert "names no configured server" not in report.stderr


def test_config_dir_at_the_claude_folder_reads_claude_files(
    subagent: Subagent, project: Path
) -> None:
    report = run(subagent, "tools", "reviewer", "--json", "--config-dir", str(project / ".claude"))
    offered = names(report)
    assert "Read" in offered and not {"Write", "Edit"} & offered
    assert "unknown field" not in report.stderr


@pytest.mark.parametrize(
    "broken",
    [BROKEN, "---\nname: &n reviewer\ntools: Read\n---\nAn anchor on the name.\n"],
    ids=["displaced", "anchor"],
)
def test_a_broken_file_keeps_a_wider_agent_of_its_name_from_running(
    subagent: Subagent, project: Path, broken: str
) -> None:
    (project / ".claude" / "agents" / "reviewer.md").unlink()
    (project / ".claude" / "agents" / "narrow.md").write_text(broken)
    user_agents = project.parent / "home" / ".claude" / "agents"
    user_agents.mkdir(parents=True)
    (user_agents / "reviewer.md").write_text("---\nname: reviewer\n---\nEvery tool.\n")
    report = run(subagent, "tools", "reviewer", "--json")
    assert report.code == 2
    assert "narrow.md:2" in report.stderr and "Traceback" not in report.stderr
