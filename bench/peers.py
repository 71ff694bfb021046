"""Benchmark 5: fan-out and call rate beside openai-agents' `MCPServerStdio`, plus orphans.

openai-agents runs in its own venv, .interop/venv-peers (created here from
requirements-peers.txt when missing), in its default mode (servers connected one after
another) and its fastest documented one (`MCPServerManager(connect_in_parallel=True)`). Each
round runs the peer's round (one process) and then ours, in this interpreter, on the same
fast stub: drift hits both sides of a round alike. Every ratio is the median of per-round
ratios: fan-out 8 ÷ 1 server, calls ÷ a bare SDK client (no per-call timeout, CPU time of
the calling process), and peer ÷ ours.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from _util import (
    BENCH_DIR,
    REPO,
    Result,
    Size,
    bench_main,
    fast_stub_args,
    median,
    pair_ratios,
    sized,
    spread,
    state_dir,
)
from call_rate import via_session, via_session_loop
from fanout import DELAY_S, FANOUT, session_times
from orphans import alive, read_pids, reap

from launcher.config.types import AgentSpec, ServerSpec
from launcher.run_plan import RunPlan
from launcher.session import Session

VENV = REPO / ".interop" / "venv-peers"
"""Outside bench/: the tests that read the project's sources must not walk a peer's."""
VENV_PYTHON = VENV / "bin" / "python"
REQUIREMENTS = BENCH_DIR / "requirements-peers.txt"
PEER_LIMIT_S = 300.0
"""Bound on one peer round (8 sequential 1 s starts, 1 000 calls: ~20 s)."""
KILL_GRACE_S = 2.0
"""How long survivors get to die after their client was SIGKILLed."""
PIP_LIMIT_S = 900.0
"""Bound on creating a peer venv (one pip install from the registry)."""
FA_VENV = REPO / ".interop" / "venv-fast-agent"
FA_PYTHON = FA_VENV / "bin" / "python"
FA_REQUIREMENTS = BENCH_DIR / "requirements-fast-agent.txt"
FA_MIN_PYTHON = (3, 13)


def python_313() -> str | None:
    """A Python >= 3.13 for fast-agent's venv: $BENCH_PYTHON313, `python3.13` on PATH, or a
    pyenv-installed one; None when the machine has none."""
    found = [os.environ.get("BENCH_PYTHON313"), shutil.which("python3.13")]
    found += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[3-9]*/bin/python3")))
    return next((p for p in found if p and os.access(p, os.X_OK)), None)


def ensure_fast_agent() -> str | None:
    """.interop/venv-fast-agent, created when missing; None (and why, printed) if impossible."""
    if FA_PYTHON.exists():
        return str(FA_PYTHON)
    base = python_313()
    if base is None:
        print("fast-agent skipped: it needs Python >= 3.13 and none was found", flush=True)
        return None
    print(f"creating {FA_VENV} with {base} (one-off)", flush=True)
    subprocess.run([base, "-m", "venv", str(FA_VENV)], check=True, timeout=PIP_LIMIT_S)
    pip = [str(FA_PYTHON), "-m", "pip", "install", "-q", "-r", str(FA_REQUIREMENTS)]
    subprocess.run(pip, check=True, timeout=PIP_LIMIT_S)
    return str(FA_PYTHON)


def ensure_venv() -> None:
    """Create .interop/venv-peers with the peer frameworks, unless it exists."""
    if VENV_PYTHON.exists():
        return
    print(f"creating {VENV} (one-off; pip install -r {REQUIREMENTS.name})", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, timeout=PIP_LIMIT_S)
    pip = [str(VENV_PYTHON), "-m", "pip", "install", "-q", "-r", str(REQUIREMENTS)]
    subprocess.run(pip, check=True, timeout=PIP_LIMIT_S)


def run_peer(
    calls: int, delay: float, *, orphans: bool = False, fast_agent: str | None = None
) -> dict[str, Any]:
    """One round of peer_openai_agents.py in the peer venv (or, with `fast_agent`, of
    peer_fast_agent.py under that interpreter); its JSON line."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if fast_agent is not None:
        cmd = [fast_agent, "peer_fast_agent.py"]
    else:
        cmd = [str(VENV_PYTHON), "peer_openai_agents.py", "--rounds", "1"]
        cmd += ["--orphans"] if orphans else []
    cmd += ["--calls", str(calls), "--fanout", str(FANOUT), "--delay", str(delay)]
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
        RunPlan(
            AgentSpec(name="bench"),
            grandchild_specs(pidfile),
            workspace=root,
            state_home=root / "state",
        )
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
        "from launcher.run_plan import RunPlan\n"
        "from launcher.session import Session\n"
        f"root = pathlib.Path({str(root)!r})\n"
        "s = Session(RunPlan(AgentSpec(name='k'),"
        f" peers.grandchild_specs(pathlib.Path({str(pidfile)!r})),"
        " workspace=root, state_home=root / 'state-k'))\n"
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


def ours_round(calls: int, delay: float, root: Path) -> dict[str, float]:
    """One round of the launcher's side, in this interpreter: ready with 1 and with 8
    servers, and the call loop (a real Session) beside a bare ClientSession (CPU)."""
    one = anyio.run(session_times, 1, delay, root)[0]
    many = anyio.run(session_times, FANOUT, delay, root)[0]
    conn = anyio.run(via_session_loop, fast_stub_args(), calls, root)
    bare = anyio.run(via_session, fast_stub_args(), calls, root)
    return {"1": one, "N": many, "ours_cpu": conn.cpu, "bare_cpu": bare.cpu}


def ours_orphans(root: Path) -> dict[str, Any]:
    """The orphan checks on our side."""
    return {
        "orphans_cleanup": anyio.run(ours_after_close, root),
        "orphans_sigkill": ours_after_sigkill(root),
    }


def orphan_text(check: dict[str, Any]) -> str:
    n = len(check["survivors"])
    return f"{n} of {len(check['pids'])} processes (server, grandchild) survived"


def run(size: Size = "full") -> list[Result]:
    rounds = sized(size, 3, 1, 1)
    calls = sized(size, 1000, 300, 20)
    delay = sized(size, DELAY_S, DELAY_S, 0.1)
    ensure_venv()
    fa_python = ensure_fast_agent()
    peer: list[dict[str, Any]] = []
    fa: list[dict[str, Any]] = []
    me: list[dict[str, float]] = []
    start = time.perf_counter()
    with state_dir() as root:
        anyio.run(session_times, 1, 0.0, root)  # warm-up: lazy SDK import
        for i in range(rounds):  # interleaved: a peer round, then ours
            peer.append(run_peer(calls, delay, orphans=i == 0))
            if fa_python is not None:
                fa.append(run_peer(calls, delay, fast_agent=fa_python))
            me.append(ours_round(calls, delay, root))
        mine = ours_orphans(root)
    first = peer[0]
    label = f"openai-agents {first['openai-agents']}"
    print(
        f"{label} with mcp {first['mcp']}, {rounds} round(s) in {time.perf_counter() - start:.0f} s"
    )
    for side, rows in (("peer", [p["ready"] for p in peer]), ("ours", me)):
        print(f"{side}: {json.dumps(rows)}")
    p_seq = [p["ready"]["seq N"] for p in peer]
    p_par = [p["ready"]["par N"] for p in peer]
    m_n, m_1 = [m["N"] for m in me], [m["1"] for m in me]
    ours_calls = pair_ratios([m["ours_cpu"] for m in me], [m["bare_cpu"] for m in me])
    peer_calls = pair_ratios(
        [p["calls"]["peer_cpu"] for p in peer], [p["calls"]["bare_cpu"] for p in peer]
    )
    rows = [
        Result(
            "5 peers: fan-out",
            f"ready {FANOUT} ÷ 1 server, ours",
            median(pair_ratios(m_n, m_1)),
            1.1,
            f"{spread(m_n)} vs {spread(m_1)}",
        ),
        Result(
            "5 peers: fan-out",
            f"ready {FANOUT} ÷ 1 server, {label} default (sequential)",
            median(pair_ratios(p_seq, [p["ready"]["seq 1"] for p in peer])),
            None,
            spread(p_seq),
        ),
        Result(
            "5 peers: fan-out",
            f"ready {FANOUT} ÷ 1 server, {label} MCPServerManager(connect_in_parallel)",
            median(pair_ratios(p_par, [p["ready"]["par 1"] for p in peer])),
            None,
            spread(p_par),
        ),
        Result(
            "5 peers: fan-out",
            f"ready with {FANOUT} servers, {label} default ÷ ours (same round)",
            median(pair_ratios(p_seq, m_n)),
            None,
            "above 1 = we are ready sooner",
        ),
        Result(
            "5 peers: fan-out",
            f"ready with {FANOUT} servers, {label} connect_in_parallel ÷ ours (same round)",
            median(pair_ratios(p_par, m_n)),
            None,
            "above 1 = we are ready sooner",
        ),
        Result(
            "5 peers: calls",
            f"{calls} echo calls, client CPU ÷ its bare SDK client's, ours (a real Session)",
            median(ours_calls),
            1.05,
            "bare: ClientSession, no per-call timeout",
        ),
        Result(
            "5 peers: calls",
            f"{calls} echo calls, client CPU ÷ its bare SDK client's, {label}",
            median(peer_calls),
            None,
            "bare: mcp.Client in the peer venv, no per-call timeout",
        ),
        Result(
            "5 peers: calls",
            f"call overhead over the bare SDK, {label} ÷ ours (same round)",
            median(pair_ratios(peer_calls, ours_calls)),
            None,
            "above 1 = we add less",
        ),
    ]
    if fa:
        rows += fast_agent_rows(fa, me, calls, ours_calls)
    for key, when in (("orphans_cleanup", "normal close"), ("orphans_sigkill", "client SIGKILL")):
        for who, data in (("ours", mine), (label, first)):
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


def fast_agent_rows(
    fa: list[dict[str, Any]], me: list[dict[str, float]], calls: int, ours_calls: list[float]
) -> list[Result]:
    """fast-agent beside ours: its (only, sequential) connect and its call overhead."""
    label = f"fast-agent {fa[0]['fast-agent']}"
    seq = [f["ready"]["seq N"] for f in fa]
    fa_calls = pair_ratios(
        [f["calls"]["peer_cpu"] for f in fa], [f["calls"]["bare_cpu"] for f in fa]
    )
    return [
        Result(
            "5 peers: fan-out",
            f"ready {FANOUT} ÷ 1 server, {label} (its one mode: sequential)",
            median(pair_ratios(seq, [f["ready"]["seq 1"] for f in fa])),
            None,
            spread(seq),
        ),
        Result(
            "5 peers: fan-out",
            f"ready with {FANOUT} servers, {label} ÷ ours (same round)",
            median(pair_ratios(seq, [m["N"] for m in me])),
            None,
            "above 1 = we are ready sooner",
        ),
        Result(
            "5 peers: calls",
            f"{calls} echo calls, client CPU ÷ its bare SDK client's, {label}",
            median(fa_calls),
            None,
            "bare: mcp.Client in its venv, no per-call timeout",
        ),
        Result(
            "5 peers: calls",
            f"call overhead over the bare SDK, {label} ÷ ours (same round)",
            median(pair_ratios(fa_calls, ours_calls)),
            None,
            "above 1 = we add less",
        ),
    ]


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
