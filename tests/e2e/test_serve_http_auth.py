"""`serve --http` with bearer tokens: a request without the right token is refused with 401
and `WWW-Authenticate` before anything runs; each caller sees, steers, stops and resumes
only its own sub-agents and sessions (one error text for "not yours" and "not found");
listening beyond loopback without a token, or a token file others can read, exits 2."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import MCPError

from tests.e2e.conftest import cli_argv, cli_env, run_process
from tests.e2e.serve_http_support import LIMIT_S, http_client, http_config, http_serve
from tests.e2e.serve_tasks_support import legacy_task_call, request

pytestmark = pytest.mark.e2e

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef012"
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


def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "tokens"
    path.write_text(f"# who may call\nalice {ALICE}\n\nbob {BOB}\n")
    path.chmod(0o600)
    return path


def spawn_call(tmp_path: Path) -> dict[str, object]:
    model = f"scripted:{tmp_path / 'quick.yaml'}"
    call = {
        "name": "spawn_subagent",
        "arguments": {"prompt": "go", "ext": ["lazy"], "model": model},
    }
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}


@pytest.mark.anyio
async def test_a_missing_or_wrong_token_is_refused_with_401_and_nothing_runs(
    tmp_path: Path,
) -> None:
    with http_serve(tmp_path, "--token-file", str(token_file(tmp_path))) as serve:
        async with httpx2.AsyncClient(timeout=LIMIT_S) as http:
            for auth in (
                {},
                {"Authorization": "Bearer wrong-token-0123456789"},
                {"Authorization": f"Basic {ALICE}"},
            ):
                for body in (INIT, spawn_call(tmp_path)):
                    answer = await http.post(serve.url, json=body, headers={**HEADERS, **auth})
                    assert answer.status_code == 401, answer.text
                    assert answer.headers["www-authenticate"].startswith("Bearer ")
                    assert "invalid_token" in answer.headers["www-authenticate"]
            # A 2026-07-28 request (no session) is refused the same way.
            modern = {**spawn_call(tmp_path), "id": 3}
            answer = await http.post(
                serve.url, json=modern, headers={**HEADERS, "MCP-Protocol-Version": "2026-07-28"}
            )
            assert answer.status_code == 401
            ok = await http.post(
                serve.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {ALICE}"}
            )
            assert ok.status_code == 200
        # Nothing ran: no session stored, no worker, no server started.
        assert not (serve.home / "sessions").exists() or not any(
            (serve.home / "sessions").iterdir()
        )
        # Nor did any worker get a job (each sub-agent's log is serve/sa-ID.log).
        assert list((serve.home / "serve").glob("sa-*.log")) == []
        assert not (tmp_path / "lazy.pid").exists()
        assert ALICE not in serve.stderr() and BOB not in serve.stderr()


@pytest.mark.anyio
async def test_two_callers_never_see_each_others_sub_agents_tasks_or_sessions(
    tmp_path: Path,
) -> None:
    long = {"prompt": "go", "model": f"scripted:{tmp_path / 'long.yaml'}", "background": True}
    quick = {"prompt": "go", "model": f"scripted:{tmp_path / 'quick.yaml'}", "ext": ["lazy"]}
    with http_serve(tmp_path, "--token-file", str(token_file(tmp_path))) as serve:
        with anyio.fail_after(LIMIT_S):
            async with (
                http_client(serve.url, token=ALICE, mode="legacy") as alice,
                http_client(serve.url, token=BOB, mode="legacy") as bob,
            ):
                mine = await alice.call_tool("spawn_subagent", long)
                agent_id = mine.structured_content["agent_id"]
                done = await alice.call_tool("spawn_subagent", quick)
                session_id = done.structured_content["session_id"]
                task = await legacy_task_call(alice, "spawn_subagent", quick, 60_000)
                task_id = task["task"]["taskId"]

                unknown = "sa-00000000"
                for tool, args in (
                    ("get_subagent_result", {"agent_id": agent_id}),
                    ("steer_subagent", {"agent_id": agent_id, "message": "hi"}),
                    ("stop_subagent", {"agent_id": agent_id}),
                    ("get_subagent_result", {"agent_id": task_id}),
                ):
                    theirs = await bob.call_tool(tool, args)
                    nobodys = await bob.call_tool(tool, {**args, "agent_id": unknown})
                    assert theirs.is_error and nobodys.is_error
                    assert theirs.content[0].text == nobodys.content[0].text.replace(
                        unknown, args["agent_id"]
                    )
                for method in ("tasks/get", "tasks/result", "tasks/cancel"):
                    with pytest.raises(MCPError) as theirs_task:
                        await request(bob, method, {"taskId": task_id})
                    with pytest.raises(MCPError) as no_task:
                        await request(bob, method, {"taskId": unknown})
                    assert theirs_task.value.code == no_task.value.code
                    assert str(theirs_task.value).replace(task_id, unknown) == str(no_task.value)
                listed = await request(bob, "tasks/list", {})
                assert listed["tasks"] == []
                assert [t["taskId"] for t in (await request(alice, "tasks/list", {}))["tasks"]] == [
                    task_id
                ]

                # Resume: bob cannot name alice's session, by id or as his `last`.
                resumed = await bob.call_tool(
                    "spawn_subagent", {**quick, "resume": session_id, "prompt": "more"}
                )
                nothing = await bob.call_tool(
                    "spawn_subagent", {**quick, "resume": "20990101T000000-abcdef", "prompt": "x"}
                )
                assert resumed.is_error and nothing.is_error
                assert resumed.content[0].text.replace(session_id, "X") == nothing.content[
                    0
                ].text.replace("20990101T000000-abcdef", "X")
                last = await bob.call_tool("spawn_subagent", {**quick, "resume": "last"})
                assert last.is_error
                again = await alice.call_tool(
                    "spawn_subagent", {**quick, "resume": session_id, "prompt": "more"}
                )
                assert again.structured_content["status"] == "completed"
                assert again.structured_content["session_id"] == session_id

                # Still alice's to see and stop.
                status = await alice.call_tool("get_subagent_result", {"agent_id": agent_id})
                assert status.structured_content["status"] == "running"
                assert (await alice.call_tool("stop_subagent", {"agent_id": agent_id})).content[
                    0
                ].text == "stopped"


@pytest.mark.anyio
async def test_a_session_opened_by_one_token_is_not_usable_with_another(tmp_path: Path) -> None:
    with http_serve(tmp_path, "--token-file", str(token_file(tmp_path))) as serve:
        async with httpx2.AsyncClient(timeout=LIMIT_S) as http:
            opened = await http.post(
                serve.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {ALICE}"}
            )
            session = opened.headers["mcp-session-id"]
            probe = {"jsonrpc": "2.0", "id": 5, "method": "ping"}
            as_bob = await http.post(
                serve.url,
                json=probe,
                headers={**HEADERS, "Authorization": f"Bearer {BOB}", "Mcp-Session-Id": session},
            )
            assert as_bob.status_code == 404


def serve_exit(
    tmp_path: Path, *args: str, env: dict[str, str | None] | None = None
) -> tuple[int, str]:
    config = http_config(tmp_path)
    proc = run_process(
        cli_argv("serve", "--config-dir", str(config), *args),
        cwd=tmp_path,
        env=cli_env(tmp_path / "state", env),
        timeout=LIMIT_S,
    )
    return proc.returncode, proc.stderr


def test_listening_beyond_loopback_without_a_token_exits_2_naming_it(tmp_path: Path) -> None:
    code, err = serve_exit(tmp_path, "--http", "0.0.0.0:0")
    assert code == 2
    assert "SUBAGENT_SERVE_TOKEN" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("content", "mode", "says"),
    [
        ("alice short\n", 0o600, "field TOKEN"),
        (f"alice {ALICE}\nalice {BOB}\n", 0o600, "listed twice"),
        (f"alice {ALICE} extra\n", 0o600, ":1: expected 'CALLER TOKEN'"),
        (f"alice {ALICE}\n", 0o644, "chmod 600"),
    ],
)
def test_a_bad_token_file_exits_2_naming_file_line_and_field(
    tmp_path: Path, content: str, mode: int, says: str
) -> None:
    path = tmp_path / "tokens"
    path.write_text(content)
    path.chmod(mode)
    code, err = serve_exit(tmp_path, "--http", "127.0.0.1:0", "--token-file", str(path))
    assert code == 2, err
    assert str(path) in err and says in err
    assert ALICE not in err and BOB not in err and "Traceback" not in err


def test_the_environment_token_serves_the_default_caller(tmp_path: Path) -> None:
    token = "env-token-0123456789abcdef"

    async def main() -> str:
        with http_serve(tmp_path, env={"SUBAGENT_SERVE_TOKEN": token}) as serve:
            async with http_client(serve.url, token=token, mode="legacy") as client:
                got = await client.call_tool(
                    "spawn_subagent",
                    {
                        "prompt": "go",
                        "model": f"scripted:{tmp_path / 'quick.yaml'}",
                        "ext": ["lazy"],
                    },
                )
                session = got.structured_content["session_id"]
            import sqlite3

            with sqlite3.connect(serve.home / "logs.db") as db:
                (caller,) = db.execute(
                    "SELECT owner_caller FROM sessions WHERE id = ?", (session,)
                ).fetchone()
            assert token not in serve.stderr()
            return str(caller)

    assert anyio.run(main) == "default"
