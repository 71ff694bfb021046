"""Secrets a variable's name does not announce stay out of the shell, the result and the store.

The OTLP exporter's headers (a collector's API key) are not passed to the model's shell at
all; a password inside a URL-valued variable is masked wherever it shows.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, scripted_spawn, write_config
from tests.e2e.otlp_receiver import OtlpReceiver, named

pytestmark = pytest.mark.e2e

SHELL_AGENT = "---\nname: shell\ntools: [bash]\nextensions: false\n---\nRun.\n"


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    with ExitStack() as stack:
        yield stack


def _script(path: Path, commands: list[str], say: str) -> Path:
    steps: list[dict] = [{"call": [{"tool": "bash", "args": {"command": c}}]} for c in commands]
    steps.append({"say": say})
    path.write_text(json.dumps({"steps": steps}))
    return path


def _stored(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


def test_otlp_headers_never_reach_the_shell_the_result_or_the_store(
    tmp_path: Path, subagent: Subagent, stack: ExitStack
) -> None:
    key = f"otlp-collector-{secrets.token_hex(8)}"
    bearer = f"otlp-bearer-{secrets.token_hex(8)}"
    env = {
        "OTEL_EXPORTER_OTLP_HEADERS": f"authorization=Bearer {bearer},x-api-key={key}",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS": f"x-api-key={key}",
    }
    receiver = stack.enter_context(OtlpReceiver())
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
    config = write_config(tmp_path / "cfg", {}, {"shell": SHELL_AGENT})
    commands = ["env", 'echo "[$OTEL_EXPORTER_OTLP_HEADERS][$OTEL_EXPORTER_OTLP_TRACES_HEADERS]"']
    script = _script(tmp_path / "s.json", commands, f"the key is {key}, the bearer {bearer}")

    run = subagent.run(
        *scripted_spawn(config, script, "--workspace", str(subagent.cwd), "shell", "go"),
        env=env,
    )

    assert run.code == 0, run.stderr
    events = run.json_lines()
    results = [e for e in events if e["type"] == "tool_result"]
    assert len(results) == 2, events
    assert "PATH=" in results[0]["content"]
    assert "_HEADERS=" not in results[0]["content"], "passed to the shell"
    assert "[][]" in results[1]["content"], results[1]["content"]
    stored = _stored(subagent.home)
    assert b"events.jsonl" in b"".join(str(p).encode() for p in subagent.home.rglob("*"))
    for value in (key, bearer):
        assert value not in run.stdout and value not in run.stderr
        assert value.encode() not in stored
    assert "the key is ****" in run.stdout
    # The exporter itself still sends its headers: the run's spans came with the key.
    assert named(receiver.snapshot(), "invoke_agent shell")
    assert receiver.api_keys and set(receiver.api_keys) == {key}


def test_a_url_password_is_masked_in_the_shells_output_and_the_store(
    tmp_path: Path, subagent: Subagent
) -> None:
    db = f"db-pass-{secrets.token_hex(8)}"
    proxy = f"proxy-pass-{secrets.token_hex(8)}"
    env = {
        "DATABASE_URL": f"postgres://app:{db}@db.invalid/app",
        "HTTPS_PROXY": f"http://me:{proxy}@proxy.invalid:3128",
        "NO_PROXY": "*",
    }
    config = write_config(tmp_path / "cfg", {}, {"shell": SHELL_AGENT})
    commands = ["echo $DATABASE_URL", "env"]
    script = _script(tmp_path / "s.json", commands, f"found {db}")

    run = subagent.run(
        *scripted_spawn(config, script, "--workspace", str(subagent.cwd), "shell", "go"),
        env=env,
    )

    assert run.code == 0, run.stderr
    results = [e for e in run.json_lines() if e["type"] == "tool_result"]
    assert len(results) == 2
    # The shell has the URL (a program there may need it); what is shown of it is masked.
    assert "postgres://app:****@db.invalid/app" in results[0]["content"], results[0]
    assert "HTTPS_PROXY=http://me:****@proxy.invalid:3128" in results[1]["content"]
    stored = _stored(subagent.home)
    for value in (db, proxy):
        assert value not in run.stdout and value not in run.stderr
        assert value.encode() not in stored
