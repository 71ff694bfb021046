"""A failed server's stderr tail is quoted in its error, with `${VAR}` secrets masked: the
token appears nowhere in `tools --json` output or in events.jsonl."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, write_config

pytestmark = pytest.mark.e2e

TOKEN = "tok-9f3a61c2e7b54d08"
ECHO_AND_EXIT = "import sys; sys.stderr.write('token is ' + sys.argv[1] + '\\n'); sys.exit(5)"


def test_token_in_failed_server_stderr_is_masked_everywhere(
    tmp_path: Path, subagent: Subagent
) -> None:
    leaky = {"command": sys.executable, "args": ["-c", ECHO_AND_EXIT, "${TOKEN}"]}
    config = write_config(tmp_path / "cfg", {"leaky": leaky})

    run = subagent.run("tools", "--config-dir", str(config), "--json", env={"TOKEN": TOKEN})

    assert run.code == 0, run.stderr
    server = run.json()["servers"]["leaky"]
    assert server["state"] == "failed"
    assert "token is ****" in server["error"]  # the tail is still quoted, only masked
    assert TOKEN not in run.stdout + run.stderr
    (session,) = subagent.sessions()
    assert TOKEN not in (session / "events.jsonl").read_text()
