"""A project holding Codex, Gemini CLI and opencode agent files and a `.mcp.json` of stub
servers: each agent gets exactly what its file allows, under its host's tool names, and a
call outside that never reaches a server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Run, Subagent, stub
from tests.e2e.spawn_support import call_log

pytestmark = pytest.mark.e2e

FILES = {
    ".codex/agents/reviewer.toml": """name = "codex-reviewer"
description = "Reviews, read-only."
sandbox_mode = "read-only"
model_reasoning_effort = "high"
developer_instructions = \"\"\"
Review the change; list the open issues first.
\"\"\"
""",
    ".gemini/agents/auditor.md": """---
name: auditor
description: Reads code and the issue list.
kind: local
tools: [read_file, grep_search, mcp_github_list_issues, web_fetch]
---
Audit the code.
""",
    ".opencode/agent/triage.md": """---
description: Triage without writing files or filing issues.
mode: subagent
tools:
  github_create_*: false
permission:
  edit: deny
---
Triage.
""",
}


@pytest.fixture
def project(subagent: Subagent) -> Path:
    root = subagent.cwd
    logs = root.parent
    servers: dict[str, Any] = {
        "github": stub("github", "--call-log", str(logs / "github.calls")),
        "lazy": stub("lazy", "--at", "0:early", "--marker", str(logs / "lazy.started")),
    }
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (logs / "home").mkdir()
    return root


def run(subagent: Subagent, *args: str) -> Run:
    return subagent.run(*args, env={"HOME": str(subagent.cwd.parent / "home")})


def names(report: dict[str, Any]) -> set[tuple[str, str | None, str]]:
    return {(t["name"], t["server"], t["tool"]) for t in report["active"]}


def test_each_agent_is_listed_in_its_dialect(subagent: Subagent, project: Path) -> None:
    listed = run(subagent, "agents", "--json")
    rows = {row["name"]: row for row in listed.json()}
    assert rows["codex-reviewer"]["dialect"] == "codex"
    assert rows["auditor"]["dialect"] == "gemini"
    assert rows["triage"]["dialect"] == "opencode"
    assert listed.stderr.count("web_fetch") == 1  # named once, left out


def test_codex_read_only_agent_under_codex_names(subagent: Subagent, project: Path) -> None:
    report = run(subagent, "tools", "codex-reviewer", "--json").json()
    active = names(report)
    assert {(n, t) for n, s, t in active if s is None} == {
        ("read_file", "read"),
        ("grep_files", "grep"),
        ("find", "find"),
        ("list_dir", "ls"),
    }
    assert ("mcp__github__create_issue", "github", "create_issue") in active


def test_gemini_allowlist_under_gemini_names(subagent: Subagent, project: Path) -> None:
    report = run(subagent, "tools", "auditor", "--json").json()
    assert names(report) == {
        ("read_file", None, "read"),
        ("grep_search", None, "grep"),
        ("mcp_github_list_issues", "github", "list_issues"),
    }
    assert report["servers"]["lazy"]["state"] == "not_started"


def test_opencode_denials_under_opencode_names(subagent: Subagent, project: Path) -> None:
    report = run(subagent, "tools", "triage", "--json").json()
    active = names(report)
    assert {n for n, s, _ in active if s is None} == {"read", "bash", "grep", "glob", "list"}
    assert ("github_list_issues", "github", "list_issues") in active
    assert not any(t.startswith("create_") for _, s, t in active if s == "github")


def test_a_gemini_agent_runs_with_its_names_and_nothing_outside_reaches_a_server(
    subagent: Subagent, project: Path
) -> None:
    (project / "notes.txt").write_text("hello\n")
    script = project.parent / "audit.yaml"
    script.write_text(
        "steps:\n"
        "  - call:\n"
        "      - {tool: read_file, args: {path: notes.txt}}\n"
        "      - {tool: mcp_github_list_issues, args: {}}\n"
        "      - {tool: mcp_github_create_issue, args: {title: x}}\n"
        "      - {tool: write_file, args: {path: x.txt, content: x}}\n"
        "  - say: audited\n"
    )
    done = run(subagent, "spawn", "auditor", "--json", "--model", f"scripted:{script}", "go")
    assert done.code == 0, done.stderr
    events = done.json_lines()
    first = next(e for e in events if e["type"] == "turn_start")
    assert first["tools"] == ["read_file", "grep_search", "mcp_github_list_issues"]
    results = {e["name"]: e["is_error"] for e in events if e["type"] == "tool_result"}
    assert results == {
        "read_file": False,
        "mcp_github_list_issues": False,
        "mcp_github_create_issue": True,
        "write_file": True,
    }
    assert [c["tool"] for c in call_log(project.parent / "github.calls")] == ["list_issues"]
    assert not (project / "x.txt").exists()
