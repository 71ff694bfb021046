"""An argument that is not UTF-8 (the OS hands Python a surrogate-escaped string) exits 2
naming it, for every command, instead of a traceback from wherever the string is first
encoded (the store's query, a JSON line, a path)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from launcher.store import db

BAD = b"\xff"
"""Not UTF-8: Python's argv holds it as the lone surrogate U+DCFF."""

COMMANDS: dict[str, list[bytes]] = {
    "log-query": [b"log", b"-q", BAD],
    "log-query-json": [b"log", b"-q", b"a" + BAD, b"--json"],
    "log-id": [b"log", BAD],
    "log-id-n": [b"log", b"-n", b"3", BAD],
    "log-typer": [b"log", b"--usage", b"--query=" + BAD, b"--", BAD],
    "spawn": [b"spawn", b"--model", b"scripted:x.yaml", BAD],
    "tools": [b"tools", BAD],
    "agents": [b"agents", b"--config-dir", BAD],
    "servers": [b"servers", b"--servers-from", BAD],
    "init": [b"init", b"dir-" + BAD],
    "check": [b"check", BAD],
    "serve": [b"serve", b"--workspace", BAD],
    "batch": [b"batch", BAD + b".jsonl"],
    "login": [b"login", BAD],
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    conn = db.connect(tmp_path / "home")  # a store exists, so a query reaches SQLite
    assert conn is not None
    conn.close()
    return tmp_path / "home"


@pytest.mark.parametrize("argv", list(COMMANDS.values()), ids=list(COMMANDS))
def test_a_non_utf8_argument_exits_2_naming_it(
    home: Path, tmp_path: Path, argv: list[bytes]
) -> None:
    proc = subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"launcher.cli", *argv],
        capture_output=True,
        env={**os.environ, "SUBAGENT_HOME": str(home)},
        cwd=tmp_path,
        timeout=120,
    )

    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2, stderr
    assert "Traceback" not in stderr
    assert "not valid UTF-8" in stderr
    assert "\\xff" in stderr  # the offending bytes, shown escaped
    assert not (tmp_path / os.fsdecode(b"dir-" + BAD)).exists()  # init wrote nothing
