"""The `hooks` of an agent file and of settings, read as data: what runs, what refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.config.agents import parse_agent_text
from launcher.config.dialect_claude import CLAUDE
from launcher.config.hooks_field import EVENTS, HookSpec, parse_hooks
from launcher.errors import ConfigError


def command(text: str = "./check.sh", **more: object) -> dict[str, object]:
    return {"type": "command", "command": text, **more}


def parse(value: object, origin: str = "agent") -> tuple[tuple[HookSpec, ...], list[str]]:
    notes: list[str] = []
    specs = parse_hooks(value, origin=origin, source=Path("/p/x"), notes=notes)  # type: ignore[arg-type]
    return specs, notes


def test_a_tool_hook_is_one_spec_per_handler() -> None:
    (first, second), _ = parse(
        {"PreToolUse": [{"matcher": "Bash", "hooks": [command("a"), command("b", timeout=5)]}]}
    )
    assert (first.event, first.matcher, first.command, first.timeout) == (
        "PreToolUse",
        "Bash",
        "a",
        600.0,
    )
    assert (second.command, second.timeout) == ("b", 5.0)


def test_an_agents_stop_runs_as_subagent_stop_and_settings_stop_is_ignored() -> None:
    (spec,), _ = parse({"Stop": [{"hooks": [command()]}]})
    assert (spec.event, spec.written_as) == ("SubagentStop", "Stop")
    specs, notes = parse({"Stop": [{"hooks": [command()]}]}, origin="settings")
    assert specs == () and notes == ["hooks with no effect here, ignored: Stop"]


def test_exec_form_shell_and_if_are_kept() -> None:
    raw = command(
        "node", args=["${CLAUDE_PROJECT_DIR}/f.js"], shell="bash", **{"if": "Bash(git *)"}
    )
    (spec,), _ = parse({"PostToolUse": [{"hooks": [raw]}]})
    assert (spec.args, spec.shell, spec.condition) == (
        ("${CLAUDE_PROJECT_DIR}/f.js",),
        "bash",
        "Bash(git *)",
    )


@pytest.mark.parametrize("kind", ["prompt", "agent", "http", "mcp_tool", None, "Command"])
def test_any_other_handler_type_refuses(kind: object) -> None:
    with pytest.raises(ValueError, match=r"PreToolUse\[0\]\.hooks\[0\]\.type"):
        parse({"PreToolUse": [{"hooks": [{"type": kind, "prompt": "is it safe?"}]}]})


def test_an_unknown_event_refuses() -> None:
    with pytest.raises(ValueError, match="unknown hook event 'PreToolUSe'"):
        parse({"PreToolUSe": [{"hooks": [command()]}]})


@pytest.mark.parametrize("event", ["WorktreeCreate", "Elicitation", "ElicitationResult"])
def test_events_that_could_narrow_and_cannot_run_refuse(event: str) -> None:
    with pytest.raises(ValueError, match=f"{event} hooks cannot be honoured here"):
        parse({event: [{"hooks": [command()]}]})


def test_ignored_events_are_said_once() -> None:
    specs, notes = parse(
        {"SessionStart": [{"hooks": [command()]}], "Notification": [{"hooks": [command()]}]}
    )
    assert specs == ()
    assert notes == ["hooks with no effect here, ignored: SessionStart, Notification"]


def test_a_background_hook_only_informs_and_is_not_run() -> None:
    specs, notes = parse({"PostToolUse": [{"hooks": [command(**{"async": True})]}]})
    assert specs == ()
    assert "background (async) hook only informs" in notes[0]


@pytest.mark.parametrize(
    ("value", "place"),
    [
        ({"PreToolUse": {"matcher": "Bash"}}, "PreToolUse: expected a list"),
        ({"PreToolUse": [{"matcher": "Bash", "hook": []}]}, "unknown key 'hook'"),
        ({"PreToolUse": [{"hooks": [command(timeout=0)]}]}, r"hooks\[0\]\.timeout"),
        ({"PreToolUse": [{"hooks": [command("")]}]}, r"hooks\[0\]\.command"),
        ({"PreToolUse": [{"hooks": [command(args="x")]}]}, r"hooks\[0\]\.args"),
        ({"PreToolUse": [{"hooks": [command(shell="powershell")]}]}, r"\.shell"),
        ({"PreToolUse": [{"matcher": "Bash(", "hooks": [command()]}]}, r"matcher: 'Bash\('"),
        ([1], "expected a mapping"),
    ],
)
def test_malformed_hooks_name_the_place(value: object, place: str) -> None:
    with pytest.raises(ValueError, match=place):
        parse(value)


def test_every_event_says_why() -> None:
    assert all(rule.note for rule in EVENTS.values())


def test_an_agent_file_with_a_prompt_hook_is_refused_naming_file_line_and_field() -> None:
    text = "---\nname: a\nhooks:\n  PreToolUse:\n    - hooks: [{type: prompt, prompt: x}]\n---\n"
    with pytest.raises(ConfigError) as caught:
        parse_agent_text(text, "/p/.claude/agents/a.md", [], CLAUDE)
    assert (caught.value.path, caught.value.line, caught.value.field) == (
        Path("/p/.claude/agents/a.md"),
        3,
        "hooks",
    )
    assert "'prompt' hooks cannot be honoured here" in str(caught.value)


def test_an_agent_files_hooks_reach_its_spec() -> None:
    text = (
        "---\nname: a\ntools: Bash\nhooks:\n  PreToolUse:\n    - matcher: Bash\n"
        "      hooks:\n        - type: command\n          command: ./no-push.sh\n---\nbody\n"
    )
    spec = parse_agent_text(text, "/p/.claude/agents/a.md", [], CLAUDE)
    (hook,) = spec.hooks
    assert (hook.event, hook.command, hook.source, hook.line) == (
        "PreToolUse",
        "./no-push.sh",
        Path("/p/.claude/agents/a.md"),
        4,
    )
