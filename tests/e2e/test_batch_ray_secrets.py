"""`batch --engine ray` on a running cluster (loopback, token auth): a task's worker gets
what a local batch worker gets. The sandbox mode and the deny rules reach its node, its
shell sees none of the batch's secrets nor the node's Ray token (variables, any readable
/proc/*/environ), the batch's model key is masked in what it writes, and its Job and
secrets travel sealed: nothing under the cluster's directory (Ray's logs, session files)
holds the prompt or a secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.tools.sandbox import mechanism_problem
from tests.e2e.batch_support import results
from tests.e2e.conftest import Subagent, write_config
from tests.e2e.test_batch_ray import RAY_LIMIT_S
from tests.e2e.test_serve_http_guard import all_bytes_under
from tests.e2e.test_serve_ray import MODEL_KEY, cluster, joins  # noqa: F401 (the fixture)

pytestmark = pytest.mark.e2e

PROMPT = "batch-ray-prompt-marker-5f1e9c"
"""The task's prompt: in the session the worker stores, nowhere Ray keeps anything."""
DENIED = "denied-file-content-0123456789"


def test_a_batch_ray_worker_gets_the_sandbox_and_no_secret_in_reach(
    tmp_path: Path,
    subagent: Subagent,
    cluster: dict[str, str],  # noqa: F811
) -> None:
    sandbox = mechanism_problem() is None
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(DENIED)
    ray_token = Path(cluster["root"]) / "token"  # the cluster's key, on this node
    values = (MODEL_KEY, ray_token.read_text())
    pattern = " ".join(f"-e {value}" for value in values)
    calls = [
        {"tool": "bash", "args": {"command": f"cat {secret_file}; echo rc=$?"}},
        {"tool": "bash", "args": {"command": f"cat {ray_token}; echo ray-token-rc=$?"}},
        {"tool": "bash", "args": {"command": "echo mode=$SUBAGENT_SANDBOX"}},
        {
            "tool": "bash",
            "args": {
                "command": "env | grep -c -e RAY_TEST_API_KEY -e SUBAGENT_SECRETS_FD -e ^RAY_; "
                f"echo shell-done; grep -l -a -F {pattern} /proc/[0-9]*/environ 2>/dev/null "
                "| wc -l; echo procs-done"
            },
        },
    ]
    script = tmp_path / "probe.json"
    steps = [{"call": calls}, {"say": f"the model's {MODEL_KEY}"}]
    script.write_text(json.dumps({"steps": steps}))
    tasks = tmp_path / "tasks.jsonl"
    task = {"id": "t0", "prompt": PROMPT, "model": f"scripted:{script}"}
    tasks.write_text(json.dumps(task) + "\n")
    out = tmp_path / "results.jsonl"
    env = {
        **joins(cluster),
        "RAY_TEST_API_KEY": MODEL_KEY,
        "SUBAGENT_DENY_READ": str(secret_file),
        "SUBAGENT_SANDBOX": "required" if sandbox else "off",
    }
    run = subagent.run(
        "batch", str(tasks), "--config-dir", str(write_config(tmp_path / "cfg", {})),
        "--out", str(out), "--engine", "ray", "--address", cluster["address"],
        env=env, timeout=RAY_LIMIT_S,
    )  # fmt: skip
    assert run.code == 0, run.stderr
    (row,) = results(out)
    assert row["status"] == "completed", row
    assert "the model's ****" in json.dumps(row), row
    assert MODEL_KEY not in json.dumps(row)
    shell = [e["content"] for e in subagent.events() if e["type"] == "tool_result"]
    assert len(shell) == 4, shell
    for text in shell:
        assert DENIED not in text and values[1] not in text, shell
    if sandbox:
        assert any("Permission denied" in t and "\nrc=1" in t for t in shell), shell
        assert any("Permission denied" in t and "ray-token-rc=1" in t for t in shell), shell
    assert any(f"mode={env['SUBAGENT_SANDBOX']}" in t for t in shell), shell
    (probe,) = [t for t in shell if "shell-done" in t]
    assert probe.split() == ["0", "shell-done", "0", "procs-done"], probe
    stored = all_bytes_under(subagent.home)
    assert PROMPT.encode() in stored  # the session was recorded at all
    assert MODEL_KEY.encode() not in stored
    # Nothing Ray wrote (its logs, session files, spilled objects) holds the Job or a secret.
    kept = all_bytes_under(Path(cluster["root"]))
    for value in (PROMPT, MODEL_KEY):
        assert value.encode() not in kept, value
