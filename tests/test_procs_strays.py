"""The launcher's own sweep (procs/strays.py): as child subreaper it ends the orphans it
adopted — a setsid'd one, a re-forking one — and never a child it started on purpose; only
the last session of the process sweeps, so `check --jobs` sessions do not end each other's."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from launcher.procs import strays

LIMIT_S = 60.0
"""Only bounds a hung child process."""

SCRIPT = textwrap.dedent(
    """
    import os, subprocess, sys, time
    from launcher.procs import strays
    from launcher.procs.descendants import read_stat
    from launcher.procs.watchdog import _become_subreaper

    _become_subreaper()
    started = subprocess.Popen(["sleep", "300"], start_new_session=True)
    strays.note_child(started.pid)
    subprocess.run(["setsid", "-f", "sleep", "301"], check=True)
    refork = (
        "import os, time\\n"
        "if os.fork(): os._exit(0)\\n"
        "os.setsid()\\n"
        "while True:\\n"
        "    time.sleep(0.02)\\n"
        "    if os.fork(): os._exit(0)\\n"
    )
    subprocess.run([sys.executable, "-c", refork], check=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(strays._orphans()) < 2:
        time.sleep(0.02)
    ended = strays.sweep()
    print(len(ended) >= 2, strays._orphans() == [], read_stat(started.pid) is not None)
    started.kill()
    """
)


def test_sweep_ends_adopted_orphans_and_keeps_started_children() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=LIMIT_S
    )
    assert done.stdout.split() == ["True", "True", "True"], done.stderr


def test_only_the_last_open_session_sweeps() -> None:
    strays.session_opened()
    strays.session_opened()
    assert strays.session_closed() is False
    assert strays.session_closed() is True
    assert strays.session_closed() is True  # never below zero
