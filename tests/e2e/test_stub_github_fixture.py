"""`python -m mcp_servers.github --fixture FILE` serves a user's own data; a bad file exits 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.spawn_support import spawn, stub, write_config

pytestmark = pytest.mark.e2e

BAD_LIMIT_S = 30.0
"""A bad fixture is refused before the SDK import; this only bounds a hang."""

MINIMAL = {
    "repos": {
        "me/app": {
            "issues": [
                {"number": 7, "title": "Login button does nothing", "labels": ["bug"]},
                {"number": 8, "title": "Old one", "state": "closed"},
            ],
            "pull_requests": [{"number": 9, "title": "Fix login", "head": "fix/login"}],
        }
    }
}
"""Only `repos` and each item's number and title are required."""

SCRIPT = """
steps:
  - call:
      - {tool_from: github/get_issue, args: {number: 7}}
      - {tool_from: github/list_issues, args: {state: all}}
      - {tool_from: github/get_pull_request, args: {number: 9}}
  - say: done
"""


def test_a_users_fixture_is_what_the_tools_return(tmp_path: Path) -> None:
    fixture = tmp_path / "repo-data.json"
    fixture.write_text(json.dumps(MINIMAL))
    config = write_config(tmp_path / "cfg", {"github": stub("github", "--fixture", str(fixture))})
    script = tmp_path / "s.yaml"
    script.write_text(SCRIPT)

    run = spawn(config, script, "--ext", "github", "go", state=tmp_path / "state")

    assert run.code == 0, run.stderr
    results = {e["name"]: e for e in run.of_type("tool_result")}
    issue = json.loads(results["github__get_issue"]["content"])
    assert issue["title"] == "Login button does nothing"
    assert issue["labels"] == ["bug"] and issue["state"] == "open" and issue["comments"] == []
    listed = json.loads(results["github__list_issues"]["content"])
    assert [i["number"] for i in listed] == [7, 8]  # the default repo is the only one
    pull = json.loads(results["github__get_pull_request"]["content"])
    assert pull["head"] == "fix/login" and pull["merged"] is False


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("{oops", "not valid JSON"),
        ('{"repos": []}', "field 'repos': expected an object"),
        ('{"repos": {"a/b": {"issues": [{"title": "x"}]}}}', "'repos.a/b.issues[0].number'"),
        (
            '{"repos": {"a/b": {"issues": [{"number": 1, "title": "x", "state": "shut"}]}}}',
            "'repos.a/b.issues[0].state': expected open or closed",
        ),
        ('{"default_repo": "x/y", "repos": {"a/b": {}}}', "'default_repo': 'x/y' is not one"),
    ],
)
def test_a_bad_fixture_exits_2_naming_the_field(tmp_path: Path, body: str, needle: str) -> None:
    fixture = tmp_path / "bad.json"
    fixture.write_text(body)
    marker = tmp_path / "started"
    argv = ["-m", "mcp_servers.github", "--fixture", str(fixture), "--marker", str(marker)]
    proc = subprocess.run(
        [sys.executable, *argv],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=BAD_LIMIT_S,
    )
    assert proc.returncode == 2
    assert str(fixture) in proc.stderr
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not marker.exists()


def test_a_missing_fixture_exits_2(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_servers.github", "--fixture", str(missing)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=BAD_LIMIT_S,
    )
    assert proc.returncode == 2
    assert f"{missing}: cannot read" in proc.stderr
