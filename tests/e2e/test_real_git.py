"""PyPI mcp-server-git on a repository the test makes: status and log through a spawn."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e import real_servers as rs

pytestmark = pytest.mark.e2e

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Interop Test",
    "GIT_AUTHOR_EMAIL": "interop@example.invalid",
    "GIT_COMMITTER_NAME": "Interop Test",
    "GIT_COMMITTER_EMAIL": "interop@example.invalid",
}


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("interop\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "First interop commit")
    (repo / "untracked.txt").write_text("new\n")
    return repo


def test_git_server_status_and_log_through_a_spawn(repo: Path, tmp_path: Path) -> None:
    server = rs.pypi_server("mcp_server_git", "--repository", str(repo))
    config_dir = rs.write_config(tmp_path / "config", {"git": server})
    calls = [
        {"tool": "git__git_status", "args": {"repo_path": str(repo)}},
        {"tool": "git__git_log", "args": {"repo_path": str(repo), "max_count": 5}},
    ]

    events = rs.spawn_events(config_dir, "git", calls, tmp_path=tmp_path)

    results = rs.tool_results(events)
    status, log = results["git__git_status"], results["git__git_log"]
    assert status["is_error"] is False
    assert "untracked.txt" in status["content"]
    assert log["is_error"] is False
    assert "First interop commit" in log["content"]
    assert rs.connected_protocol(events, "git") == rs.MODERN_PROTOCOL
