"""Secrets at rest: everything under SUBAGENT_HOME is private (0700 dirs, 0600 files), and a
`${VAR}` value a server prints on stderr (split across writes) and returns in a tool result
appears nowhere on disk or stdout — raw, URL-encoded or base64."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from tests.e2e.conftest import Subagent, scripted_spawn, stub, write_config

pytestmark = pytest.mark.e2e

TOKEN = "tok/9f3+a61 c2e7=b54d08&x"
"""Characters that URL-encode and base64-encode differently from the raw value."""


def _forms(value: str) -> dict[str, str]:
    raw = value.encode()
    return {
        "raw": value,
        "quote": quote(value, safe=""),
        "quote_plus": quote_plus(value),
        "base64": base64.b64encode(raw).decode(),
        "urlsafe_base64": base64.urlsafe_b64encode(raw).decode(),
        "json": json.dumps(value)[1:-1],
    }


def _spawn(tmp_path: Path, subagent: Subagent) -> tuple[str, str]:
    leaky = stub("faulty", "--echo-env", "LEAK", env={"LEAK": "${LEAK_TOKEN}"})
    config = write_config(tmp_path / "cfg", {"leaky": leaky})
    script = tmp_path / "s.json"
    steps = [
        {"call": [{"tool_from": "leaky/echo_env", "args": {}}]},
        {"call": [{"tool": "bash", "args": {"command": "echo done"}}]},
        {"say": "finished"},
    ]
    script.write_text(json.dumps({"steps": steps}))
    run = subagent.run(*scripted_spawn(config, script, "go"), env={"LEAK_TOKEN": TOKEN})
    assert run.code == 0, run.stderr
    results = [e for e in run.json_lines() if e["type"] == "tool_result"]
    assert results and results[0]["name"] == "leaky__echo_env"
    assert not results[0]["is_error"], results[0]
    return run.stdout, run.stderr


def test_every_file_and_dir_under_home_is_private(tmp_path: Path, subagent: Subagent) -> None:
    _spawn(tmp_path, subagent)
    paths = [subagent.home, *subagent.home.rglob("*")]
    assert any(p.name == "leaky.log" for p in paths)
    assert any(p.name == "events.jsonl" for p in paths)
    for path in paths:
        mode = stat.S_IMODE(path.lstat().st_mode)
        expected = 0o700 if path.is_dir() else 0o600
        assert mode == expected, f"{path} is {oct(mode)}"


def test_secret_forms_appear_nowhere_on_disk_or_stdout(tmp_path: Path, subagent: Subagent) -> None:
    stdout, stderr = _spawn(tmp_path, subagent)
    assert "LEAK: ****" in stdout  # the tool ran and its answer was masked
    log = next(subagent.home.rglob("leaky.log")).read_text()
    assert "faulty: LEAK=****" in log  # the stderr lines arrived, masked
    files = {p: p.read_bytes() for p in subagent.home.rglob("*") if p.is_file()}
    for name, form in _forms(TOKEN).items():
        assert form not in stdout, f"{name} form on stdout"
        assert form not in stderr, f"{name} form on stderr"
        for path, data in files.items():
            assert form.encode() not in data, f"{name} form in {path}"
    embedded = base64.b64encode(b"x" + TOKEN.encode() + b"yz").decode()
    core = base64.b64encode(b"xyz" + TOKEN.encode())[4:20].decode()  # fixed by the value alone
    for path, data in files.items():
        assert embedded.encode() not in data and core.encode() not in data, path
