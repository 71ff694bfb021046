"""A server's environment is what it declares plus a minimal base, and its stderr goes to
SUBAGENT_HOME/sessions/ID/servers/NAME.log, never to the user's terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, write_config

pytestmark = pytest.mark.e2e

STDERR_LINE = "env-probe: a line on stderr"


def test_server_gets_declared_env_and_its_stderr_goes_to_the_session_log(
    tmp_path: Path, subagent: Subagent
) -> None:
    env_dump = tmp_path / "server.env"
    probe = {
        "command": "sh",
        "args": ["-c", f'env > "{env_dump}"; echo "{STDERR_LINE}" >&2; exit 7'],
        "env": {"DECLARED": "from-config", "FROM_PARENT": "${LAUNCHER_ONLY:-unset}x"},
    }
    config = write_config(tmp_path / "cfg", {"probe": probe})

    run = subagent.run(
        "tools",
        "--json",
        "--config-dir",
        str(config),
        env={"LAUNCHER_ONLY": "parent-value", "LEAKY_SECRET": "do-not-pass"},
    )

    assert run.code == 0, run.stderr
    env = dict(line.split("=", 1) for line in env_dump.read_text().splitlines() if "=" in line)
    assert env["DECLARED"] == "from-config"
    assert env["FROM_PARENT"] == "parent-valuex"  # ${VAR} expands from the launcher's env
    assert "PATH" in env and "HOME" in env
    assert "LEAKY_SECRET" not in env and "LAUNCHER_ONLY" not in env
    assert not any(name.startswith("SUBAGENT_") for name in env)

    (session,) = subagent.sessions()
    log = session / "servers" / "probe.log"
    assert STDERR_LINE in log.read_text()
    assert STDERR_LINE not in run.stderr
    error = run.json()["servers"]["probe"]["error"]
    assert "exit status 7" in error and STDERR_LINE in error and str(log) in error
