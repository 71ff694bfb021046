"""A value too short to be masked masks nothing; ids, paths and the model spec are never masked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher import secrets
from launcher.config.servers import parse_servers_text
from launcher.config.shown import masked_launch_spec
from launcher.events import AgentStart, ServerState, SessionStart, ToolResultEvent
from launcher.secrets import MASK, MIN_SECRET_CHARS, LiveMask, SecretMask, process_secrets

LONG = "longvalue-7c1e"
TEXT = "outside.txt in /home/tester: answer 1 of 1"


@pytest.mark.parametrize("short", ["x", "1", "tester", "a" * (MIN_SECRET_CHARS - 1)])
def test_a_value_shorter_than_the_minimum_masks_nothing(short: str) -> None:
    assert SecretMask([short]).text(TEXT) == TEXT
    assert LiveMask({short}).text(TEXT) == TEXT
    assert SecretMask([short, LONG]).text(f"{TEXT} {LONG}") == f"{TEXT} {MASK}"


def test_a_referenced_variable_hidden_with_a_short_value_masks_nothing() -> None:
    secrets.note_hidden({"PLAINVAR_REF": "1", "GITHUB_TOKEN": LONG})

    mask = LiveMask(process_secrets({}))

    assert mask.text(f"answer 1 of 1 {LONG}") == f"answer 1 of 1 {MASK}"


def test_ids_paths_and_the_model_spec_are_never_masked_in_events() -> None:
    mask = SecretMask([LONG])
    start = SessionStart(
        agent=f"agent-{LONG}", session_id=f"id-{LONG}", servers=[LONG], log_dir=f"/s/{LONG}"
    )
    model = AgentStart(model=f"scripted:/home/{LONG}/s.yaml")
    state = ServerState(server=LONG, state="failed", error=f"said {LONG}", log=f"/s/{LONG}.log")
    result = ToolResultEvent(turn=1, id="c", name="read", is_error=False, content=f"<{LONG}>")

    assert mask.event(start) == start
    assert mask.event(model) == model
    masked_state = mask.event(state)
    assert (masked_state.server, masked_state.log) == (state.server, state.log)
    assert masked_state.error == f"said {MASK}"
    assert mask.event(result).content == f"<{MASK}>"


MCP = {
    "a": {"command": "srv", "args": ["--user=${SHORTUSER}"], "env": {"ONE": "${ONE_CHAR}"}},
    "b": {"command": "srv", "env": {"ONE": "${ONE_CHAR}", "K": "${LONGVAR}", "E": "${EMPTY:-}"}},
}


def test_a_short_value_is_warned_about_once_by_name_never_by_value(tmp_path: Path) -> None:
    env = {"ONE_CHAR": "Q", "SHORTUSER": "tester", "LONGVAR": LONG, "EMPTY": ""}
    path = tmp_path / "mcp.json"

    servers, warnings = parse_servers_text(json.dumps({"mcpServers": MCP}, indent=1), path, env)

    short = [w for w in warnings if "cannot be masked" in w]
    assert len(short) == 2, warnings
    assert sum("${ONE_CHAR}" in w for w in short) == 1
    assert sum("${SHORTUSER}" in w for w in short) == 1
    assert all(str(path) in w and "tester" not in w for w in short)
    assert not any("LONGVAR" in w or "EMPTY" in w for w in warnings)
    # Shown once, as a launch spec, every value from the environment is still masked.
    assert masked_launch_spec(servers["a"])["args"] == ["--user=****"]
    assert masked_launch_spec(servers["b"])["env"]["ONE"] == MASK
