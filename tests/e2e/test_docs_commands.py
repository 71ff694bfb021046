"""Every command block in README.md and docs/*.md runs, offline, as written.

The convention, for whoever writes a page:

- A fenced block tagged `sh` is commands only (no `$ ` prompt, no output) that run
  offline. This test runs a page's `sh` blocks in order, each with `bash -e -o pipefail`,
  in one fresh project directory, with `SUBAGENT_HOME` and `HOME` in a temporary
  directory and this venv's `subagent` first on `PATH`. Each block must exit 0.
- The project is set up by `subagent init` first (the `.subagent/` example: the `triage`
  agent on the stub `github` server, a scripted model), unless the page runs a bare
  `subagent init` itself, which then finds an empty directory.
- Anything that cannot run so (network, API keys, a host program such as Claude Code, a
  command that fails on purpose, shown output) is tagged `console` or `text`.

Every page under docs/ is read, so blocks written by any page's owner are run too.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import assert_all_gone, run_process

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```sh[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
BARE_INIT = re.compile(r"^subagent init[ \t]*$", re.M)
BLOCK_LIMIT_S = 300.0
"""Bounds one block (a batch or a check runs a few sessions); only a hang comes near it."""


def sh_blocks(page: Path) -> list[str]:
    return [m.group(1) for m in BLOCK.finditer(page.read_text(encoding="utf-8"))]


def page_id(page: Path) -> str:
    return str(page.relative_to(REPO))


def env_for(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUBAGENT_")}
    env["SUBAGENT_HOME"] = str(tmp_path / "state")
    env["HOME"] = str(tmp_path / "home")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    (tmp_path / "home").mkdir()
    return env


def run_block(block: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_process(
        ["bash", "-e", "-o", "pipefail", "-c", block], cwd=cwd, env=env, timeout=BLOCK_LIMIT_S
    )


def test_the_pages_have_blocks_to_run() -> None:
    # The parser must find the README's quick start, or every case below passes vacuously.
    readme = sh_blocks(REPO / "README.md")
    assert any(BARE_INIT.search(b) for b in readme)
    assert all(not b.lstrip().startswith("$ ") for p in PAGES for b in sh_blocks(p))


@pytest.mark.parametrize("page", [p for p in PAGES if sh_blocks(p)], ids=page_id)
def test_every_sh_block_of_the_page_runs(page: Path, tmp_path: Path) -> None:
    assert (Path(sys.executable).parent / "subagent").exists(), "subagent is not installed"
    env = env_for(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    blocks = sh_blocks(page)
    if not any(BARE_INIT.search(b) for b in blocks):
        setup = run_block("subagent init", project, env)
        assert setup.returncode == 0, setup.stdout + setup.stderr
    for number, block in enumerate(blocks, 1):
        proc = run_block(block, project, env)
        assert proc.returncode == 0, (
            f"{page_id(page)}, sh block {number} exited {proc.returncode}:\n{block}\n"
            f"--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}"
        )
    assert_all_gone([], tmp_path)
