"""serve's `resume` reaches only the sessions this config's serve started.

A CLI run, another serve's session (another workspace), an id that exists nowhere and a
prefix shorter than 8 characters all get the one same error text, so a host cannot tell
"not yours" from "not found" and list the store's ids. A serve restarted with the same
config dir and workspace is the same serve: it resumes its sessions by id or an 8-character
prefix.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from launcher.store.history import NOT_OWNED
from tests.e2e.conftest import Subagent
from tests.e2e.test_serve import LIMIT_S, serve, structured

pytestmark = pytest.mark.e2e


async def spawn_session(tmp_path: Path, *extra: str, prompt: str = "go") -> str:
    """Run one sub-agent through a serve started with `extra`; its stored session id."""
    async with serve(tmp_path, *extra) as client:
        done = await client.call_tool(
            "spawn_subagent", {"prompt": prompt, "model": f"scripted:{say(tmp_path)}"}
        )
    assert not done.is_error, done.content
    return str(structured(done)["session_id"])


def say(tmp_path: Path) -> Path:
    """A script inside the config dir: a file every serve here may read for its host."""
    path = tmp_path / "cfg" / "say.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text("steps:\n  - say: said\n")
    return path


@pytest.mark.anyio
async def test_resume_takes_only_this_serves_sessions_with_one_error_for_the_rest(
    tmp_path: Path,
) -> None:
    other = tmp_path / "other-workspace"
    other.mkdir()
    cli = Subagent(tmp_path / "state", tmp_path)
    with anyio.fail_after(LIMIT_S * 4):
        ran = await anyio.to_thread.run_sync(
            lambda: cli.run(
                "spawn",
                "--config-dir",
                str(tmp_path / "cfg"),
                "--model",
                f"scripted:{say(tmp_path)}",
                "--json",
                "from the CLI",
            )
        )
        assert ran.code == 0, ran.stderr
        (cli_id,) = {e["session_id"] for e in ran.json_lines() if e["type"] == "session_start"}
        others = await spawn_session(tmp_path, "--workspace", str(other))
        mine = await spawn_session(tmp_path)

        # A new serve process with the same config dir and workspace: the same serve.
        async with serve(tmp_path) as client:

            async def resume(ref: str) -> tuple[bool, str]:
                got = await client.call_tool("spawn_subagent", {"prompt": "more", "resume": ref})
                return bool(got.is_error), got.content[0].text

            refused = {
                ref: await resume(ref)
                for ref in (cli_id, others, "20990101T000000-abcdef", mine[:1], mine[:7])
            }
            by_prefix = await resume(mine[:8])
            by_id = await resume(mine)

    assert refused == dict.fromkeys(refused, (True, NOT_OWNED)), refused
    assert by_prefix == (False, "said") and by_id == (False, "said")
