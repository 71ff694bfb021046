"""Claude Code hooks and settings in a real project, run by the real CLI: hook scripts of the
shapes public agents use (a jq-less bash guard against `git push`, an "edits only under
tests/" guard reading CLAUDE_PROJECT_DIR) decide about real calls, and every decision is a
`hook` event in `spawn --json`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Run, Subagent, assert_all_gone, read_pid, stub
from tests.e2e.spawn_support import call_log

pytestmark = pytest.mark.e2e

NO_PUSH = r"""#!/bin/bash
# Blocks git push; everything else goes through the normal flow.
input=$(cat)
if printf '%s' "$input" | grep -Eq '"command":"[^"]*git push'; then
  echo "git push is blocked by policy" >&2
  exit 2
fi
exit 0
"""

NO_RM_JSON = r"""#!/bin/bash
input=$(cat)
case "$input" in
  *'rm -rf'*)
    printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",'
    printf '"permissionDecisionReason":"%s"}}\n' 'Destructive command blocked by hook'
    ;;
esac
exit 0
"""

TESTS_ONLY = r"""#!/bin/bash
# Allows file edits only under the project's tests/ directory.
input=$(cat)
file=$(printf '%s' "$input" | sed -n 's/.*"file_path":"\([^"]*\)".*/\1/p')
case "$file" in
  "$CLAUDE_PROJECT_DIR"/tests/*) exit 0 ;;
esac
echo "Edits are allowed only under tests/ (got ${file#"$CLAUDE_PROJECT_DIR"/})" >&2
exit 2
"""


@pytest.fixture
def project(subagent: Subagent) -> Path:
    """A project with the github stub in `.mcp.json` and an empty `.claude/`."""
    root = subagent.cwd
    logs = root.parent
    servers = {"github": stub("github", "--call-log", str(logs / "github.calls"))}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / ".claude" / "hooks").mkdir()
    (logs / "home").mkdir()
    return root


def hook_script(project: Path, name: str, text: str) -> str:
    path = project / ".claude" / "hooks" / name
    path.write_text(text)
    path.chmod(0o755)
    return f'"$CLAUDE_PROJECT_DIR"/.claude/hooks/{name}'


def agent(project: Path, name: str, frontmatter: str, steps: list[dict[str, Any]]) -> None:
    """A Claude Code agent `name` whose scripted model takes `steps`."""
    (project / ".claude" / "agents" / f"{name}.yaml").write_text(json.dumps({"steps": steps}))
    (project / ".claude" / "agents" / f"{name}.md").write_text(
        f"---\nname: {name}\ndescription: test agent\nmodel: scripted:{name}.yaml\n"
        f"{frontmatter}---\nYou work carefully.\n"
    )


def settings(project: Path, data: dict[str, Any], name: str = "settings.json") -> None:
    (project / ".claude" / name).write_text(json.dumps(data, indent=2))


def handler(command: str, **more: Any) -> dict[str, Any]:
    return {"type": "command", "command": command, **more}


def spawn(subagent: Subagent, name: str) -> Run:
    return subagent.run(
        "spawn", "--json", name, "go", env={"HOME": str(subagent.cwd.parent / "home")}
    )


def hooks_of(run: Run) -> list[tuple[str, str | None, str]]:
    return [(e["event"], e["tool"], e["decision"]) for e in run.json_lines() if e["type"] == "hook"]


def results(run: Run) -> list[tuple[str, bool, str]]:
    return [
        (e["name"], e["is_error"], e["content"])
        for e in run.json_lines()
        if e["type"] == "tool_result"
    ]


def end(run: Run) -> dict[str, Any]:
    (last,) = [e for e in run.json_lines() if e["type"] == "agent_end"]
    return last


def frontmatter_hooks(event: str, matcher: str | None, *handlers: dict[str, Any]) -> str:
    group: dict[str, Any] = {"hooks": list(handlers)}
    if matcher is not None:
        group["matcher"] = matcher
    return "hooks: " + json.dumps({event: [group]}) + "\n"


@pytest.mark.parametrize(
    ("script", "reason"),
    [(NO_PUSH, "git push is blocked by policy"), (NO_RM_JSON, "Destructive command blocked")],
    ids=["exit-2", "json-deny"],
)
def test_a_pre_tool_use_hook_blocks_bash(
    subagent: Subagent, project: Path, script: str, reason: str
) -> None:
    guard = hook_script(project, "guard.sh", script)
    blocked = (
        "git push origin main || touch pushed" if "push" in script else "rm -rf x; touch pushed"
    )
    agent(
        project,
        "guard",
        "tools: Bash\n" + frontmatter_hooks("PreToolUse", "Bash", handler(guard)),
        [
            {"call": [{"tool": "Bash", "args": {"command": blocked}}]},
            {"call": [{"tool": "Bash", "args": {"command": "touch allowed"}}]},
            {"say": "done"},
        ],
    )
    done = spawn(subagent, "guard")
    assert done.code == 0, done.stderr
    assert not (project / "pushed").exists()
    assert (project / "allowed").exists()
    (first, second) = results(done)
    assert first[1] is True and reason in first[2]
    assert second[:2] == ("Bash", False)
    assert hooks_of(done) == [("PreToolUse", "Bash", "deny"), ("PreToolUse", "Bash", "none")]


def test_settings_hooks_guard_mcp_calls_which_then_never_reach_the_server(
    subagent: Subagent, project: Path
) -> None:
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "Filing issues needs a human",
        }
    }
    command = f"cat >/dev/null; echo '{json.dumps(deny)}'"
    settings(
        project,
        {
            "hooks": {
                "PreToolUse": [{"matcher": "mcp__github__create_.*", "hooks": [handler(command)]}]
            }
        },
    )
    agent(
        project,
        "filer",
        "tools: mcp__github\n",
        [
            {
                "call": [
                    {"tool": "mcp__github__create_issue", "args": {"title": "x"}},
                    {"tool": "mcp__github__list_issues", "args": {}},
                ]
            },
            {"say": "done"},
        ],
    )
    done = spawn(subagent, "filer")
    assert done.code == 0, done.stderr
    assert [c["tool"] for c in call_log(project.parent / "github.calls")] == ["list_issues"]
    refused = dict((name, (error, text)) for name, error, text in results(done))
    assert refused["mcp__github__create_issue"][0] is True
    assert "Filing issues needs a human" in refused["mcp__github__create_issue"][1]
    assert hooks_of(done) == [("PreToolUse", "mcp__github__create_issue", "deny")]
    event = next(e for e in done.json_lines() if e["type"] == "hook")
    assert event["source"] == str(project / ".claude" / "settings.json")
    home = {"HOME": str(project.parent / "home")}
    (row,) = [r for r in subagent.run("agents", "--json", env=home).json() if r["name"] == "filer"]
    assert row["hooks"] == [
        {
            "event": "PreToolUse",
            "matcher": "mcp__github__create_.*",
            "command": command,
            "source": str(project / ".claude" / "settings.json"),
        }
    ]


def test_updated_input_rewrites_the_call_the_server_receives(
    subagent: Subagent, project: Path
) -> None:
    rewrite = hook_script(
        project,
        "prefix.sh",
        "#!/bin/bash\ncat >/dev/null\n"
        """printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse",'\n"""
        """printf '"permissionDecision":"allow","updatedInput":'\n"""
        """echo '{"title":"[agent] Flaky test","body":"filed by a sub-agent"}}}'\n""",
    )
    agent(
        project,
        "filer",
        "tools: mcp__github\n"
        + frontmatter_hooks("PreToolUse", "mcp__github__create_issue", handler(rewrite)),
        [
            {"call": [{"tool": "mcp__github__create_issue", "args": {"title": "Flaky test"}}]},
            {"say": "filed"},
        ],
    )
    done = spawn(subagent, "filer")
    assert done.code == 0, done.stderr
    (call,) = call_log(project.parent / "github.calls")
    assert call["arguments"] == {"title": "[agent] Flaky test", "body": "filed by a sub-agent"}
    assert hooks_of(done) == [("PreToolUse", "mcp__github__create_issue", "allow")]


def test_settings_permissions_deny_narrows_a_claude_agent(
    subagent: Subagent, project: Path
) -> None:
    settings(
        project,
        {"permissions": {"deny": ["mcp__github__create_issue", "Bash(rm:*)"], "ask": ["Write"]}},
    )
    agent(
        project,
        "worker",
        "tools: Read, Bash, Write, mcp__github\n",
        [
            {
                "call": [
                    {"tool": "mcp__github__create_issue", "args": {"title": "x"}},
                    {"tool": "Bash", "args": {"command": "touch ran"}},
                    {"tool": "Write", "args": {"path": "w.txt", "content": "x"}},
                ]
            },
            {"say": "done"},
        ],
    )
    home = {"HOME": str(project.parent / "home")}
    report = subagent.run("tools", "worker", "--json", env=home).json()
    active = {tool["name"] for tool in report["active"]}
    assert "Read" in active and "mcp__github__list_issues" in active
    assert not {"Bash", "Write", "mcp__github__create_issue"} & active
    assert ("create_issue", "disallowed") in {(m["tool"], m["reason"]) for m in report["muted"]}
    done = spawn(subagent, "worker")
    assert done.code == 0, done.stderr
    assert all(error for _, error, _ in results(done))
    assert call_log(project.parent / "github.calls") == []
    assert not (project / "ran").exists() and not (project / "w.txt").exists()
    assert "'Bash(rm:*)': the whole Bash tool is denied" in done.stderr


def test_edits_only_under_tests_with_the_project_dir(subagent: Subagent, project: Path) -> None:
    guard = hook_script(project, "tests-only.sh", TESTS_ONLY)
    settings(
        project, {"hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [handler(guard)]}]}}
    )
    (project / "tests").mkdir()
    agent(
        project,
        "tester",
        "tools: Write, Read\n",
        [
            {
                "call": [
                    {"tool": "Write", "args": {"path": "tests/test_new.py", "content": "ok\n"}},
                    {"tool": "Write", "args": {"path": "src/app.py", "content": "bad\n"}},
                ]
            },
            {"say": "done"},
        ],
    )
    done = spawn(subagent, "tester")
    assert done.code == 0, done.stderr
    assert (project / "tests" / "test_new.py").read_text() == "ok\n"
    assert not (project / "src" / "app.py").exists()
    denied = [text for _, error, text in results(done) if error]
    assert denied == [
        "A PreToolUse hook denied this call: Edits are allowed only under tests/ (got src/app.py)"
    ]


def test_a_post_tool_use_block_is_fed_back_to_the_model(subagent: Subagent, project: Path) -> None:
    lint = {"decision": "block", "reason": "lint: line 1 is too long"}
    agent(
        project,
        "writer",
        "tools: Write\n"
        + frontmatter_hooks(
            "PostToolUse", "Write", handler(f"cat >/dev/null; echo '{json.dumps(lint)}'")
        ),
        [{"call": [{"tool": "Write", "args": {"path": "a.txt", "content": "x"}}]}, {"say": "ok"}],
    )
    done = spawn(subagent, "writer")
    assert done.code == 0, done.stderr
    ((name, error, text),) = results(done)
    assert (name, error) == ("Write", False)
    assert text.endswith("[hook] PostToolUse hook: lint: line 1 is too long")
    assert (project / "a.txt").exists()  # PostToolUse runs after the call: it cannot undo it
    assert hooks_of(done) == [("PostToolUse", "Write", "block")]


def test_a_stop_hook_that_blocks_once_continues_the_run(subagent: Subagent, project: Path) -> None:
    once = hook_script(
        project,
        "once.sh",
        "#!/bin/bash\ninput=$(cat)\n"
        'case "$input" in *\'"stop_hook_active":false\'*)\n'
        """  echo '{"decision":"block","reason":"Run the test suite before you finish."}' ;;\n"""
        "esac\n",
    )
    agent(
        project,
        "finisher",
        "tools: Read\n" + frontmatter_hooks("Stop", None, handler(once)),
        [{"say": "done"}, {"say": "tests pass"}],
    )
    done = spawn(subagent, "finisher")
    assert done.code == 0, done.stderr
    steered = [e for e in done.json_lines() if e["type"] == "user_message" and e["kind"] == "hook"]
    assert [e["content"] for e in steered] == ["Run the test suite before you finish."]
    assert (end(done)["status"], end(done)["result"]) == ("completed", "tests pass")
    assert hooks_of(done) == [("SubagentStop", None, "block"), ("SubagentStop", None, "none")]


def test_a_hook_that_hangs_is_killed_at_its_timeout_and_leaves_nothing(
    subagent: Subagent, project: Path
) -> None:
    pids = project.parent / "hook.pids"
    hang = hook_script(
        project, "hang.sh", f"#!/bin/bash\nsleep 300 &\necho $! > {pids}\nsleep 300\n"
    )
    agent(
        project,
        "patient",
        "tools: Bash\n" + frontmatter_hooks("PreToolUse", "Bash", handler(hang, timeout=2)),
        [{"call": [{"tool": "Bash", "args": {"command": "touch went-on"}}]}, {"say": "done"}],
    )
    done = spawn(subagent, "patient")
    assert done.code == 0, done.stderr
    (event,) = [e for e in done.json_lines() if e["type"] == "hook"]
    assert (event["decision"], event["reason"]) == (
        "error",
        "timed out after 2 s; it decided nothing",
    )
    assert (project / "went-on").exists()  # as in Claude Code: a timed-out hook decides nothing
    assert_all_gone([read_pid(pids)], project.parent)


def test_an_unsupported_hook_type_refuses_the_agent(subagent: Subagent, project: Path) -> None:
    agent(
        project,
        "asker",
        "tools: Bash\n"
        + frontmatter_hooks("PreToolUse", "Bash", {"type": "prompt", "prompt": "Is it safe?"}),
        [{"say": "never"}],
    )
    refused = spawn(subagent, "asker")
    assert refused.code == 2
    assert "asker.md:6: field 'hooks'" in refused.stderr
    assert "'prompt' hooks cannot be honoured here" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_malformed_settings_file_refuses_claude_agents(subagent: Subagent, project: Path) -> None:
    (project / ".claude" / "settings.json").write_text(
        '{\n  "permissions": {\n    "deny": "Bash"\n  }\n}\n'
    )
    agent(project, "worker", "tools: Bash\n", [{"say": "never"}])
    refused = spawn(subagent, "worker")
    assert refused.code == 2
    assert ".claude/settings.json:3: field 'permissions.deny'" in refused.stderr
    assert "Traceback" not in refused.stderr
