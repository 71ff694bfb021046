"""Issue 23.8: the SDK's log records of concurrent sessions in one process (`check --jobs N`)
stay apart: each session's `sdk.log` holds only its own records, masked with its own secrets."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest

from launcher.config.types import AgentSpec, ServerSpec
from launcher.run_plan import RunPlan
from launcher.session import Session

pytestmark = pytest.mark.anyio

LIMIT_S = 10.0
SECRETS = {"a": "alpha-secret-0123456789", "b": "bravo-secret-9876543210"}


def session(tmp_path: Path, name: str) -> Session:
    # The server is never started (isolated agent): it only brings its `${VAR}` secret.
    spec = ServerSpec(name=f"srv-{name}", command="false", secrets=frozenset({SECRETS[name]}))
    agent = AgentSpec(name=f"agent-{name}", isolated=True, tools=())
    plan = RunPlan(agent, {spec.name: spec}, workspace=tmp_path, state_home=tmp_path / "home")
    return Session(plan)


async def test_concurrent_sessions_keep_their_own_sdk_records(tmp_path: Path) -> None:
    sessions = {name: session(tmp_path, name) for name in SECRETS}
    both_logging = anyio.Event()
    started: set[str] = set()

    def body(name: str):
        async def run(s: Session) -> None:
            started.add(name)
            if len(started) == len(SECRETS):
                both_logging.set()
            await both_logging.wait()  # both sessions' routes are live at once
            # A record naming both secrets: only this session's log may hold it.
            logging.getLogger("mcp.client.test").warning(
                "record of %s: %s %s", name, SECRETS["a"], SECRETS["b"]
            )

        return run

    with anyio.fail_after(LIMIT_S):
        async with anyio.create_task_group() as tg:
            for name, s in sessions.items():
                tg.start_soon(s.run, body(name))

    for name, s in sessions.items():
        other = "b" if name == "a" else "a"
        text = (s.dir / "sdk.log").read_text()
        assert f"record of {name}" in text
        assert f"record of {other}" not in text, f"{name}'s sdk.log holds {other}'s record"
        assert SECRETS[name] not in text, f"{name}'s own secret is not masked"
        assert (s.dir / "sdk.log").stat().st_mode & 0o777 == 0o600


async def test_records_outside_any_session_reach_no_session_log(tmp_path: Path) -> None:
    s = session(tmp_path, "a")

    async def run(_: Session) -> None:
        logging.getLogger("mcp").warning("inside")

    await s.run(run)
    logging.getLogger("mcp").warning("outside, after the session")
    text = (s.dir / "sdk.log").read_text()
    assert "inside" in text and "outside" not in text
