"""A pulled hand-over (procs/hidden.py): the child gets its values once it asks; a process
that duplicated the child's socket before that reads nothing there, and a socket it slips
in as the child's request gets nothing either."""

from __future__ import annotations

import array
import json
import os
import socket
import subprocess
import sys

import pytest

from launcher.procs.hidden import HANDOVER_VAR, PULL_PREFIX, child_handover

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SO_PEERCRED")

CHILD = (
    "import json, os; from launcher.procs.hidden import restore; restore(); "
    "print(json.dumps({'key': os.environ.get('SUBAGENT_TEST_API_KEY')}))"
)
LIMIT_S = 60


def test_the_child_pulls_its_values_and_a_spoof_gets_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SUBAGENT_TEST_API_KEY", "sk-pulled-123456789")
    handover = child_handover()
    assert handover.env[HANDOVER_VAR] == f"{PULL_PREFIX}{handover.fd}"
    assert "SUBAGENT_TEST_API_KEY" not in handover.env
    # What a same-user process holding a duplicate of the child's end can do: peek, and
    # pass a socket of its own as if it were the child asking.
    stolen = socket.socket(fileno=os.dup(handover.fd))
    stolen.send(b"x")  # a request with no socket in it: ignored, not taken for the end
    mine, theirs = socket.socketpair()
    fds = array.array("i", [theirs.fileno()]).tobytes()
    stolen.sendmsg([b"?"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
    theirs.close()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        env=handover.env,
        pass_fds=(handover.fd,),
        stdout=subprocess.PIPE,
        text=True,
    )
    handover.answer(child.pid)
    out, _ = child.communicate(timeout=LIMIT_S)
    assert json.loads(out) == {"key": "sk-pulled-123456789"}
    stolen.settimeout(LIMIT_S)
    assert stolen.recv(4096, socket.MSG_PEEK) == b""  # nothing ever came this way: EOF
    mine.settimeout(LIMIT_S)
    assert mine.recv(4096) == b""  # the parent closed it unanswered
    stolen.close()
    mine.close()


CHANNEL_CHILD = (
    "import os, sys; from launcher.procs.hidden import restore; restore(); "
    "sys.stdout.write('up ' + sys.stdin.readline()); sys.stdout.flush()"
)


def test_the_channel_comes_with_the_hand_over_as_stdin_and_stdout() -> None:
    """The child starts on /dev/null and talks over the socket pairs handed over."""
    down, child_in = socket.socketpair()
    up, child_out = socket.socketpair()
    handover = child_handover(channel=(child_in.fileno(), child_out.fileno()))
    child = subprocess.Popen(
        [sys.executable, "-c", CHANNEL_CHILD],
        env=handover.env,
        pass_fds=(handover.fd,),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    child_in.close()
    child_out.close()
    handover.answer(child.pid)
    down.sendall(b"hello\n")
    up.settimeout(LIMIT_S)
    got = b""
    while not got.endswith(b"\n"):
        chunk = up.recv(4096)
        assert chunk, got
        got += chunk
    assert got == b"up hello\n"
    assert child.wait(timeout=LIMIT_S) == 0
    assert up.recv(4096) == b""  # no copy of its stdout is left anywhere: EOF
    down.close()
    up.close()


def test_a_child_that_never_asks_leaves_no_copy_of_its_channel() -> None:
    """The parent's copies go when the child goes: the driver sees EOF, not a hang."""
    up, child_out = socket.socketpair()
    down, child_in = socket.socketpair()
    handover = child_handover(channel=(child_in.fileno(), child_out.fileno()))
    child = subprocess.Popen(
        [sys.executable, "-c", "pass"], env=handover.env, pass_fds=(handover.fd,)
    )
    child_in.close()
    child_out.close()
    handover.answer(child.pid)
    child.wait(timeout=LIMIT_S)
    up.settimeout(LIMIT_S)
    assert up.recv(4096) == b""
    down.close()
    up.close()
