"""What `serve --http` keeps from the sub-agents it runs and from other local users: the
token file is out of every sub-agent's reach (sandbox and file tools), its tokens are
masked in results and at rest, and a loopback serve without tokens answers only its own
user (another uid gets 403)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import pytest

from launcher.tools.sandbox import mechanism_problem
from tests.e2e.serve_http_support import LIMIT_S, http_client, http_serve, session_events
from tests.e2e.unprivileged import NOBODY, shared_dir, user_prefix

pytestmark = pytest.mark.e2e

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef012"
MARKER = "who-may-call-marker"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

needs_sandbox = pytest.mark.skipif(
    mechanism_problem() is not None, reason=f"no sandbox here: {mechanism_problem()}"
)


def write_tokens(where: Path) -> Path:
    path = where / "tokens"
    path.write_text(f"# {MARKER}\nalice {ALICE}\nbob {BOB}\n")
    path.chmod(0o600)
    return path


def all_bytes_under(root: Path) -> bytes:
    """Every file's bytes under `root` (the store, its WAL, events, spills)."""
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


async def read_tokens_as_alice(where: Path, url: str) -> tuple[str, list[str]]:
    """Alice's sub-agent tries the shell and the read/grep tools on the token file."""
    tokens = where / "tokens"
    script = where / "steal.yaml"
    calls = [
        {"tool": "bash", "args": {"command": f"cat {tokens}; echo rc=$?"}},
        {"tool": "read", "args": {"path": "tokens"}},
        {"tool": "grep", "args": {"pattern": "token", "path": "."}},
    ]
    script.write_text(json.dumps({"steps": [{"call": calls}, {"say": "tried"}]}))
    async with http_client(url, token=ALICE) as alice:
        done = await alice.call_tool(
            "spawn_subagent", {"prompt": "go", "model": f"scripted:{script}"}
        )
    content = done.structured_content
    assert content is not None, done
    results = [
        e["content"]
        for e in session_events(where / "state", content["session_id"])
        if e["type"] == "tool_result"
    ]
    return content["status"], results


def assert_token_file_unread(status: str, results: list[str]) -> None:
    assert status == "completed", results
    assert len(results) == 3, results
    for text in results:
        assert MARKER not in text and "alice ****" not in text, results
    # The calls run in parallel: results come in any order.
    assert any("Permission denied" in t and "rc=1" in t for t in results), results
    assert any("'tokens' is a secret file" in t and "refused" in t for t in results), results


@needs_sandbox
@pytest.mark.anyio
async def test_a_sub_agent_cannot_read_the_token_file(tmp_path: Path) -> None:
    tokens = write_tokens(tmp_path)
    with http_serve(tmp_path, "--token-file", str(tokens), "--sandbox", "required") as serve:
        with anyio.fail_after(LIMIT_S):
            status, results = await read_tokens_as_alice(tmp_path, serve.url)
    assert_token_file_unread(status, results)


@needs_sandbox
@pytest.mark.anyio
async def test_a_sub_agent_of_an_unprivileged_serve_cannot_read_the_token_file() -> None:
    prefix, why = user_prefix()
    if why is not None:
        pytest.skip(why)
    where = shared_dir()
    tokens = write_tokens(where)
    if os.geteuid() == 0:
        os.chown(tokens, NOBODY, NOBODY)
    args = ("--token-file", str(tokens), "--sandbox", "required")
    with http_serve(where, *args, prefix=prefix) as serve:
        with anyio.fail_after(LIMIT_S):
            status, results = await read_tokens_as_alice(where, serve.url)
    assert_token_file_unread(status, results)


@pytest.mark.anyio
async def test_token_file_tokens_are_masked_in_results_and_at_rest(tmp_path: Path) -> None:
    script = tmp_path / "say.yaml"
    script.write_text(json.dumps({"steps": [{"say": f"bob's is {BOB}, mine {ALICE}"}]}))
    with http_serve(tmp_path, "--token-file", str(write_tokens(tmp_path))) as serve:
        with anyio.fail_after(LIMIT_S):
            async with http_client(serve.url, token=ALICE) as alice:
                done = await alice.call_tool(
                    "spawn_subagent", {"prompt": "go", "model": f"scripted:{script}"}
                )
    assert done.structured_content is not None, done
    answer = json.dumps(done.structured_content) + json.dumps(
        [c.model_dump() for c in done.content]
    )
    assert "bob's is ****" in answer, answer
    assert BOB not in answer and ALICE not in answer
    stored = all_bytes_under(serve.home)
    assert b"bob's is" in stored  # the session was recorded at all
    assert BOB.encode() not in stored and ALICE.encode() not in stored


PROBE = """
import json, sys, urllib.request
req = urllib.request.Request(sys.argv[1], data=sys.argv[2].encode(), method="POST",
                             headers=json.loads(sys.argv[3]))
try:
    with urllib.request.urlopen(req, timeout=60) as r:
        print(r.status)
except urllib.error.HTTPError as e:
    print(e.code)
"""


def test_loopback_without_token_refuses_another_uid(tmp_path: Path) -> None:
    prefix, why = user_prefix()
    if why is not None:
        pytest.skip(why)
    if not prefix:
        pytest.skip("not root: there is no second uid to call from")
    with http_serve(tmp_path) as serve:
        argv = [sys.executable, "-c", PROBE, serve.url, json.dumps(INIT), json.dumps(HEADERS)]
        theirs = subprocess.run(
            [*prefix, *argv], capture_output=True, text=True, timeout=LIMIT_S, cwd="/"
        )
        assert theirs.stdout.strip() == "403", theirs
        mine = httpx2.post(serve.url, json=INIT, headers=HEADERS, timeout=LIMIT_S)
        assert mine.status_code == 200, mine.text
    assert "Traceback" not in serve.stderr()


def test_a_forwarded_for_header_does_not_borrow_another_connections_uid(
    tmp_path: Path,
) -> None:
    # The header names a live connection of serve's own user; the kernel must be asked
    # about the socket the request really came in on, so the other uid still gets 403.
    prefix, why = user_prefix()
    if why is not None:
        pytest.skip(why)
    if not prefix:
        pytest.skip("not root: there is no second uid to call from")
    with http_serve(tmp_path) as serve:
        host, port = serve.url.split("//")[1].split("/")[0].rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=LIMIT_S) as mine_open:
            forged = {**HEADERS, "X-Forwarded-For": f"127.0.0.1:{mine_open.getsockname()[1]}"}
            argv = [sys.executable, "-c", PROBE, serve.url, json.dumps(INIT), json.dumps(forged)]
            theirs = subprocess.run(
                [*prefix, *argv], capture_output=True, text=True, timeout=LIMIT_S, cwd="/"
            )
        assert theirs.stdout.strip() == "403", theirs
    assert "Traceback" not in serve.stderr()


@pytest.mark.anyio
@pytest.mark.parametrize("args", [(), ("--max-concurrent", "3", "--max-per-caller", "2")])
async def test_one_caller_cannot_take_every_slot(tmp_path: Path, args: tuple[str, ...]) -> None:
    # Default: with two callers and 2 slots, each caller gets at most 1.
    long = {"prompt": "go", "model": f"scripted:{tmp_path / 'long.yaml'}", "background": True}
    quick = {"prompt": "go", "model": f"scripted:{tmp_path / 'quick.yaml'}", "ext": ["lazy"]}
    tokens = write_tokens(tmp_path)
    with http_serve(
        tmp_path, "--token-file", str(tokens), *(args or ("--max-concurrent", "2"))
    ) as serve:
        with anyio.fail_after(LIMIT_S):
            async with (
                http_client(serve.url, token=ALICE) as alice,
                http_client(serve.url, token=BOB) as bob,
            ):
                ids = []
                for _ in range(3):
                    started = await alice.call_tool("spawn_subagent", long)
                    ids.append(started.structured_content["agent_id"])

                async def statuses() -> list[str]:
                    got = []
                    for agent_id in ids:
                        seen = await alice.call_tool("get_subagent_result", {"agent_id": agent_id})
                        got.append(seen.structured_content["status"])
                    return got

                share = 2 if args else 1
                for _ in range(int(LIMIT_S / 0.1)):  # polled as a host polls; bounded
                    if (await statuses()).count("running") >= share:
                        break
                    await anyio.sleep(0.1)
                done = await bob.call_tool("spawn_subagent", quick)
                assert done.structured_content["status"] == "completed"
                assert sorted(await statuses()) == sorted(
                    ["running"] * share + ["queued"] * (3 - share)
                )
                for agent_id in ids:
                    await alice.call_tool("stop_subagent", {"agent_id": agent_id})
