"""What serve passes a worker on a Ray node in the clear (`handed_env`, a task argument):
the variables a local worker inherits and reads, never a secret-named or hidden one, and
never the hand-over's descriptor; and the block a worker gets on the node (`worker_env`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from launcher.engines.ray_node import handed_env, worker_env
from launcher.procs.hidden import HANDOVER_VAR, handed_secrets
from launcher.secret_files import DENY_READ_VAR
from launcher.secrets import note_hidden


def test_handed_env_holds_what_a_worker_reads_and_no_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plain = {
        DENY_READ_VAR: "/srv/tokens",
        "SUBAGENT_SANDBOX": "required",
        "SUBAGENT_HOME": "/var/lib/subagent",
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
        "TRACEPARENT": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "PATH": "/usr/bin",
    }
    secret = {
        "SUBAGENT_SERVE_TOKEN": "serve-token-0123456789",
        "SUBAGENT_CALLER_TOKEN_0": "alice-token-0123456789",
        "ANTHROPIC_API_KEY": "sk-ant-0123456789",
        "OTEL_EXPORTER_OTLP_AUTH": "Bearer otel-0123456789",
        "SUBAGENT_REFERENCED": "referenced-by-config-0123",
    }
    for name, value in {**plain, **secret, HANDOVER_VAR: "pull:7", "UNRELATED": "x"}.items():
        monkeypatch.setenv(name, value)
    note_hidden({"SUBAGENT_REFERENCED": secret["SUBAGENT_REFERENCED"]})
    handed = handed_env()
    assert {k: handed.get(k) for k in plain} == plain
    assert not set(handed) & {*secret, HANDOVER_VAR, "UNRELATED"}
    assert not set(handed.values()) & set(secret.values())
    # What goes sealed instead: every one of them.
    assert {k: handed_secrets().get(k) for k in secret} == secret


def test_the_worker_block_on_a_node_drops_its_secrets_and_denies_its_ray_token(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    token = tmp_path / "ray-token"
    token.write_text("0123456789abcdef")
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.ray/auth_token there
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(token))
    monkeypatch.setenv("RAY_AUTH_TOKEN", "node-ray-token-0123456789")
    monkeypatch.setenv("NODE_PLAIN", "kept")
    monkeypatch.delenv(DENY_READ_VAR, raising=False)
    served = {DENY_READ_VAR: "/srv/tokens", "SUBAGENT_SANDBOX": "required"}
    block = worker_env(served)
    assert block["NODE_PLAIN"] == "kept" and block["SUBAGENT_SANDBOX"] == "required"
    assert "RAY_AUTH_TOKEN" not in block and "RAY_AUTH_TOKEN_PATH" not in block
    assert block[DENY_READ_VAR].split(os.pathsep) == ["/srv/tokens", str(token.resolve())]


def test_the_worker_block_on_a_node_has_none_of_rays_own_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ray's variables (the cluster's address, its processes' ids) would tell a sub-agent's
    shell where the cluster is; a local worker has none of them."""
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:6379")
    monkeypatch.setenv("RAY_RAYLET_PID", "4242")
    monkeypatch.setenv("NODE_PLAIN", "kept")
    block = worker_env({"SUBAGENT_SANDBOX": "required"})
    assert block["NODE_PLAIN"] == "kept"
    assert not [name for name in block if name.startswith("RAY_")], block
