"""Isolated runs as an unprivileged user (issue 28): a repository, a shell agent, the CLI.

As root the launcher runs through `setpriv` as uid 65534 (tests/e2e/unprivileged.py), in a
directory that user owns: its repository, config, SUBAGENT_HOME and HOME. What the test
reads afterwards it reads as root, with git told the repository is safe.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import parse_events, write_config
from tests.e2e.unprivileged import NOBODY, shared_dir, user_prefix
from tests.worktree_support import IDENTITY, make_repo

RUN_LIMIT_S = 180.0
"""A few isolated runs, each a Python launcher or worker and a checkout, on a loaded box."""
README = "# project\n\nline to edit\n"
SHELL_AGENT = "---\nname: shell\ntools: [bash, write]\nextensions: false\n---\nRun.\n"


@dataclass
class World:
    """One test's directory, owned by the unprivileged user: repository, config, state."""

    root: Path

    @property
    def repo(self) -> Path:
        return self.root / "repo"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def config(self) -> Path:
        return self.root / "cfg"

    def git(self, *args: str, cwd: Path | None = None) -> str:
        """git as root in a repository the other user owns (told it is safe)."""
        done = subprocess.run(
            ["git", "-c", "safe.directory=*", *IDENTITY, *args],
            cwd=cwd or self.repo,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
        return done.stdout

    def branches(self) -> list[str]:
        out = self.git("branch", "--list", "--format=%(refname:short)", "subagent/*")
        return sorted(out.split())

    def script(self, name: str, commands: list[str], *, say: str = "done") -> Path:
        """A scripted model: each command one bash call (one turn each), then `say`."""
        steps: list[dict[str, Any]] = [
            {"call": [{"tool": "bash", "args": {"command": c}}]} for c in commands
        ]
        path = self.root / f"{name}.json"
        path.write_text(json.dumps({"steps": [*steps, {"say": say}]}))
        return path

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`subagent ARGS` as the unprivileged user, in the world's root."""
        prefix, _ = user_prefix()
        if os.geteuid() == 0:
            for path in [self.root, *self.root.rglob("*")]:
                os.lchown(path, NOBODY, NOBODY)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root / "home"),
            "SUBAGENT_HOME": str(self.state),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        return subprocess.run(
            [*prefix, sys.executable, "-m", "launcher.cli", *args],
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_LIMIT_S,
            stdin=subprocess.DEVNULL,
        )


@contextmanager
def world(files: dict[str, str] | None = None) -> Iterator[World]:
    """A fresh world with a committed repository; skips where no unprivileged user can run."""
    _, why_not = user_prefix()
    if why_not is not None:
        pytest.skip(why_not)
    made = World(shared_dir())
    try:
        (made.root / "home").mkdir()
        make_repo(made.repo, files or {"README.md": README})
        write_config(made.config, {}, {"shell": SHELL_AGENT})
        yield made
    finally:
        shutil.rmtree(made.root, ignore_errors=True)


def worktree_event(run: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The last `--json` line of a spawn: its `worktree` event."""
    assert run.returncode == 0, run.stderr
    end = parse_events(run.stdout)[-1]
    assert end["type"] == "worktree", end
    return end


def tool_results(run: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [e for e in parse_events(run.stdout) if e["type"] == "tool_result"]


def session_events(w: World, row: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorded events of a batch result line's session."""
    events = w.state / "sessions" / str(row["session_id"]) / "events.jsonl"
    return parse_events(events.read_text())
