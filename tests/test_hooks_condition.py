"""A handler's `if`: a permission rule the call must match; unreadable cases run the hook."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.hooks.condition import condition_holds

PROJECT = Path("/p")


def holds(rule: str | None, tool: str, **tool_input: object) -> bool:
    return condition_holds(rule, tool, tool_input, PROJECT)


def test_no_rule_or_a_bare_tool_name() -> None:
    assert holds(None, "Bash", command="ls")
    assert holds("Bash", "Bash", command="ls")
    assert not holds("Bash", "Read", file_path="/p/x")
    assert holds("Bash(*)", "Bash", command="ls")


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        ("Bash(git push *)", "git push origin main", True),
        ("Bash(git push *)", "git push", True),
        ("Bash(git push *)", "git status", False),
        ("Bash(git *)", "FOO=bar git push", True),
        ("Bash(git *)", "npm test && git push", True),
        ("Bash(rm *)", "echo $(rm -rf /)", True),
        ("Bash(rm *)", "echo `date`", True),
        ("Bash(ls *)", "lsof", False),
        ("Bash(ls*)", "lsof", True),
        ("Bash(ls:*)", "ls -la", True),
        ("Bash(npm run build)", "npm run build", True),
        ("Bash(npm run build)", "npm run build:prod", False),
        ("Bash(* install)", "npm install", True),
    ],
)
def test_bash_rules_check_every_subcommand(rule: str, command: str, expected: bool) -> None:
    assert holds(rule, "Bash", command=command) is expected


@pytest.mark.parametrize(
    ("rule", "path", "expected"),
    [
        ("Edit(*.ts)", "/p/src/a.ts", True),
        ("Edit(*.ts)", "/p/src/a.py", False),
        ("Edit(src/**)", "/p/src/deep/a.ts", True),
        ("Edit(src/**)", "/p/lib/src/a.ts", False),
        ("Edit(./tests/*.py)", "/p/tests/t.py", True),
        ("Edit(./tests/*.py)", "/p/tests/sub/t.py", False),
        ("Edit(**/src/**)", "/p/lib/src/a.ts", True),
        ("Read(//etc/**)", "/etc/passwd", True),
    ],
)
def test_file_rules_check_the_path(rule: str, path: str, expected: bool) -> None:
    tool = rule.split("(")[0]
    assert holds(rule, tool, file_path=path) is expected


def test_parameter_rules_match_a_top_level_value() -> None:
    assert holds("Bash(run_in_background:true)", "Bash", command="x", run_in_background=True)
    assert not holds("Bash(run_in_background:true)", "Bash", command="x", run_in_background=False)
    assert holds("mcp__gh__create_issue(title:Bug*)", "mcp__gh__create_issue", title="Bug: x")


def test_mcp_rules_and_unreadable_specifiers() -> None:
    assert holds("mcp__gh", "mcp__gh__create_issue")
    assert not holds("mcp__gh", "mcp__ghx__create_issue")
    assert holds("mcp__gh__*", "mcp__gh__list_issues")
    # A specifier of a form not read here runs the hook (the filter fails open).
    assert holds("WebFetch(domain:example.com)", "WebFetch", url="https://x")
    assert holds("mcp__gh__create_issue(anything)", "mcp__gh__create_issue", title="t")
