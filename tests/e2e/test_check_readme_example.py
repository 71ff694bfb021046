"""The manual's CI example (docs/ci.md, "The shipped example") runs as written: its files
are the shipped `configs/` files, and its workflow's `subagent check` step passes on them."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

from tests.e2e.conftest import assert_all_gone, cli_argv, run_process

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "ci.md"
SECTION_TITLE = "## The shipped example"


def section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(SECTION_TITLE)
    end = text.find("\n## ", start + len(SECTION_TITLE))
    return text[start:] if end < 0 else text[start:end]


def shown_files(text: str) -> dict[str, str]:
    """Each "`path`:" line followed by a fenced block: path -> the block's text."""
    pattern = re.compile(r"^`([^`]+)`[^\n]*:\n\n```\w*\n(.*?)^```", re.S | re.M)
    return {m.group(1): m.group(2) for m in pattern.finditer(text)}


def test_readme_shows_the_shipped_files_verbatim() -> None:
    files = shown_files(section())
    shown_paths = (
        "configs/agents/triage.md",
        "configs/checks/triage-run.yaml",
        "configs/scripts/triage.yaml",
        "configs/mcp.json",
    )
    for path in shown_paths:
        assert files[path] == (REPO / path).read_text(encoding="utf-8"), path
    # The lock is shown in part: what it shows is what the shipped lock pins.
    shown = json.loads(files["configs/subagent.lock.json"])
    shipped = json.loads((REPO / "configs" / "subagent.lock.json").read_text())
    for name, pin in shown["agents"]["triage"]["tools"].items():
        assert shipped["agents"]["triage"]["tools"][name] == pin


def test_the_workflow_check_step_passes_on_the_shipped_configs(tmp_path: Path) -> None:
    workflow = yaml.safe_load(shown_files(section())[".github/workflows/agents.yml"])
    steps = [s for s in workflow["jobs"]["check"]["steps"] if "subagent check" in s.get("run", "")]
    assert len(steps) == 1
    (step,) = steps
    shutil.copytree(REPO / "configs", tmp_path / "configs")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUBAGENT_")}
    env["SUBAGENT_HOME"] = str(tmp_path / "state")
    # The stub servers run as `python -m mcp_servers...`: this interpreter's python.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(step.get("env", {}))
    argv = shlex.split(step["run"])
    assert argv[:2] == ["subagent", "check"]
    proc = run_process(cli_argv(*argv[1:]), cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The output the README shows lists the same checks, all passing.
    shown = re.search(
        r"\$ SUBAGENT_CONFIG_DIR=configs subagent check.*?\n(.*?)```", section(), re.S
    )
    assert shown is not None
    shown_rows = [line.split()[0] for line in shown.group(1).splitlines()[1:-1]]
    rows = [line.split()[0] for line in proc.stdout.splitlines()[1:-1]]
    assert rows == shown_rows
    suite = ET.parse(tmp_path / "report.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == (str(len(rows)), "0")
    assert_all_gone([], tmp_path)
