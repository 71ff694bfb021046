"""`subagent check` over real stub servers: pass, fail naming the expectation, JUnit, exit codes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.e2e.conftest import Subagent, stub, write_config

GOOD = """---
name: good
tools: read, ext:gh
disallowed_tools: ext:gh/create_*
expect:
  settle: 0.2
  tools_present: [read, "ext:gh/list_issues"]
  tools_absent: [bash, "ext:gh/create_*"]
  servers_connected: [gh]
  servers_not_started: [lazy, broken]
  prompt_contains: [You triage]
  prompt_absent: [gh__list_issues]
---
You triage.
"""
WRONG = """---
name: wrong
tools: read, ext:gh
expect:
  settle: 0.2
  tools_present: [gh__no_such_tool]
---
x
"""
CRASH = """---
name: crash
tools: read, ext:broken
expect:
  settle: 0
---
x
"""
SCRIPT = """steps:
  - call: [{tool_from: gh/list_issues, args: {repo: acme/widgets, state: open}},
           {tool: lazy__echo, args: {}}]
  - say: "Done: acme/widgets#1 is urgent."
"""
RUN_GOOD = """agent: good
settle: 0.2
run:
  scripted: ../script.yaml
  prompt: triage
  calls: [gh__list_issues]
  tool_errors: [lazy__echo]
  result_contains: "widgets#1"
"""
RUN_WRONG = """name: run-wrong
agent: good
settle: 0.2
run:
  scripted: ../script.yaml
  prompt: triage
  calls: [gh__get_issue]
"""


def make_config(tmp_path: Path) -> Path:
    config = write_config(
        tmp_path / "cfg",
        {
            "gh": stub("github", "--marker", str(tmp_path / "gh.started")),
            "lazy": stub("lazy", "--at", "0:early"),
            "broken": stub("faulty", "--crash-at-start"),
        },
        {"good": GOOD, "wrong": WRONG, "crash": CRASH},
    )
    (config / "script.yaml").write_text(SCRIPT)
    (config / "checks").mkdir()
    (config / "checks" / "run-good.yaml").write_text(RUN_GOOD)
    (config / "checks" / "run-wrong.yaml").write_text(RUN_WRONG)
    return config


def test_all_checks_fail_or_pass_as_written_and_junit_matches_the_table(
    subagent: Subagent, tmp_path: Path
) -> None:
    config = make_config(tmp_path)
    junit = tmp_path / "out" / "report.xml"
    run = subagent.run("check", "--config-dir", str(config), "--junit", str(junit))
    assert run.code == 1, run.stderr
    rows = {line.split()[0]: line for line in run.stdout.splitlines()[1:-1]}
    assert sorted(rows) == ["crash", "good", "run-good", "run-wrong", "wrong"]
    assert {n for n, line in rows.items() if " FAIL " in line} == {"crash", "run-wrong", "wrong"}
    assert "tools_present: 'gh__no_such_tool' matched no active tool" in rows["wrong"]
    assert "run.calls: 'gh__get_issue' was never called" in rows["run-wrong"]
    # The crashed server's stderr tail is in the report.
    assert "server 'broken' failed to start" in rows["crash"]
    assert "crashing at start as asked" in rows["crash"]
    assert run.stdout.splitlines()[-1] == "2 passed, 3 failed"

    root = ET.parse(junit).getroot()
    (suite,) = root.iter("testsuite")
    cases = list(suite.iter("testcase"))
    failures = {c.get("name"): c.find("failure") for c in cases}
    assert (suite.get("tests"), suite.get("failures")) == ("5", "3")
    assert len(cases) == len(rows)
    assert {n for n, f in failures.items() if f is not None} == {"crash", "run-wrong", "wrong"}
    wrong = failures["wrong"]
    assert wrong is not None and wrong.get("message", "").startswith("tools_present: ")


def test_json_report_and_named_checks(subagent: Subagent, tmp_path: Path) -> None:
    config = make_config(tmp_path)
    run = subagent.run(
        "check",
        "good",
        str(config / "checks" / "run-good.yaml"),
        "--config-dir",
        str(config),
        "--json",
    )
    assert run.code == 0, run.stdout + run.stderr
    report = run.json()
    assert (report["passed"], report["failed"]) == (2, 0)
    assert [c["name"] for c in report["checks"]] == ["good", "run-good"]
    for check in report["checks"]:
        assert check["status"] == "passed" and check["failure"] is None
        assert check["failures"] == [] and check["session_id"]
    wrong = subagent.run("check", "wrong", "--config-dir", str(config), "--json").json()
    assert wrong["checks"][0]["failure"].startswith("tools_present: 'gh__no_such_tool'")


def test_bad_usage_and_bad_config_exit_2(subagent: Subagent, tmp_path: Path) -> None:
    config = make_config(tmp_path)
    unknown = subagent.run("check", "nobody", "--config-dir", str(config))
    assert unknown.code == 2 and "unknown agent or check file 'nobody'" in unknown.stderr
    (config / "checks" / "typo.yaml").write_text("agent: good\ntools_presnt: [read]\n")
    typo = subagent.run("check", "--config-dir", str(config))
    assert typo.code == 2, typo.stderr
    assert "typo.yaml:2: field 'tools_presnt'" in typo.stderr
    assert "tools_presnt" in typo.stderr and "Traceback" not in typo.stderr
    assert not (tmp_path / "gh.started").exists()  # bad config: no server started
    (config / "checks" / "typo.yaml").unlink()
    (config / "agents" / "good.md").write_text(GOOD.replace("  settle: 0.2", "  setle: 0.2"))
    broken = subagent.run("check", "--config-dir", str(config))
    assert broken.code == 2 and "expect.setle" in broken.stderr, broken.stderr


def test_lock_drift_fails_the_check_naming_each_tool(subagent: Subagent, tmp_path: Path) -> None:
    agent = "---\nname: watch\ntools: ext:lazy\nexpect:\n  settle: 0.2\n---\nx\n"
    config = write_config(
        tmp_path / "cfg", {"lazy": stub("lazy", "--at", "0:early")}, {"watch": agent}
    )
    locked = subagent.run("lock", "watch", "--config-dir", str(config))
    assert locked.code == 0, locked.stderr
    assert subagent.run("check", "--config-dir", str(config)).code == 0
    mcp = json.loads((config / "mcp.json").read_text())
    mcp["mcpServers"]["lazy"]["args"] += ["--at", "0:sneaky"]
    (config / "mcp.json").write_text(json.dumps(mcp))
    drifted = subagent.run("check", "--config-dir", str(config), "--json")
    assert drifted.code == 1
    failure = drifted.json()["checks"][0]["failure"]
    assert failure.startswith("lock drift: ") and "lazy__sneaky added" in failure
