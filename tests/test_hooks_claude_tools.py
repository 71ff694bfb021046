"""Built-in calls shown to hooks in Claude Code's shapes, and `updatedInput` read back."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.hooks.claude_tools import call_arguments, hook_input, hook_response, output_text

WS = Path("/work/proj")


@pytest.mark.parametrize(
    ("tool", "ours", "theirs"),
    [
        ("read", {"path": "a/b.py", "offset": 3}, {"file_path": "/work/proj/a/b.py", "offset": 3}),
        (
            "write",
            {"path": "x.txt", "content": "hi"},
            {"file_path": "/work/proj/x.txt", "content": "hi"},
        ),
        (
            "edit",
            {"path": "x.py", "old": "a", "new": "b", "replace_all": True},
            {
                "file_path": "/work/proj/x.py",
                "old_string": "a",
                "new_string": "b",
                "replace_all": True,
            },
        ),
        ("bash", {"command": "ls", "timeout": 2.5}, {"command": "ls", "timeout": 2500}),
        (
            "grep",
            {"pattern": "x", "path": "src", "ignore_case": True},
            {"pattern": "x", "path": "/work/proj/src", "-i": True},
        ),
        ("find", {"pattern": "*.py"}, {"pattern": "*.py"}),
        ("ls", {"path": "."}, {"path": "/work/proj"}),
    ],
)
def test_shapes_go_both_ways(tool: str, ours: dict[str, object], theirs: dict[str, object]) -> None:
    assert hook_input(tool, True, ours, WS) == theirs
    back = call_arguments(tool, True, theirs, WS)
    if tool == "ls":
        assert back == {"path": "."}
    else:
        assert back == ours


def test_claude_only_fields_are_dropped_never_honoured() -> None:
    updated = {"command": "ls", "description": "list", "dangerouslyDisableSandbox": True}
    assert call_arguments("bash", True, updated, WS) == {"command": "ls"}


def test_a_path_outside_the_workspace_stays_as_given_for_the_tool_to_refuse() -> None:
    assert call_arguments("read", True, {"file_path": "/etc/passwd"}, WS) == {"path": "/etc/passwd"}
    assert call_arguments("read", True, {"file_path": "/work/proj/../x"}, WS) == {
        "path": "/work/proj/../x"
    }


def test_mcp_arguments_pass_unchanged() -> None:
    args = {"title": "t", "path": "keep/relative"}
    assert hook_input("create_issue", False, args, WS) == args
    assert call_arguments("create_issue", False, args, WS) == args


def test_responses_in_claude_codes_shapes() -> None:
    assert hook_response("bash", True, {"command": "ls"}, "a\n", WS)["stdout"] == "a\n"
    assert hook_response("write", True, {"path": "x"}, "ok", WS) == {
        "filePath": "/work/proj/x",
        "success": True,
    }
    assert hook_response("t", False, {}, "text", WS) == [{"type": "text", "text": "text"}]


def test_updated_output_text() -> None:
    assert output_text("plain") == "plain"
    assert output_text({"stdout": "a", "stderr": "b"}) == "ab"
    assert output_text([{"type": "text", "text": "x"}, {"type": "image"}]) == "x"
    assert output_text(42) is None
