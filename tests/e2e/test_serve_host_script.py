"""A host's `scripted:` file is read once by serve, off its event loop, and bounded in size.

- The worker never reopens the path: a symlink swapped after serve's check (while the
  sub-agent waits for a slot) cannot make it read a file outside serve's directories.
- A big script is parsed on a thread: a `ping` sent after the spawn is answered first.
- A script over the limit is an error result naming the limit; nothing runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from launcher.backend.host_model import MAX_HOST_SCRIPT_BYTES
from tests.e2e.conftest import write_config
from tests.e2e.test_serve import LIMIT_S, serve, structured
from tests.e2e.test_serve_early import Host, request, spawn_call, text

pytestmark = pytest.mark.e2e

BIG_SCRIPT_BYTES = 400_000
"""Under the limit, yet seconds of PyYAML's pure-Python composer (~10 s a MiB here)."""
INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "host", "version": "1"},
}


async def status_of(client: Any, agent_id: str) -> str:
    got = await client.call_tool("get_subagent_result", {"agent_id": agent_id})
    return str(structured(got)["status"])


def linked_script(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace whose `link.yaml` points at a script inside it: (workspace, link)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "inside.yaml").write_text("steps:\n  - say: the inside script\n")
    link = workspace / "link.yaml"
    link.symlink_to(workspace / "inside.yaml")
    return workspace, link


def point_outside(link: Path) -> None:
    """Swap `link` for one to a file outside serve's folders, whose field names are secret."""
    secret = link.parent.parent / "outside" / "secret.yaml"
    secret.parent.mkdir()
    secret.write_text("steps:\n  - hunter2_field: the-password\n")
    link.unlink()
    link.symlink_to(secret)


@pytest.mark.anyio
async def test_a_symlink_swapped_after_the_check_is_never_followed_by_the_worker(
    tmp_path: Path,
) -> None:
    workspace, link = linked_script(tmp_path)
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "long.yaml").write_text("steps:\n  - sleep: 60\n    say: never\n")
    with anyio.fail_after(LIMIT_S * 2):
        async with serve(
            tmp_path, "--workspace", str(workspace), "--max-concurrent", "1"
        ) as client:
            blocker = await client.call_tool(
                "spawn_subagent",
                {
                    "prompt": "hold the only slot",
                    "background": True,
                    "model": f"scripted:{tmp_path / 'cfg' / 'long.yaml'}",
                },
            )
            blocker_id = structured(blocker)["agent_id"]
            for _ in range(600):  # bounded by fail_after too
                if await status_of(client, blocker_id) == "running":
                    break
                await anyio.sleep(0.1)
            queued = await client.call_tool(
                "spawn_subagent",
                {"prompt": "go", "background": True, "model": f"scripted:{link}"},
            )
            assert not queued.is_error, queued.content
            queued_id = structured(queued)["agent_id"]
            assert await status_of(client, queued_id) == "queued"
            # Checked and waiting for the slot: now the link points outside.
            point_outside(link)
            await client.call_tool("stop_subagent", {"agent_id": blocker_id})
            done = await client.call_tool(
                "get_subagent_result", {"agent_id": queued_id, "wait": True}
            )
    answer = done.content[0].text
    assert structured(done)["status"] == "completed", answer
    assert answer == "the inside script"
    assert "hunter2" not in json.dumps(structured(done))


@pytest.mark.anyio
async def test_a_resume_reads_the_hosts_earlier_script_again_through_the_check(
    tmp_path: Path,
) -> None:
    workspace, link = linked_script(tmp_path)
    with anyio.fail_after(LIMIT_S * 2):
        async with serve(tmp_path, "--workspace", str(workspace)) as client:
            first = await client.call_tool(
                "spawn_subagent", {"prompt": "go", "model": f"scripted:{link}"}
            )
            assert first.content[0].text == "the inside script"
            point_outside(link)
            # No `model`: the session's own, which the host named: read and checked again.
            again = await client.call_tool(
                "spawn_subagent", {"prompt": "more", "resume": structured(first)["session_id"]}
            )
    assert again.is_error
    assert "must be a file inside" in again.content[0].text
    assert "hunter2" not in again.content[0].text


@pytest.fixture
def host(tmp_path: Path) -> Any:
    config = write_config(tmp_path / "cfg", {})
    host = Host(tmp_path, config)
    host.send(request(1, "initialize", INIT))
    assert host.next()["id"] == 1
    host.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    yield host
    host.close()


def test_a_ping_is_answered_while_a_big_host_script_is_parsed(tmp_path: Path, host: Host) -> None:
    step = "  - call: [{tool: lazy__echo, args: {text: hello}}]\n"
    body = "steps:\n" + step * (BIG_SCRIPT_BYTES // len(step))
    # Broken at its end: the spawn's answer (an error naming the line) comes right after
    # the parse, so the ping's answer comes first only if the parse left the loop free.
    script = tmp_path / "cfg" / "big.yaml"
    script.write_text(body + "  - hunter2_field: 1\n")
    assert script.stat().st_size < MAX_HOST_SCRIPT_BYTES
    host.send(spawn_call(2, prompt="go", model=f"scripted:{script}"), request(3, "ping"))
    first, second = host.next(), host.next()
    assert (first["id"], first["result"]) == (3, {})
    assert second["id"] == 2 and second["result"]["isError"] is True
    assert "not a usable script (line" in text(second)
    assert "hunter2" not in text(second)


def test_a_host_script_over_the_limit_is_an_error_naming_it(tmp_path: Path, host: Host) -> None:
    script = tmp_path / "cfg" / "huge.yaml"
    padding = "# " + "x" * 78 + "\n"
    script.write_text(
        "steps:\n  - say: ran anyway\n" + padding * (MAX_HOST_SCRIPT_BYTES // len(padding) + 1)
    )
    host.send(spawn_call(2, prompt="go", model=f"scripted:{script}"))
    answer = host.next()
    assert answer["result"]["isError"] is True
    assert f"larger than {MAX_HOST_SCRIPT_BYTES // 1024} KiB" in text(answer)
    assert not (tmp_path / "state" / "sessions").exists(), "a refused spawn must run nothing"


def test_an_alias_bomb_script_is_refused(tmp_path: Path, host: Host) -> None:
    # 10 nested aliases of 10 items each: a few hundred bytes, 10^10 values once expanded.
    lines = ["steps:", "  - call:", "      - tool: read", "        args:"]
    lines.append("          a0: &a0 [x,x,x,x,x,x,x,x,x,x]")
    lines += [f"          a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    lines += ["          path: x", "  - say: ran anyway"]
    script = tmp_path / "cfg" / "bomb.yaml"
    script.write_text("\n".join(lines) + "\n")
    assert script.stat().st_size < 1024
    host.send(spawn_call(2, prompt="go", model=f"scripted:{script}"))
    answer = host.next()
    assert answer["result"]["isError"] is True
    assert "not a usable script (line 5)" in text(answer)
    assert not (tmp_path / "state" / "sessions").exists(), "a refused spawn must run nothing"
