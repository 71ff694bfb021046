"""spawn_subagent's arguments checked against its own schema, and a host's scripted: model
held to serve's directories, with errors that never show a file's content."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from launcher.backend import catalog
from launcher.backend.arguments import ArgumentError, check_arguments
from launcher.backend.host_model import read_host_script
from launcher.errors import UsageError

SPAWN = catalog.tool_schema("spawn_subagent")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ({"prompt": "x", "max_turns": -3}, "`max_turns` must be at least 1, got -3"),
        ({"prompt": "x", "max_turns": "3"}, "`max_turns` must be an integer, got a string"),
        ({"prompt": "x", "max_turns": True}, "`max_turns` must be an integer, got a boolean"),
        ({"prompt": "x", "ext": "gh"}, '`ext` must be a list (e.g. ["name"]), got a string'),
        ({"prompt": "x", "ext": ["gh", 3]}, "`ext[1]` must be a string, got an integer"),
        ({"prompt": "x", "background": "yes"}, "`background` must be true or false"),
        ({"prompt": "x", "agnet": "a"}, "unknown argument `agnet`"),
        ({"ext": []}, "missing required argument `prompt`"),
        ({"prompt": None}, "`prompt` must be a string, got null"),
        ({"prompt": "x", "max_cost_usd": math.nan}, "`max_cost_usd` must be a finite number"),
        ({"prompt": "x", "max_cost_usd": math.inf}, "`max_cost_usd` must be a finite number"),
        ({"prompt": "x", "timeout": math.nan}, "`timeout` must be a finite number, got nan"),
        ({"prompt": "x", "timeout": -math.inf}, "`timeout` must be a finite number"),
        ({"prompt": "x", "timeout": -1}, "`timeout` must be greater than 0, got -1"),
        ({"prompt": "x", "idle_timeout": 0}, "`idle_timeout` must be greater than 0, got 0"),
        ({"prompt": "x", "max_cost_usd": 0.0}, "`max_cost_usd` must be greater than 0"),
    ],
)
def test_a_bad_argument_is_a_clear_error_naming_it(args: dict[str, Any], says: str) -> None:
    assert SPAWN is not None
    with pytest.raises(ArgumentError) as caught:
        check_arguments("spawn_subagent", SPAWN, args)
    assert says in str(caught.value)


def test_good_arguments_pass_and_null_optionals_read_as_absent() -> None:
    assert SPAWN is not None
    args = {"prompt": "x", "ext": ["gh"], "max_turns": 2, "model": None, "background": False}
    assert check_arguments("spawn_subagent", SPAWN, args) == {
        "prompt": "x",
        "ext": ["gh"],
        "max_turns": 2,
        "background": False,
    }


def test_every_argument_of_every_tool_is_described_and_agent_lists_the_agents() -> None:
    listed = catalog.tools(
        [("triage", "Triage issues."), ("general-purpose", "All.")], task_support=False
    )
    for tool in listed:
        for name, prop in tool["inputSchema"]["properties"].items():
            assert prop.get("description"), f"{tool['name']}.{name}"
    agent = listed[0]["inputSchema"]["properties"]["agent"]
    assert agent["enum"] == ["general-purpose", "triage"]
    assert "triage: Triage issues." in agent["description"]


def test_a_host_scripted_model_outside_serves_dirs_is_refused_without_reading_it(
    tmp_path: Path,
) -> None:
    secret = tmp_path / "outside" / "secrets.yaml"
    secret.parent.mkdir()
    secret.write_text("hunter2: the-password\n")
    roots = [tmp_path / "cfg", tmp_path / "ws"]
    for root in roots:
        root.mkdir()
    (tmp_path / "ws" / "link.yaml").symlink_to(secret)
    for spec in (
        f"scripted:{secret}",
        "scripted:/etc/passwd",
        "scripted:link.yaml",
        "scripted:../outside/secrets.yaml",
    ):
        with pytest.raises(UsageError) as caught:
            read_host_script(spec, roots=roots, workspace=tmp_path / "ws")
        assert "must be a file inside" in str(caught.value)
        assert "hunter2" not in str(caught.value) and "root:" not in str(caught.value)


def test_a_bad_script_inside_the_workspace_is_named_by_line_never_by_content(
    tmp_path: Path,
) -> None:
    (tmp_path / "bad.yaml").write_text("steps:\n  - hunter2: the-password\n")
    (tmp_path / "ok.yaml").write_text("steps:\n  - say: fine\n")
    with pytest.raises(UsageError) as caught:
        read_host_script("scripted:bad.yaml", roots=[tmp_path], workspace=tmp_path)
    assert "not a usable script (line 2)" in str(caught.value)
    assert "hunter2" not in str(caught.value) and "password" not in str(caught.value)
    with pytest.raises(UsageError, match="cannot read script"):
        read_host_script("scripted:missing.yaml", roots=[tmp_path], workspace=tmp_path)
    read_host_script("scripted:ok.yaml", roots=[tmp_path], workspace=tmp_path)
    read_host_script("openai:gpt-4.1-mini", roots=[], workspace=tmp_path)
