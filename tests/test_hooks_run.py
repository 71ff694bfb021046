"""RunHooks with real hook processes around a real registry entry: what a hook decides
is what happens to the call, and every decision is a `hook` event."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from launcher.config.hooks_field import HookSpec
from launcher.events import Event, HookDecision
from launcher.hooks.run import MAX_STOP_BLOCKS, RunHooks
from launcher.secrets import SecretMask
from launcher.toolset.types import CALL_ID, ToolEntry, ToolResult
from tests.e2e.conftest import is_alive, wait_until


class Calls:
    """A tool caller that records the arguments it was called with."""

    def __init__(self, result: ToolResult | None = None) -> None:
        self.seen: list[dict[str, Any]] = []
        self.result = result or ToolResult("done")

    async def __call__(self, arguments: dict[str, Any]) -> ToolResult:
        self.seen.append(arguments)
        return self.result


def entry(
    calls: Calls, name: str = "Bash", tool: str = "bash", source: str = "builtin"
) -> ToolEntry:
    def check(arguments: dict[str, Any]) -> str | None:
        return None if isinstance(arguments.get("command"), str) else "'command' is required"

    return ToolEntry(name, source, tool, "", {"type": "object"}, calls, check=check)


def hooks(
    tmp_path: Path, *specs: HookSpec, mask: SecretMask | None = None
) -> tuple[RunHooks, list[Event]]:
    events: list[Event] = []

    async def emit(event: Event) -> None:
        events.append(event)

    run = RunHooks(
        specs,
        agent="guard",
        session_id="S1",
        workspace=tmp_path,
        transcript=tmp_path / "events.jsonl",
        emit=emit,
        mask=mask or SecretMask(),
    )
    return run, events


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def pre(command: str, matcher: str | None = "Bash", **more: Any) -> HookSpec:
    return HookSpec(event="PreToolUse", command=command, matcher=matcher, **more)


def decisions(events: list[Event]) -> list[tuple[str, str, str | None]]:
    return [(e.event, e.decision, e.reason) for e in events if isinstance(e, HookDecision)]


@pytest.mark.anyio
async def test_exit_2_blocks_the_call_and_the_model_reads_stderr(tmp_path: Path) -> None:
    block = script(tmp_path, "b.sh", "cat >/dev/null; echo 'no pushing' >&2; exit 2\n")
    run, events = hooks(tmp_path, pre(block))
    calls = Calls()
    CALL_ID.set("c1")
    result = await entry(calls).run({"command": "git push"}, run)
    assert calls.seen == []
    assert result.is_error and "no pushing" in result.content
    assert decisions(events) == [("PreToolUse", "deny", "no pushing")]
    (event,) = events
    assert isinstance(event, HookDecision) and (event.tool, event.id) == ("Bash", "c1")


@pytest.mark.anyio
async def test_a_hook_that_matches_another_tool_does_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    run, events = hooks(tmp_path, pre(f"touch {marker}; exit 2", matcher="Read"))
    result = await entry(Calls()).run({"command": "ls"}, run)
    assert (result.content, marker.exists(), events) == ("done", False, [])


@pytest.mark.anyio
async def test_stdin_is_claude_codes_compact_json(tmp_path: Path) -> None:
    seen = tmp_path / "stdin.json"
    run, _ = hooks(tmp_path, pre(f"cat > {seen}"))
    CALL_ID.set("c7")
    await entry(Calls()).run({"command": "echo é", "timeout": 2}, run)
    text = seen.read_text()
    assert text.startswith('{"session_id":"S1","transcript_path":')
    assert '"tool_name":"Bash","tool_input":{"command":"echo é","timeout":2000}' in text
    payload = json.loads(text)
    assert (payload["hook_event_name"], payload["cwd"], payload["tool_use_id"]) == (
        "PreToolUse",
        str(tmp_path),
        "c7",
    )
    assert (payload["agent_type"], payload["permission_mode"]) == ("guard", "default")


@pytest.mark.anyio
async def test_updated_input_rewrites_the_call(tmp_path: Path) -> None:
    answer = {
        "hookSpecificOutput": {
            "permissionDecision": "allow",
            "updatedInput": {"command": "ls -a", "description": "x"},
        }
    }
    run, events = hooks(tmp_path, pre(f"echo '{json.dumps(answer)}'"))
    calls = Calls()
    await entry(calls).run({"command": "ls"}, run)
    assert calls.seen == [{"command": "ls -a"}]
    assert decisions(events) == [("PreToolUse", "allow", None)]


@pytest.mark.anyio
async def test_a_rewrite_that_breaks_the_schema_is_not_run(tmp_path: Path) -> None:
    answer = {"hookSpecificOutput": {"updatedInput": {"cmd": 1}}}
    run, _ = hooks(tmp_path, pre(f"echo '{json.dumps(answer)}'"))
    calls = Calls()
    result = await entry(calls).run({"command": "ls"}, run)
    assert calls.seen == [] and result.is_error and "does not fit" in result.content


@pytest.mark.anyio
async def test_post_tool_use_block_and_context_reach_the_model(tmp_path: Path) -> None:
    answer = {
        "decision": "block",
        "reason": "lint: 2 errors",
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "generated"},
    }
    post = HookSpec(event="PostToolUse", command=f"echo '{json.dumps(answer)}'", matcher="Bash")
    run, events = hooks(tmp_path, post)
    result = await entry(Calls()).run({"command": "ls"}, run)
    assert result.content == "done\n\n[hook] PostToolUse hook: lint: 2 errors\n\n[hook] generated"
    assert decisions(events) == [("PostToolUse", "block", "lint: 2 errors")]


@pytest.mark.anyio
async def test_a_failed_call_runs_post_tool_use_failure_with_the_error(tmp_path: Path) -> None:
    seen = tmp_path / "in.json"
    failure = HookSpec(event="PostToolUseFailure", command=f"cat > {seen}")
    success = HookSpec(event="PostToolUse", command="exit 2")
    run, events = hooks(tmp_path, failure, success)
    await entry(Calls(ToolResult("Command failed (exit code 1).", True))).run({"command": "x"}, run)
    payload = json.loads(seen.read_text())
    assert (payload["error"], payload["is_interrupt"]) == ("Command failed (exit code 1).", False)
    assert [e for e, _, _ in decisions(events)] == ["PostToolUseFailure"]


@pytest.mark.anyio
async def test_a_hook_that_hangs_is_killed_at_its_timeout_with_its_children(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    hang = script(
        tmp_path, "hang.sh", f"sleep 300 & echo $! > {pids}; echo $$ >> {pids}; sleep 300\n"
    )
    run, events = hooks(tmp_path, pre(hang, timeout=1.0))
    calls = Calls()
    result = await entry(calls).run({"command": "ls"}, run)
    # As in Claude Code, a hook that timed out decided nothing: the call went on.
    assert (result.content, len(calls.seen)) == ("done", 1)
    assert decisions(events) == [("PreToolUse", "error", "timed out after 1 s; it decided nothing")]
    left = [int(pid) for pid in pids.read_text().split()]
    assert wait_until(lambda: not any(is_alive(pid) for pid in left), 10.0)


@pytest.mark.anyio
async def test_continue_false_stops_the_agent(tmp_path: Path) -> None:
    run, events = hooks(
        tmp_path, pre("""echo '{"continue": false, "stopReason": "build broke"}'""")
    )
    calls = Calls()
    result = await entry(calls).run({"command": "ls"}, run)
    assert calls.seen == [] and result.is_error
    assert run.halted == "build broke"
    assert decisions(events) == [("PreToolUse", "stop", "build broke")]


@pytest.mark.anyio
async def test_the_environment_names_the_project_and_holds_no_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", "sk-live-0123456789")
    monkeypatch.setenv("PLAIN_SETTING", "kept")
    seen = tmp_path / "env"
    run, _ = hooks(tmp_path, pre(f"env > {seen}", project_dir=tmp_path / "proj"))
    await entry(Calls()).run({"command": "ls"}, run)
    env = dict(line.split("=", 1) for line in seen.read_text().splitlines() if "=" in line)
    assert env["CLAUDE_PROJECT_DIR"] == str(tmp_path / "proj")
    assert env["PLAIN_SETTING"] == "kept"
    assert "MY_SERVICE_API_KEY" not in env


@pytest.mark.anyio
async def test_what_a_hook_tells_the_model_is_masked(tmp_path: Path) -> None:
    secret = "tok-9f8e7d6c5b4a3210"
    run, _ = hooks(tmp_path, pre(f"echo 'leaked {secret}' >&2; exit 2"), mask=SecretMask([secret]))
    result = await entry(Calls()).run({"command": "ls"}, run)
    assert secret not in result.content and "leaked ****" in result.content


@pytest.mark.anyio
async def test_subagent_stop_sends_the_agent_on_until_allowed_and_at_most_eight_times(
    tmp_path: Path,
) -> None:
    once = HookSpec(
        event="SubagentStop",
        command="grep -q '\"stop_hook_active\":false' && "
        """echo '{"decision":"block","reason":"tests first"}'; true""",
        written_as="Stop",
    )
    run, _ = hooks(tmp_path, once)
    assert await run.at_stop("done") == "tests first"
    assert await run.at_stop("tests ran") is None
    always = HookSpec(event="SubagentStop", command="echo nope >&2; exit 2", matcher="guard")
    run, _ = hooks(tmp_path, always)
    answers = [await run.at_stop("done") for _ in range(MAX_STOP_BLOCKS + 1)]
    assert answers == ["nope"] * MAX_STOP_BLOCKS + [None]


@pytest.mark.anyio
async def test_subagent_stop_matches_the_agent_name(tmp_path: Path) -> None:
    other = HookSpec(event="SubagentStop", command="exit 2", matcher="db-agent")
    run, events = hooks(tmp_path, other)
    assert await run.at_stop("done") is None and events == []


@pytest.mark.anyio
async def test_an_if_outside_tool_events_never_runs_its_hook(tmp_path: Path) -> None:
    # Claude Code reads `if` on tool events only; elsewhere a hook with one never runs.
    gated = HookSpec(event="SubagentStop", command="exit 2", condition="Bash(git *)")
    run, events = hooks(tmp_path, gated)
    assert await run.at_stop("done") is None and events == []


@pytest.mark.anyio
async def test_post_tool_batch_sees_every_call_and_can_stop(tmp_path: Path) -> None:
    seen = tmp_path / "batch.json"
    batch = HookSpec(
        event="PostToolBatch",
        command=f'cat > {seen}; echo \'{{"decision":"block","reason":"enough"}}\'',
    )
    run, _ = hooks(tmp_path, batch)
    CALL_ID.set("c1")
    await entry(Calls()).run({"command": "ls"}, run)
    context = await run.after_batch([("c1", "Bash", {"command": "ls"}, ToolResult("done"))])
    assert context is None and run.halted == "enough"
    (call,) = json.loads(seen.read_text())["tool_calls"]
    assert call == {
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "c1",
        "tool_response": "done",
    }
