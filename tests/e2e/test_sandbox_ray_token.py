"""A Ray cluster's token under the home (`~/.ray/auth_token`, or where RAY_AUTH_TOKEN_PATH
says) is out of reach of every local session: its shell (the sandbox) and its file tools,
as the home's other credentials are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.tools.sandbox import mechanism_problem
from tests.e2e.sandbox_support import plant
from tests.e2e.spawn_support import spawn, write_config

pytestmark = pytest.mark.e2e

RAY_TOKEN = "ray-cluster-token-0123456789abcdef"
NAMED_TOKEN = "ray-named-token-fedcba9876543210"

needs_mechanism = pytest.mark.skipif(
    mechanism_problem() is not None, reason=f"no sandbox here: {mechanism_problem()}"
)


@needs_mechanism
def test_a_local_sessions_shell_and_read_cannot_read_rays_token(tmp_path: Path) -> None:
    p = plant(tmp_path)
    (p.home / ".ray").mkdir()
    (p.home / ".ray" / "auth_token").write_text(RAY_TOKEN)
    # The workspace is the home: the file tools reach the token by path, as a session
    # started in the home directory would.
    (p.home / "keys").mkdir()
    named = p.home / "keys" / "ray_token"
    named.write_text(NAMED_TOKEN)
    agent = "---\nname: shell\ntools: [bash, read]\nextensions: false\n---\nRun.\n"
    config = write_config(tmp_path / "cfg", {}, {"shell": agent})
    calls = [
        {"tool": "bash", "args": {"command": "cat ~/.ray/auth_token; echo rc=$?"}},
        {"tool": "bash", "args": {"command": f"cat {named}; echo rc=$?"}},
        {"tool": "read", "args": {"path": ".ray/auth_token"}},
        {"tool": "read", "args": {"path": "keys/ray_token"}},
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [{"call": [c]} for c in calls] + [{"say": "done"}]}))
    run = spawn(
        config,
        script,
        "--workspace",
        str(p.home),
        "shell",
        "go",
        state=p.state,
        cwd=p.home,
        env={"HOME": str(p.home), "RAY_AUTH_TOKEN_PATH": str(named)},
    )
    assert run.code == 0, run.stderr
    shell, read = run.result_of("bash"), run.result_of("read")
    assert len(shell) == 2 and len(read) == 2, run.events
    text = json.dumps(run.events)
    assert RAY_TOKEN not in text and NAMED_TOKEN not in text, text
    for result in shell:
        assert "Permission denied" in str(result["content"]), shell
        assert "rc=1" in str(result["content"]), shell
    for result in read:
        assert result["is_error"], read
        assert "is a secret file" in str(result["content"]), read
