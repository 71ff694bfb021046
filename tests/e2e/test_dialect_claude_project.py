"""A project holding Claude Code agent files, pi agent files and a `.mcp.json` of stub
servers: the agents run as written, scoped exactly as their author wrote, and the model is
offered Claude Code's names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Run, Subagent, stub
from tests.e2e.spawn_support import call_log

pytestmark = pytest.mark.e2e

CLAUDE_AGENTS = {
    "reviewer": """---
name: reviewer
description: Expert code review specialist.
tools: Read, Grep, Glob, Bash, mcp__github__list_issues, WebFetch, TodoWrite
disallowedTools: Write, Edit
model: sonnet
maxTurns: 5
color: blue
permissionMode: default
---
You review code. Use mcp__github__list_issues to see what is open.
""",
    "issues": """---
name: issues
description: Works on issues, never files new ones.
tools:
  - Read
  - mcp__github
disallowedTools: mcp__github__create_issue
model: inherit
---
You work on issues.
""",
    "own-servers": """---
name: own-servers
description: Only the servers it names, one of them its own.
mcpServers:
  - github
  - solo:
      type: stdio
      command: {python}
      args: ["-m", "mcp_servers.lazy", "--at", "0:solo_tool"]
---
You use your own servers.
""",
    "watcher": """---
name: watcher
description: One early tool of the lazy server; its later tool stays out.
tools: Read, mcp__lazy__early
---
You watch.
""",
    "planner": """---
name: planner
description: Read-only planning.
permissionMode: plan
---
You plan.
""",
}

PI_AGENT = """---
description: "A pi agent: the lazy server, minus one tool by its bare name."
extensions: lazy
tools: read, ext:lazy
disallowed_tools: early
---
You are a pi agent.
"""


@pytest.fixture
def project(subagent: Subagent) -> Path:
    root = subagent.cwd
    logs = root.parent
    servers: dict[str, Any] = {
        "github": stub("github", "--call-log", str(logs / "github.calls")),
        "lazy": stub(
            "lazy",
            "--at",
            "0:early",
            "--at",
            "1.5:late",
            "--marker",
            str(logs / "lazy.started"),
            "--call-log",
            str(logs / "lazy.calls"),
        ),
        "docs": stub("lazy", "--at", "0:search_docs", "--marker", str(logs / "docs.started")),
    }
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    (root / ".claude" / "agents").mkdir(parents=True)
    import sys

    for name, text in CLAUDE_AGENTS.items():
        path = root / ".claude" / "agents" / f"{name}.md"
        path.write_text(text.replace("{python}", json.dumps(sys.executable)))
    (root / ".pi" / "agents").mkdir(parents=True)
    (root / ".pi" / "agents" / "pi-one.md").write_text(PI_AGENT)
    (logs / "home").mkdir()
    return root


def run(subagent: Subagent, *args: str) -> Run:
    return subagent.run(*args, env={"HOME": str(subagent.cwd.parent / "home")})


def pairs(tools: list[dict[str, Any]]) -> set[tuple[str, str | None, str]]:
    return {(t["name"], t["server"], t["tool"]) for t in tools}


def test_agents_lists_each_source_and_dialect(subagent: Subagent, project: Path) -> None:
    listed = run(subagent, "agents", "--json")
    rows = {row["name"]: row for row in listed.json()}
    assert rows["reviewer"]["dialect"] == "claude"
    assert rows["reviewer"]["source"] == str(project / ".claude/agents/reviewer.md")
    assert rows["reviewer"]["model"] == "anthropic:claude-sonnet-4-5"
    assert rows["reviewer"]["max_turns"] == 5
    assert rows["issues"]["model"] is None  # inherit: --model, SUBAGENT_MODEL
    assert rows["pi-one"]["dialect"] == "pi"
    assert rows["general-purpose"]["dialect"] == "built-in"
    assert "error" in rows["planner"] and "permissionMode" in rows["planner"]["error"]
    # Named once, never silently dropped; the no-effect fields listed on one line.
    assert listed.stderr.count("WebFetch") == 1 and "TodoWrite" in listed.stderr
    assert "ignored: color, permissionMode: default" in listed.stderr


def test_claude_agent_gets_exactly_its_tools_under_claude_names(
    subagent: Subagent, project: Path
) -> None:
    report = run(subagent, "tools", "reviewer", "--json").json()
    assert pairs(report["active"]) == {
        ("Read", None, "read"),
        ("Grep", None, "grep"),
        ("Glob", None, "find"),
        ("Bash", None, "bash"),
        ("mcp__github__list_issues", "github", "list_issues"),
    }
    assert ("mcp__github__get_issue", "github", "get_issue") in pairs(report["muted"])
    assert report["servers"]["lazy"]["state"] == "not_started"
    assert report["servers"]["docs"]["state"] == "not_started"
    assert not (project.parent / "lazy.started").exists()


def test_whole_server_selector_and_single_tool_denial(subagent: Subagent, project: Path) -> None:
    report = run(subagent, "tools", "issues", "--json").json()
    active = pairs(report["active"])
    assert ("mcp__github__list_issues", "github", "list_issues") in active
    assert ("mcp__github__add_issue_comment", "github", "add_issue_comment") in active
    assert not any(t == "create_issue" for _, _, t in active)
    muted = {(m["tool"], m["reason"]) for m in report["muted"]}
    assert ("create_issue", "disallowed") in muted
    assert {n for n, s, _ in active if s is None} == {"Read"}


def test_mcp_servers_by_name_and_inline_are_the_only_servers(
    subagent: Subagent, project: Path
) -> None:
    report = run(subagent, "tools", "own-servers", "--json", "--settle", "1").json()
    assert report["servers"]["github"]["state"] == "connected"
    assert report["servers"]["solo"]["state"] == "connected"
    assert report["servers"]["lazy"]["state"] == "not_started"
    assert report["servers"]["docs"]["state"] == "not_started"
    assert ("mcp__solo__solo_tool", "solo", "solo_tool") in pairs(report["active"])


def test_late_tool_outside_the_scope_stays_muted(subagent: Subagent, project: Path) -> None:
    report = run(subagent, "tools", "watcher", "--json", "--settle", "2.5").json()
    assert ("mcp__lazy__early", "lazy", "early") in pairs(report["active"])
    muted = {(m["name"], m["reason"]) for m in report["muted"]}
    assert ("mcp__lazy__late", "not selected") in muted


def test_pi_agent_bare_name_denial(subagent: Subagent, project: Path) -> None:
    report = run(subagent, "tools", "pi-one", "--json", "--settle", "2.5").json()
    active = pairs(report["active"])
    assert ("lazy__late", "lazy", "late") in active  # late, and in scope: it comes
    assert {name for name, server, _ in active if server is None} == {"read"}
    assert not any(tool == "early" for _, _, tool in active)
    assert ("early", "disallowed") in {(m["tool"], m["reason"]) for m in report["muted"]}


def test_out_of_scope_calls_never_reach_a_server_and_model_sees_claude_names(
    subagent: Subagent, project: Path
) -> None:
    script = project.parent / "review.yaml"
    script.write_text(
        "steps:\n"
        "  - call:\n"
        "      - {tool: mcp__github__list_issues, args: {}}\n"
        "      - {tool: mcp__github__create_issue, args: {title: x}}\n"
        "      - {tool: mcp__lazy__early, args: {}}\n"
        "      - {tool: Write, args: {path: x.txt, content: x}}\n"
        "  - say: reviewed\n"
    )
    done = run(subagent, "spawn", "reviewer", "--json", "--model", f"scripted:{script}", "go")
    assert done.code == 0, done.stderr
    events = done.json_lines()
    first = next(e for e in events if e["type"] == "turn_start")
    assert first["tools"] == ["Read", "Bash", "Grep", "Glob", "mcp__github__list_issues"]
    calls = {e["name"]: (e["server"], e["tool"]) for e in events if e["type"] == "tool_call"}
    assert calls["mcp__github__list_issues"] == ("github", "list_issues")
    assert calls["mcp__github__create_issue"] == (None, None)  # not offered: no origin
    results = {e["name"]: e["is_error"] for e in events if e["type"] == "tool_result"}
    assert results == {
        "mcp__github__list_issues": False,
        "mcp__github__create_issue": True,
        "mcp__lazy__early": True,
        "Write": True,
    }
    assert [c["tool"] for c in call_log(project.parent / "github.calls")] == ["list_issues"]
    assert not (project.parent / "lazy.started").exists()
    assert not (project / "x.txt").exists()


def test_permission_mode_plan_refuses_the_agent(subagent: Subagent, project: Path) -> None:
    refused = run(subagent, "spawn", "planner", "--model", "scripted:none.yaml", "go")
    assert refused.code == 2
    assert "planner.md:4: field 'permissionMode'" in refused.stderr
    assert "Traceback" not in refused.stderr
