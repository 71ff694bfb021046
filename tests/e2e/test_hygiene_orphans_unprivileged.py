"""Without a cgroup, nothing a session starts outlives it, however it escapes: run as an
unprivileged user (no writable cgroup; the subreaper launcher and its watchdog are the only
sweep), after a normal end, SIGINT, SIGTERM and SIGKILL of the launcher.

The escapes (issue 23 item 2), from the model's `bash`: `setsid -f`; a double fork whose
grandchild calls setsid again; a process that re-forks every 20 ms; `unshare -U ... setsid
-f`; `tmux new -d`; and from an MCP server's own command line, `setsid -f` before it execs
the server. Each survivor is reported by the escape that made it.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import (
    GONE_LIMIT_S,
    RUN_LIMIT_S,
    is_alive,
    signal_as_user,
    wait_until,
    write_config,
)
from tests.e2e.unprivileged import NOBODY, shared_dir, user_can, user_prefix

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc and setsid"),
]

ENDS = ["normal", "SIGINT", "SIGTERM", "SIGKILL"]
READY_LIMIT_S = 120.0
"""Launcher and one SDK stub server start, then five bash calls run, on a loaded 2-core box."""
SETTLE = "sleep 0.5"
"""After each escape: its middle processes exit, so the escapee is adopted (and scanned)."""
REFORK = """import os, sys, time
os.setsid()
while True:
    with open(sys.argv[2], "w") as beat:
        beat.write(str(os.getpgid(0)))
    time.sleep(0.02)
    if os.fork():
        os._exit(0)
"""
SWEEP_LIMIT_S = 60.0
"""After the launcher ended: its watchdog (after a SIGKILL, alone) finds and ends every escapee;
on a 2-core box at load 50 its sweep and stop ladder were seen to pass 10 s."""
BEAT_LIMIT_S = 5.0
"""A live re-forker rewrites its beat file every 20 ms; this long without one: gone."""


def _escapes(root: Path, tag: str) -> tuple[dict[str, str], dict[str, str]]:
    """(case -> bash command, case -> marker in the escapee's command line)."""
    marks = {
        case: f"{3101 + i}.{tag}"
        for i, case in enumerate(["setsid", "double-fork", "refork", "unshare", "tmux"])
    }
    commands = {
        "setsid": f"setsid -f sleep {marks['setsid']}",
        "double-fork": f"( setsid sh -c 'setsid -f sleep {marks['double-fork']}' & )",
        "refork": f"{sys.executable} -c '{REFORK}' {marks['refork']} {root}/beat-{tag}",
        "unshare": f"unshare -U setsid -f sleep {marks['unshare']}",
        "tmux": f"tmux -S {root}/tmux-{tag} new -d 'sleep {marks['tmux']}'",
    }
    if not user_can(["unshare", "-U", "true"]):
        del commands["unshare"], marks["unshare"]  # no user namespaces for this user here
    if shutil.which("tmux") is None:
        del commands["tmux"], marks["tmux"]  # scripts/setup.sh --interop installs it
    marks["refork"] = f"{root}/beat-{tag}"  # found by its beat, not its command line
    return {k: f"{v}; {SETTLE}" for k, v in commands.items()}, marks


def _processes_with(marks: dict[str, str]) -> dict[str, list[int]]:
    """Live processes whose command line holds a case's marker, by case.

    The re-forker's pid changes every 20 ms, faster than a walk of /proc: it is alive while
    its beat file keeps changing (its process group is listed then).
    """
    found: dict[str, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        for case, mark in marks.items():
            if case != "refork" and mark in cmdline and is_alive(int(entry.name)):
                found.setdefault(case, []).append(int(entry.name))
    if "refork" in marks and (group := _beating(Path(marks["refork"]))):
        found["refork"] = [group]
    return found


def _beating(beat: Path) -> int | None:
    """The re-forker's process group while its beat file changes, else None."""

    def read() -> tuple[int, str]:
        try:
            return beat.stat().st_mtime_ns, beat.read_text()
        except OSError:
            return 0, ""

    first = read()
    if not wait_until(lambda: read() != first, BEAT_LIMIT_S):
        return None
    text = read()[1]
    return int(text) if text.isdigit() else None


def _kill_leftovers(marks: dict[str, str]) -> None:
    for _ in range(20):
        found = _processes_with(marks)
        if not found:
            return
        for case, pids in found.items():
            for pid in pids:
                try:  # the re-forker's whole group at once: one pid would fork on
                    os.killpg(pid, signal.SIGKILL) if case == "refork" else os.kill(pid, 9)
                except OSError:
                    pass


def _missing(marks: dict[str, str]) -> set[str]:
    """Escapes that made no process. The re-forker counts once its beat file exists: on a
    loaded box its beat was seen to pause for seconds (cause not found: a known flake)."""
    found = set(_processes_with(marks))
    return {c for c in marks if c not in found and not (c == "refork" and Path(marks[c]).exists())}


def _tool_results(home: Path) -> int:
    count = 0
    for events in home.glob("sessions/*/events.jsonl"):
        for line in events.read_text().splitlines():
            try:
                count += json.loads(line).get("type") == "tool_result"
            except ValueError:
                break
    return count


def _run(root: Path, end: str, commands: dict[str, str], marks: dict[str, str]) -> int:
    """Run one session as the unprivileged user to `end`; returns the launcher's status."""
    prefix, _ = user_prefix()
    home, work, config_root = root / "home", root / "work", root / "cfg"
    work.mkdir()
    server = {
        "command": "sh",
        "args": [
            "-c",
            f"setsid -f sleep {marks['server']}; exec {sys.executable} -m mcp_servers.github",
        ],
    }
    # Unconfined: what is tested is the sweep of escapes, not a sandbox that prevents them.
    agent = "---\nname: escaper\ntools: [bash]\nsandbox: off\n---\nRun.\n"
    config = write_config(config_root, {"github": server}, {"escaper": agent})
    steps: list[dict[str, Any]] = [
        {"call": [{"tool": "bash", "args": {"command": c}}]} for c in commands.values()
    ]
    steps.append({"say": "done"} if end == "normal" else {"sleep": 600, "say": "late"})
    script = root / "script.json"
    script.write_text(json.dumps({"steps": steps}))
    if os.geteuid() == 0:
        for path in (work, root):
            os.chown(path, NOBODY, NOBODY)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root),
        "SUBAGENT_HOME": str(home),
        "PYTHONDONTWRITEBYTECODE": "1",
        "TMUX_TMPDIR": str(root),
        "SHELL": "/bin/sh",  # tmux runs panes in it; the user's own may be nologin
    }
    argv = [*prefix, sys.executable, "-m", "launcher.cli", "spawn", "--json"]
    argv += ["--config-dir", str(config), "--model", f"scripted:{script}", "escaper", "go"]
    launcher = subprocess.Popen(
        argv,
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        if end == "normal":
            _, err = launcher.communicate(timeout=RUN_LIMIT_S)
            assert launcher.returncode == 0, err
            return launcher.returncode
        ready = wait_until(lambda: _tool_results(home) >= len(commands), READY_LIMIT_S)
        assert ready, f"the escapes never ran: {launcher.poll()} {_tool_results(home)}"
        # Each escape really made its process (a shell that could not would test nothing).
        wait_until(lambda: not _missing(marks), GONE_LIMIT_S)
        missing = _missing(marks)
        results = [
            json.loads(line)["content"][:300]
            for events in home.glob("sessions/*/events.jsonl")
            for line in events.read_text().splitlines()
            if '"tool_result"' in line
        ]
        assert not missing, f"these escapes made no process: {sorted(missing)}; bash: {results}"
        signum = signal.Signals[end]
        signal_as_user(launcher, signum)
        launcher.communicate(timeout=RUN_LIMIT_S)
        return launcher.returncode
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()


@pytest.mark.parametrize("end", ENDS)
def test_no_escape_outlives_an_unprivileged_session(end: str) -> None:
    _, why_not = user_prefix()
    if why_not is not None:
        pytest.skip(why_not)
    root = shared_dir()
    tag = f"{secrets.randbelow(10**6):06d}"
    commands, marks = _escapes(root, tag)
    marks["server"] = f"3301.{tag}"
    try:
        status = _run(root, end, commands, marks)
        expected = {"normal": 0, "SIGKILL": -signal.SIGKILL}.get(end)
        assert status == (expected if expected is not None else 128 + signal.Signals[end])
        wait_until(lambda: not _processes_with(marks), SWEEP_LIMIT_S)
        survivors = _processes_with(marks)
        assert survivors == {}, f"outlived the session ({end}): {survivors}"
    finally:
        _kill_leftovers(marks)
        shutil.rmtree(root, ignore_errors=True)
