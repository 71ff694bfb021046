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
