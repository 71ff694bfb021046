"""A pulled hand-over answers only a child out of other processes' reach (procs/hidden.py):
a same-user process that attached to the child in its first moments, or made its prctl a
no-op (so it stays dumpable), would read what the hand-over brings out of its memory or
take its channel. Run as an unprivileged user (as root, as nobody: no ptrace rule stops
root, and root's processes' /proc files are root's whether dumpable or not)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.unprivileged_python import python_as_other_than_root

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ptrace, prctl")

LIMIT_S = 120
KEY = "sk-reach-123456789"

PARENT = """
import os, subprocess, sys
from launcher.procs.hidden import child_handover
os.environ["SUBAGENT_TEST_API_KEY"] = sys.argv[2]
handover = child_handover()
child = subprocess.Popen([sys.executable, "-c", sys.argv[1]], env=handover.env,
                         pass_fds=(handover.fd,), stdout=subprocess.PIPE, text=True)
handover.answer(child.pid)
out, _ = child.communicate(timeout=60)
print(out, end="", flush=True)
"""

ASK = """
def ask_and_report():
    import json, os
    from launcher.procs import hidden
    fd = hidden._ask(int(os.environ[hidden.HANDOVER_VAR].split(":")[1]))
    raw, fds = hidden._receive(fd)
    print(json.dumps({"raw": raw.decode(), "fds": len(fds)}), flush=True)
"""

STILL_DUMPABLE = (
    ASK
    + """
ask_and_report()  # as after a tracer turned set_not_dumpable()'s prctl into a no-op
"""
)

TRACED = (
    ASK
    + """
import ctypes, os, signal
from launcher.procs.hidden import set_not_dumpable
libc = ctypes.CDLL(None, use_errno=True)
ready_r, ready_w = os.pipe()
me = os.getpid()
tracer = os.fork()
if tracer == 0:  # another process of the user, attached while the child is dumpable
    ok = libc.ptrace(0x4206, me, None, None) == 0  # PTRACE_SEIZE
    os.write(ready_w, b"1" if ok else b"0")
    while True:
        signal.pause()
assert os.read(ready_r, 1) == b"1", "could not attach"
assert set_not_dumpable()  # non-dumpable for real now, but the tracer stays attached
ask_and_report()
os.kill(tracer, signal.SIGKILL)
os.waitpid(tracer, 0)
"""
)

THREAD_TRACED = (
    ASK
    + """
import ctypes, os, signal, threading
from launcher.procs.hidden import set_not_dumpable
libc = ctypes.CDLL(None, use_errno=True)
tids, hold_r, hold_w = [], *os.pipe()
def parked():
    tids.append(threading.get_native_id())
    os.read(hold_r, 1)
threading.Thread(target=parked, daemon=True).start()
while not tids:
    pass
ready_r, ready_w = os.pipe()
tracer = os.fork()
if tracer == 0:  # keeps only the second thread, and lets the main one be
    ok = libc.ptrace(0x4206, tids[0], None, None) == 0  # PTRACE_SEIZE
    os.write(ready_w, b"1" if ok else b"0")
    while True:
        signal.pause()
assert os.read(ready_r, 1) == b"1", "could not attach"
assert set_not_dumpable()
ask_and_report()
os.kill(tracer, signal.SIGKILL)
os.waitpid(tracer, 0)
"""
)

SECOND_THREAD = (
    ASK
    + """
import os, threading
from launcher.procs.hidden import set_not_dumpable
hold_r, hold_w = os.pipe()
threading.Thread(target=os.read, args=(hold_r, 1), daemon=True).start()
assert set_not_dumpable()
ask_and_report()  # as while a tracer hops from thread to thread faster than a check reads them
"""
)

HONEST = """
import json, os
from launcher.procs.hidden import restore
restore()
print(json.dumps({"raw": os.environ.get("SUBAGENT_TEST_API_KEY", ""), "fds": 0}), flush=True)
"""


def _child_got(child: str) -> dict[str, object]:
    run = subprocess.run(
        [*python_as_other_than_root(), "-c", PARENT, child, KEY],
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
        cwd="/",
        check=False,
    )
    assert run.returncode == 0, run.stderr
    got: dict[str, object] = json.loads(run.stdout)
    return got


def test_a_child_that_became_non_dumpable_gets_its_values() -> None:
    assert _child_got(HONEST) == {"raw": KEY, "fds": 0}


def test_a_child_still_dumpable_gets_nothing() -> None:
    got = _child_got(STILL_DUMPABLE)
    assert got == {"raw": "", "fds": 0}


def test_a_child_traced_since_its_first_moments_gets_nothing() -> None:
    got = _child_got(TRACED)
    assert got == {"raw": "", "fds": 0}


def test_a_child_with_one_thread_traced_gets_nothing() -> None:
    got = _child_got(THREAD_TRACED)
    assert got == {"raw": "", "fds": 0}


def test_a_child_with_a_second_thread_gets_nothing() -> None:
    """A worker asks before it starts any thread: a second one is a tracer's foothold."""
    got = _child_got(SECOND_THREAD)
    assert got == {"raw": "", "fds": 0}
