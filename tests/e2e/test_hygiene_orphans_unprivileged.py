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

from tests.e2e.conftest import GONE_LIMIT_S, RUN_LIMIT_S, is_alive, wait_until, write_config
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
REFORK = """import os, time
if os.fork():
    os._exit(0)
os.setsid()
while True:
    time.sleep(0.02)
    if os.fork():
        os._exit(0)
"""


def _escapes(root: Path, tag: str) -> tuple[dict[str, str], dict[str, str]]:
    """(case -> bash command, case -> marker in the escapee's command line)."""
    marks = {
        case: f"{3101 + i}.{tag}"
        for i, case in enumerate(["setsid", "double-fork", "refork", "unshare", "tmux"])
    }
    commands = {
        "setsid": f"setsid -f sleep {marks['setsid']}",
        "double-fork": f"( setsid sh -c 'setsid -f sleep {marks['double-fork']}' & )",
        "refork": f"{sys.executable} -c '{REFORK}' {marks['refork']}",
        "unshare": f"unshare -U setsid -f sleep {marks['unshare']}",
        "tmux": f"tmux -S {root}/tmux-{tag} new -d 'sleep {marks['tmux']}'",
    }
    if not user_can(["unshare", "-U", "true"]):
        del commands["unshare"], marks["unshare"]  # no user namespaces for this user here
    if shutil.which("tmux") is None:
        del commands["tmux"], marks["tmux"]  # scripts/setup.sh --interop installs it
    return {k: f"{v}; {SETTLE}" for k, v in commands.items()}, marks


def _processes_with(marks: dict[str, str]) -> dict[str, list[int]]:
    """Live processes whose command line holds a case's marker, by case."""
    found: dict[str, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        for case, mark in marks.items():
            if mark in cmdline and is_alive(int(entry.name)):
                found.setdefault(case, []).append(int(entry.name))
    return found


def _kill_leftovers(marks: dict[str, str]) -> None:
    for _ in range(20):  # a re-forking leftover needs a few passes
        pids = [p for ps in _processes_with(marks).values() for p in ps]
        if not pids:
            return
        for pid in pids:
            with_suppressed_kill(pid)


def with_suppressed_kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def _tool_results(home: Path) -> int:
    count = 0
    for events in home.glob("sessions/*/events.jsonl"):
        for line in events.read_text().splitlines():
            try:
                count += json.loads(line).get("type") == "tool_result"
            except ValueError:
                break
    return count


def _run(root: Path, end: str, commands: dict[str, str], server_mark: str) -> int:
    """Run one session as the unprivileged user to `end`; returns the launcher's status."""
    prefix, _ = user_prefix()
    home, work, config_root = root / "home", root / "work", root / "cfg"
    work.mkdir()
    server = {
        "command": "sh",
        "args": [
            "-c",
            f"setsid -f sleep {server_mark}; exec {sys.executable} -m mcp_servers.github",
        ],
    }
    agent = "---\nname: escaper\ntools: [bash]\n---\nRun.\n"
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
        signum = signal.Signals[end]
        if signum == signal.SIGINT:
            os.killpg(launcher.pid, signum)  # as Ctrl-C does: the whole foreground group
        else:
            launcher.send_signal(signum)
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
    marks["server"] = server_mark = f"3301.{tag}"
    try:
        status = _run(root, end, commands, server_mark)
        expected = {"normal": 0, "SIGKILL": -signal.SIGKILL}.get(end)
        assert status == (expected if expected is not None else 128 + signal.Signals[end])
        wait_until(lambda: not _processes_with(marks), GONE_LIMIT_S)
        survivors = _processes_with(marks)
        assert survivors == {}, f"outlived the session ({end}): {survivors}"
    finally:
        _kill_leftovers(marks)
        shutil.rmtree(root, ignore_errors=True)
