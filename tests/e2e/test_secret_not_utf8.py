"""A credential-named variable whose value is not UTF-8 (a byte the locale cannot decode):
the session runs, and the value is masked in every form a command can print it."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import cli_argv, cli_env, scripted_spawn, write_config

pytestmark = pytest.mark.e2e

RAW = b"abc\xffdefghijk"
"""The variable's bytes; os.environ holds them as "abc\\udcffdefghijk"."""
B64 = base64.b64encode(RAW).decode()
SCRIPT = (
    "steps:\n"
    "  - call: [{tool: bash, args: {command: \"printf 'abc\\\\377defghijk'; echo; echo "
    + B64
    + '"}}]\n  - say: done\n'
)


def test_a_value_that_is_not_utf8_is_masked_and_stops_nothing(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cfg", {})
    script = tmp_path / "bash.yaml"
    script.write_text(SCRIPT)
    env = cli_env(tmp_path / "home", {"X_TOKEN": RAW.decode("utf-8", "surrogateescape")})
    done = subprocess.run(
        cli_argv(*scripted_spawn(config, script, "go")),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")[-2000:]
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    assert b'"type": "tool_result"' in done.stdout and b"****" in done.stdout
    (log,) = (tmp_path / "home").rglob("events.jsonl")
    shown = [
        RAW,
        RAW.decode("utf-8", "replace").encode(),
        RAW.decode("utf-8", "backslashreplace").encode(),
        B64.encode(),
    ]
    for where in (done.stdout, log.read_bytes()):
        assert not [form for form in shown if form in where]
