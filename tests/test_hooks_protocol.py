"""A hook's answer read as Claude Code reads it: exit codes, JSON output, failures."""

from __future__ import annotations

import json

import pytest

from launcher.hooks.protocol import UNSET, Decision, HookRun, encode, read_outcome

PRE, POST, FAIL, BATCH, STOP = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "SubagentStop",
)


def out(event: str, code: int | None, stdout: object = "", stderr: str = "") -> object:
    text = stdout if isinstance(stdout, str) else json.dumps(stdout)
    return read_outcome(event, HookRun(code, text, stderr), timeout=5)


def pre(decision: str, **more: object) -> dict[str, object]:
    return {"hookSpecificOutput": {"hookEventName": PRE, "permissionDecision": decision, **more}}


def test_stdin_is_compact_json_as_claude_code_writes_it() -> None:
    data = encode({"tool_input": {"command": "git push", "note": "héllo"}, "n": 1})
    assert data == '{"tool_input":{"command":"git push","note":"héllo"},"n":1}'.encode()


def test_exit_2_denies_with_stderr_as_the_reason() -> None:
    outcome = out(PRE, 2, stderr="Blocked: git push\n")
    assert (outcome.decision, outcome.reason) == (Decision.DENY, "Blocked: git push")


def test_exit_2_wins_over_a_json_allow() -> None:
    outcome = out(PRE, 2, pre("allow"), stderr="no")
    assert (outcome.decision, outcome.reason) == (Decision.DENY, "no")


def test_exit_2_takes_the_json_reason_when_the_json_blocks() -> None:
    outcome = out(PRE, 2, pre("deny", permissionDecisionReason="json says"), stderr="stderr says")
    assert outcome.reason == "json says"


def test_json_deny_on_exit_0() -> None:
    outcome = out(PRE, 0, pre("deny", permissionDecisionReason="Database writes are not allowed"))
    assert (outcome.decision, outcome.reason) == (Decision.DENY, "Database writes are not allowed")


@pytest.mark.parametrize("answer", ["ask", "defer"])
def test_ask_and_defer_deny_since_nobody_is_here_to_answer(answer: str) -> None:
    outcome = out(PRE, 0, pre(answer, permissionDecisionReason="check with a human"))
    assert outcome.decision is Decision.DENY
    assert answer in outcome.reason and "check with a human" in outcome.reason


def test_allow_with_updated_input_rewrites() -> None:
    outcome = out(PRE, 0, pre("allow", updatedInput={"command": "ls"}))
    assert (outcome.decision, outcome.updated_input) == (Decision.ALLOW, {"command": "ls"})


def test_updated_input_without_a_decision_still_rewrites() -> None:
    data = {"hookSpecificOutput": {"hookEventName": PRE, "updatedInput": {"command": "ls"}}}
    assert out(PRE, 0, data).updated_input == {"command": "ls"}


@pytest.mark.parametrize(
    ("old", "decision"), [("block", Decision.DENY), ("approve", Decision.ALLOW)]
)
def test_deprecated_top_level_decisions_still_work(old: str, decision: Decision) -> None:
    outcome = out(PRE, 0, {"decision": old, "reason": "because"})
    assert (outcome.decision, outcome.reason) == (decision, "because")


def test_json_is_read_on_any_exit_code() -> None:
    assert out(PRE, 1, pre("deny")).decision is Decision.DENY


@pytest.mark.parametrize("code", [1, 127, 3])
def test_other_exit_codes_without_json_decide_nothing(code: int) -> None:
    outcome = out(PRE, code, stderr="jq: command not found\nmore")
    assert outcome.decision is Decision.ERROR
    assert outcome.reason == f"exit status {code}: jq: command not found"


def test_plain_stdout_on_exit_0_decides_nothing() -> None:
    assert out(PRE, 0, "all good").decision is Decision.NONE
    assert out(PRE, 0, "").decision is Decision.NONE


@pytest.mark.parametrize(
    "bad",
    [
        pre("maybe"),
        {"continue": "no"},
        {"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "deny"}},
        {"decision": "deny"},
    ],
)
def test_json_that_fails_the_schema_decides_nothing(bad: dict[str, object]) -> None:
    assert out(PRE, 0, bad).decision is Decision.ERROR


def test_broken_json_is_plain_text() -> None:
    assert out(PRE, 0, '{"hookSpecificOutput": ').decision is Decision.NONE


def test_continue_false_stops_whatever_else_it_says() -> None:
    outcome = out(PRE, 0, {"continue": False, "stopReason": "Build failed", **pre("allow")})
    assert (outcome.decision, outcome.reason) == (Decision.STOP, "Build failed")


def test_a_timeout_or_a_command_that_cannot_start_decides_nothing() -> None:
    assert out(PRE, None).decision is Decision.ERROR
    failed = read_outcome(PRE, HookRun(None, failure="no such file"), timeout=1)
    assert (failed.decision, failed.reason) == (Decision.ERROR, "could not run: no such file")


def test_post_tool_use_block_is_feedback_and_context_and_output_are_read() -> None:
    data = {
        "decision": "block",
        "reason": "lint failed",
        "hookSpecificOutput": {
            "hookEventName": POST,
            "additionalContext": "generated file",
            "updatedToolOutput": "[redacted]",
        },
    }
    outcome = out(POST, 0, data)
    assert (outcome.decision, outcome.reason) == (Decision.BLOCK, "lint failed")
    assert (outcome.context, outcome.updated_output) == ("generated file", "[redacted]")
    assert out(POST, 0, {}).updated_output is UNSET


def test_post_tool_use_exit_2_shows_stderr_to_the_model() -> None:
    outcome = out(FAIL, 2, stderr="tests failed")
    assert (outcome.decision, outcome.reason) == (Decision.BLOCK, "tests failed")


def test_post_tool_batch_block_stops_the_agent() -> None:
    assert out(BATCH, 0, {"decision": "block", "reason": "enough"}).decision is Decision.STOP
    assert out(BATCH, 2, stderr="enough").decision is Decision.STOP


def test_subagent_stop_block_sends_the_agent_on() -> None:
    outcome = out(STOP, 0, {"decision": "block", "reason": "Run the tests first."})
    assert (outcome.decision, outcome.reason) == (Decision.BLOCK, "Run the tests first.")
    assert out(STOP, 2, stderr="not yet").decision is Decision.BLOCK
    context = {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "also lint"}}
    assert out(STOP, 0, context).context == "also lint"


def test_system_message_is_kept_for_the_user() -> None:
    assert out(POST, 0, {"systemMessage": "formatted 3 files"}).message == "formatted 3 files"


def test_long_text_is_cut() -> None:
    outcome = out(PRE, 2, stderr="x" * 20_000)
    assert len(outcome.reason) < 10_100 and outcome.reason.endswith("characters cut]")
