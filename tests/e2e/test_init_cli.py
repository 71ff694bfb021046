"""`subagent init [DIR] [--ci]` writes a config that works at once and offline, and never
overwrites anything: a second run exits 2 naming the file and leaves every file as it was."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml

from tests.e2e.conftest import Subagent, assert_all_gone

pytestmark = pytest.mark.e2e

WRITTEN = [
    ".subagent/mcp.json",
    ".subagent/agents/triage.md",
    ".subagent/scripts/triage.yaml",
    ".subagent/checks/triage-run.yaml",
    ".subagent/subagent.lock.json",
]


REPO = Path(__file__).resolve().parents[2]


def readme_init_output() -> list[str]:
    """The `wrote ...` lines the README's quick start shows for `subagent init`."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(r"```text\n(wrote .*?)```", text, re.S)
    assert found is not None, "the README shows no init output"
    return found.group(1).splitlines()


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "home" not in p.relative_to(root).parts
    }


def test_init_writes_a_config_that_checks_and_spawns(subagent: Subagent) -> None:
    got = subagent.run("init")
    assert got.code == 0, got.stderr
    for name in WRITTEN:
        assert (subagent.cwd / name).is_file(), name
        assert f"wrote {name}" in got.stdout
    assert not (subagent.cwd / ".github").exists()
    # The README's quick start shows this output as it is.
    assert [line for line in got.stdout.splitlines() if line.startswith("wrote ")] == (
        readme_init_output()
    )
    servers = json.loads((subagent.cwd / ".subagent/mcp.json").read_text())["mcpServers"]
    assert list(servers) == ["github"]
    assert servers["github"]["args"] == ["-P", "-m", "mcp_servers.github"]
    lock = json.loads((subagent.cwd / ".subagent/subagent.lock.json").read_text())
    assert "github__list_issues" in lock["agents"]["triage"]["tools"]
    checked = subagent.run("check")
    assert checked.code == 0, checked.stdout + checked.stderr
    assert "2 passed, 0 failed" in checked.stdout
    spawned = subagent.run("spawn", "triage", "Triage the open issues")
    assert spawned.code == 0, spawned.stderr
    assert "acme/widgets#1" in spawned.stdout
    assert 'error Tool "github__create_issue" is not available' in spawned.stderr
    assert_all_gone([], subagent.cwd)


def test_init_twice_exits_2_naming_the_file_and_changes_nothing(subagent: Subagent) -> None:
    assert subagent.run("init").code == 0
    before = tree(subagent.cwd)
    again = subagent.run("init", "--ci")
    assert again.code == 2
    assert f"{subagent.cwd}/.subagent/mcp.json already exists" in again.stderr
    assert "Traceback" not in again.stderr
    assert tree(subagent.cwd) == before


def test_a_lone_existing_lock_is_not_overwritten_either(subagent: Subagent) -> None:
    lock = subagent.cwd / ".subagent" / "subagent.lock.json"
    lock.parent.mkdir()
    lock.write_text("{}")
    got = subagent.run("init")
    assert got.code == 2
    assert f"{lock} already exists" in got.stderr
    assert lock.read_text() == "{}"
    assert sorted(p.name for p in lock.parent.iterdir()) == ["subagent.lock.json"]


def test_init_ci_in_a_new_directory_writes_a_workflow_that_parses(subagent: Subagent) -> None:
    got = subagent.run("init", "project", "--ci")
    assert got.code == 0, got.stderr
    root = subagent.cwd / "project"
    text = (root / ".github/workflows/agents.yml").read_text()
    assert "your-" + "org" not in text
    workflow = yaml.safe_load(text)
    # The JUnit step writes a check run: the token needs checks: write, and nothing more.
    assert workflow["permissions"] == {"contents": "read", "checks": "write"}
    steps = workflow["jobs"]["check"]["steps"]
    # An editable install knows no address a runner can reach: the repository variable.
    (install,) = [s for s in steps if "pip install" in s.get("run", "")]
    assert install["env"] == {"SUBAGENT_REQUIREMENT": "${{ vars.SUBAGENT_REQUIREMENT }}"}
    assert 'pip install "$SUBAGENT_REQUIREMENT"' in install["run"]
    assert "exit 1" in install["run"]
    (check,) = [s for s in steps if s.get("run", "").startswith("subagent check")]
    assert check["run"] == "subagent check --junit report.xml"
    assert set(check["env"]) == {"SUBAGENT_PYTHON"}
    assert any("junit" in str(s.get("uses", "")) for s in steps)
    assert "cd project" in got.stdout


def test_the_init_ci_check_step_checks_every_dialects_agents(subagent: Subagent) -> None:
    """The workflow's check step, run as the runner would, reads `.claude/agents/` too."""
    assert subagent.run("init", "--ci").code == 0
    workflow = yaml.safe_load((subagent.cwd / ".github/workflows/agents.yml").read_text())
    (check,) = [
        s for s in workflow["jobs"]["check"]["steps"] if "subagent check" in s.get("run", "")
    ]
    env = {k: sys.executable for k in check["env"]}
    claude = subagent.cwd / ".claude" / "agents"
    claude.mkdir(parents=True)
    reviewer = "---\nname: reviewer\ndescription: Reviews.\ntools: Read, Grep\nexpect:\n"
    (claude / "reviewer.md").write_text(
        reviewer + '  prompt_contains: ["never there"]\n---\nReview.\n'
    )
    failed = subagent.run(*check["run"].split()[1:], env=env)
    assert failed.code == 1, failed.stderr
    assert re.search(r"^reviewer +reviewer +FAIL", failed.stdout, re.M), failed.stdout
    (claude / "reviewer.md").write_text(reviewer + '  prompt_contains: ["Review."]\n---\nReview.\n')
    passed = subagent.run(*check["run"].split()[1:], env=env)
    assert passed.code == 0, passed.stdout + passed.stderr
    assert "3 passed, 0 failed" in passed.stdout
