"""The model's tools cannot read the launcher's secrets: not from /proc/$PPID/environ, not by
walking up the process tree, not from any process's environ, not through the file tools.

The launcher re-executes itself without its secret variables in its environment block
(they come back over a descriptor), and so do its helpers (the watchdog) and serve workers.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import pytest

from launcher.tools.sandbox import mechanism_problem
from tests.e2e.conftest import Subagent, scripted_spawn, write_config

pytestmark = pytest.mark.e2e

PATTERNS = "-e sk-test- -e ghp_test -e mygh-"
"""grep patterns: prefixes of the secret values, never a whole value (bash's own argv)."""
SHELL_AGENT = "---\nname: shell\ntools: [bash, read, grep, ls]\nextensions: false\n---\nRun.\n"


def _script(path: Path) -> Path:
    walk_up = (
        'p=$PPID; while [ "$p" -gt 1 ]; do '
        f"tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | grep -a {PATTERNS}; "
        "p=$(ps -o ppid= -p \"$p\" | tr -d ' '); done; true"
    )
    every_process = (
        f"cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -a {PATTERNS}; true"
    )
    commands = [
        "tr '\\0' '\\n' < /proc/$PPID/environ",
        "cat /proc/$PPID/environ",
        walk_up,
        every_process,
        f"env | grep -a {PATTERNS}; true",
        "ln -s /proc/$PPID/environ parent_env; ln -s /proc/self/environ self_env; echo linked",
    ]
    steps: list[dict] = [{"call": [{"tool": "bash", "args": {"command": c}}]} for c in commands]
    steps.append(
        {
            "call": [
                {"tool": "read", "args": {"path": "/proc/self/environ"}},
                {"tool": "read", "args": {"path": "parent_env"}},
                {"tool": "read", "args": {"path": "self_env"}},
                {"tool": "grep", "args": {"pattern": "sk-test", "path": "/proc/self"}},
                {"tool": "grep", "args": {"pattern": "sk-test", "path": "parent_env"}},
            ]
        }
    )
    steps.append({"say": "done"})
    path.write_text(json.dumps({"steps": steps}))
    return path


@pytest.mark.parametrize("credentials", [True, False], ids=["api-keys", "config-var-only"])
def test_no_tool_result_shows_a_launcher_secret(
    tmp_path: Path, subagent: Subagent, credentials: bool
) -> None:
    # Not credential-named, but the config references it: a secret all the same.
    values = {"MY_GH": f"mygh-{secrets.token_hex(8)}"}
    if credentials:  # the early re-exec; without them, the one after the config is read
        values["OPENAI_API_KEY"] = f"sk-test-SECRET-{secrets.token_hex(8)}"
        values["GITHUB_TOKEN"] = f"ghp_test{secrets.token_hex(8)}"
    # A server that never starts (the agent has extensions: false) still makes MY_GH a secret.
    unused = {"command": "true", "env": {"GH": "${MY_GH}"}}
    config = write_config(tmp_path / "cfg", {"unused": unused}, {"shell": SHELL_AGENT})
    script = _script(tmp_path / "s.json")

    run = subagent.run(
        *scripted_spawn(config, script, "--workspace", str(subagent.cwd), "shell", "go"),
        env=values,
    )

    assert run.code == 0, run.stderr
    results = [e for e in run.json_lines() if e["type"] == "tool_result"]
    assert len(results) == 11
    for result in results:
        for name, value in values.items():
            assert value not in result["content"], f"{name} leaked via {result['name']}"
    first = results[0]["content"]
    if mechanism_problem() is None:  # confined: no capability, not even root's, reads it
        # In the commands' PID namespace the launcher is outside: $PPID is 0, no such file
        # (every process the command can see is still read by the glob above: nothing).
        assert "Permission denied" in first or "/proc/0/environ: No such file" in first, first
    elif os.geteuid() == 0:  # unconfined root reads the (non-dumpable) launcher's: clean
        assert "SUBAGENT_HOME=" in first
    reads = [r for r in results if r["name"] == "read"]
    assert all(r["is_error"] and "outside the workspace" in r["content"] for r in reads)
