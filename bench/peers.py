"""Benchmark 5: fan-out and call rate beside openai-agents' `MCPServerStdio`, plus orphans.

openai-agents runs in its own venv, bench/.venv-peers (created here from
requirements-peers.txt when missing); the launcher's side runs in this interpreter,
in the same run, on the same fast stub. Every figure is a ratio to a baseline of the
same run: fan-out 8 ÷ 1 server, calls ÷ a bare SDK client, and peer ÷ ours.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from _util import BENCH_DIR, Result, bench_main, fast_stub_args, median, spread, state_dir
from call_rate import via_connection, via_session
from fanout import DELAY_S, FANOUT, session_times
from orphans import alive, read_pids, reap

from launcher.config.types import AgentSpec, ServerSpec
from launcher.session import Session

VENV = BENCH_DIR / ".venv-peers"
VENV_PYTHON = VENV / "bin" / "python"
REQUIREMENTS = BENCH_DIR / "requirements-peers.txt"
CALLS = 1000
ROUNDS = 3
QUICK_ROUNDS = 1
PEER_LIMIT_S = 300.0
"""Bound on the whole peer run (3 rounds of 8 sequential 1 s starts is ~30 s)."""
KILL_GRACE_S = 2.0
"""How long survivors get to die after their client was SIGKILLed."""


def ensure_venv() -> None:
    """Create bench/.venv-peers with the peer frameworks, unless it exists."""
    if VENV_PYTHON.exists():
        return
    print(f"creating {VENV} (one-off; pip install -r {REQUIREMENTS.name})", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    pip = [str(VENV_PYTHON), "-m", "pip", "install", "-q", "-r", str(REQUIREMENTS)]
    subprocess.run(pip, check=True)


def run_peer(rounds: int, calls: int) -> dict[str, Any]:
    """Run peer_openai_agents.py in the peer venv and parse its JSON line."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cmd = [str(VENV_PYTHON), "peer_openai_agents.py", "--rounds", str(rounds)]
    cmd += ["--calls", str(calls), "--fanout", str(FANOUT), "--delay", str(DELAY_S)]
    proc = subprocess.run(
        cmd, cwd=BENCH_DIR, env=env, capture_output=True, text=True, timeout=PEER_LIMIT_S
    )
    if proc.returncode != 0:
        raise RuntimeError(f"peer run failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def grandchild_specs(pidfile: Path) -> dict[str, ServerSpec]:
    """One fast stub that spawns a grandchild and records both pids."""
    args = fast_stub_args("--grandchild", "--pidfile", str(pidfile))
    return {"orphan": ServerSpec(name="orphan", command="python", args=tuple(args))}


async def ours_after_close(root: Path) -> dict[str, Any]:
    """A session whose server spawned a grandchild ends normally; look for survivors."""
    pidfile = root / "ours-a.pid"
    session = Session(
        AgentSpec(name="bench"),
        grandchild_specs(pidfile),
        workspace=root,
        state_home=root / "state",
    )

    async def body(_: Session) -> None:
        return None

    await session.run(body)
    pids = read_pids(pidfile)
    return {"pids": pids, "survivors": await survivors_after(pids, 1.0)}


async def survivors_after(pids: list[int], grace: float) -> list[int]:
    """The pids still alive after `grace` seconds; reaped so nothing is left behind."""
    await anyio.sleep(grace)
    left = [p for p in pids if alive(p)]
    reap(left)
    return left


def ours_after_sigkill(root: Path) -> dict[str, Any]:
    """SIGKILL a process in the middle of a session; look for survivors."""
    pidfile = root / "ours-b.pid"
    code = (
        "import anyio, pathlib, sys, peers\n"
        "from launcher.config.types import AgentSpec\n"
        "from launcher.session import Session\n"
        f"root = pathlib.Path({str(root)!r})\n"
        f"s = Session(AgentSpec(name='k'), peers.grandchild_specs(pathlib.Path({str(pidfile)!r})),"
        " workspace=root, state_home=root / 'state-k')\n"
        "async def body(_):\n"
        "    print('ready', flush=True); await anyio.sleep(60)\n"
        "anyio.run(s.run, body)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], cwd=BENCH_DIR, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # bounded: the stub answers in milliseconds
        if line.strip() != "ready":
            raise RuntimeError(f"session did not get ready: {line!r}")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    pids = read_pids(pidfile)
    return {"pids": pids, "survivors": anyio.run(survivors_after, pids, KILL_GRACE_S)}


def ours(rounds: int, calls: int) -> dict[str, Any]:
    """The launcher's side of the same workloads, in this interpreter."""
    ready: dict[int, list[float]] = {1: [], FANOUT: []}
    conn: list[float] = []
    bare: list[float] = []
    with state_dir() as root:
        anyio.run(session_times, 1, 0.0, root)  # warm-up: lazy SDK import
        for _ in range(rounds):
            for count in ready:
                ready[count].append(anyio.run(session_times, count, DELAY_S, root)[0])
            conn.append(anyio.run(via_connection, fast_stub_args(), calls, root)[0])
            bare.append(anyio.run(via_session, fast_stub_args(), calls, root)[0])
        orphans = {
            "orphans_cleanup": anyio.run(ours_after_close, root),
            "orphans_sigkill": ours_after_sigkill(root),
        }
    print(f"ours: ready 1 {spread(ready[1])}, ready {FANOUT} {spread(ready[FANOUT])}")
    return {
        "ready": {"1": median(ready[1]), "N": median(ready[FANOUT])},
        "calls": {"ours": median(conn), "bare": median(bare)},
        **orphans,
    }


def orphan_text(check: dict[str, Any]) -> str:
    n = len(check["survivors"])
    return f"{n} of {len(check['pids'])} processes (server, grandchild) survived"


def run(quick: bool = False) -> list[Result]:
    rounds = QUICK_ROUNDS if quick else ROUNDS
    ensure_venv()
    start = time.perf_counter()
    peer = run_peer(rounds, CALLS)
    print(
        f"openai-agents {peer['openai-agents']} with mcp {peer['mcp']}: "
        f"{time.perf_counter() - start:.0f} s; {json.dumps(peer)}"
    )
    me = ours(rounds, CALLS)
    print(f"ours: {json.dumps(me)}")
    pr, mr = peer["ready"], me["ready"]
    pc, mc = peer["calls"], me["calls"]
    label = f"openai-agents {peer['openai-agents']}"
    rows = [
        Result(
            "5 peers: fan-out",
            f"ready {FANOUT} ÷ 1 server, ours",
            mr["N"] / mr["1"],
            1.1,
            f"{mr['N'] * 1000:.0f} vs {mr['1'] * 1000:.0f} ms",
        ),
        Result(
            "5 peers: fan-out",
            f"ready {FANOUT} ÷ 1 server, {label} default (sequential)",
            pr["seq N"] / pr["seq 1"],
            None,
            f"{pr['seq N'] * 1000:.0f} vs {pr['seq 1'] * 1000:.0f} ms",
        ),
        Result(
            "5 peers: fan-out",
            f"ready {FANOUT} ÷ 1 server, {label} MCPServerManager(connect_in_parallel)",
            pr["par N"] / pr["par 1"],
            None,
            f"{pr['par N'] * 1000:.0f} vs {pr['par 1'] * 1000:.0f} ms",
        ),
        Result(
            "5 peers: fan-out",
            f"ready with {FANOUT} servers, {label} default ÷ ours",
            pr["seq N"] / mr["N"],
            None,
            "above 1 = we are faster",
        ),
        Result(
            "5 peers: calls",
            f"{CALLS} echo calls ÷ bare SDK Client, ours",
            mc["ours"] / mc["bare"],
            1.05,
            f"{CALLS / mc['ours']:.0f} vs {CALLS / mc['bare']:.0f} calls/s",
        ),
        Result(
            "5 peers: calls",
            f"{CALLS} echo calls ÷ bare SDK Client, {label}",
            pc["peer"] / pc["bare"],
            None,
            f"{CALLS / pc['peer']:.0f} vs {CALLS / pc['bare']:.0f} calls/s (peer venv)",
        ),
        Result(
            "5 peers: calls",
            f"call overhead vs bare SDK, {label} ÷ ours",
            (pc["peer"] / pc["bare"]) / (mc["ours"] / mc["bare"]),
            None,
            f"above 1 = we add less; raw {CALLS / pc['peer']:.0f} vs {CALLS / mc['ours']:.0f} "
            "calls/s, measured in different processes",
        ),
    ]
    for key, when in (("orphans_cleanup", "normal close"), ("orphans_sigkill", "client SIGKILL")):
        for who, data in (("ours", me), (label, peer)):
            rows.append(
                Result(
                    "5 peers: orphans",
                    f"processes left after {when}, {who}",
                    float(len(data[key]["survivors"])),
                    0 if who == "ours" else None,
                    orphan_text(data[key]),
                )
            )
    return rows


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
