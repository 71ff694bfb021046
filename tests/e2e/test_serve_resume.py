"""`serve`'s spawn_subagent takes `resume`: a new worker continues a stored session."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from launcher.store.history import NOT_OWNED
from tests.e2e.store_support import log_json
from tests.e2e.test_serve import LIMIT_S, serve, structured

pytestmark = pytest.mark.e2e


@pytest.mark.anyio
async def test_a_resumed_spawn_continues_the_stored_session(tmp_path: Path) -> None:
    (tmp_path / "second.yaml").write_text("steps:\n  - say: second answer\n")
    with anyio.fail_after(LIMIT_S):
        async with serve(tmp_path) as client:
            first = await client.call_tool(
                "spawn_subagent",
                {"prompt": "go", "ext": ["lazy"], "model": f"scripted:{tmp_path / 'quick.yaml'}"},
            )
            session_id = structured(first)["session_id"]
            assert session_id

            again = await client.call_tool(
                "spawn_subagent",
                {
                    "prompt": "and then?",
                    "resume": session_id,
                    "model": f"scripted:{tmp_path / 'second.yaml'}",
                },
            )
            unknown = await client.call_tool(
                "spawn_subagent", {"prompt": "x", "resume": "no-such-session"}
            )
            other_agent = await client.call_tool(
                "spawn_subagent", {"prompt": "x", "resume": session_id, "agent": "nobody"}
            )

    assert not again.is_error, again.content
    assert again.content[0].text == "second answer"
    assert structured(again)["session_id"] == session_id
    assert unknown.is_error and unknown.content[0].text == NOT_OWNED
    assert other_agent.is_error and "general-purpose" in other_agent.content[0].text
    conv = await anyio.to_thread.run_sync(log_json, tmp_path / "state", session_id)
    said = [(m["role"], m["content"]) for m in conv["messages"] if m["role"] != "tool"]
    assert said == [
        ("user", "go"),
        ("assistant", ""),
        ("assistant", "done quick"),
        ("user", "and then?"),
        ("assistant", "second answer"),
    ]
    assert conv["status"] == "completed"
