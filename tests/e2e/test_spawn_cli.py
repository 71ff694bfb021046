"""`subagent spawn` usage: prompt from stdin, exit codes for bad usage, config and models."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.e2e.conftest import cli_argv, cli_env, scripted_spawn
from tests.e2e.spawn_support import stub, write_config


def run_cli(
    args: list[str], tmp: Path, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_argv(*args),
        input=stdin,
        capture_output=True,
        text=True,
        env=cli_env(tmp / "state", {"HOME": str(tmp)}),
        cwd=tmp,
        timeout=60,
    )


def test_prompt_dash_reads_stdin(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cfg", {})
    script = tmp_path / "s.yaml"
    script.write_text("steps:\n  - say: ok\n")
    proc = run_cli(
        scripted_spawn(config, script, "-"),
        tmp_path,
        stdin="prompt from stdin",
    )
    assert proc.returncode == 0, proc.stderr
    assert '"status": "completed"' in proc.stdout


def test_unknown_agent_and_unknown_ext_are_usage_errors(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    config = write_config(tmp_path / "cfg", {"s": stub("lazy", "--marker", str(marker))})
    unknown_agent = run_cli(["spawn", "--config-dir", str(config), "nobody", "hi"], tmp_path)
    unknown_ext = run_cli(["spawn", "--config-dir", str(config), "--ext", "nope", "hi"], tmp_path)
    assert unknown_agent.returncode == 2
    assert "nobody" in unknown_agent.stderr
    assert unknown_ext.returncode == 2
    assert "nope" in unknown_ext.stderr
    assert "Traceback" not in unknown_agent.stderr + unknown_ext.stderr
    assert not marker.exists()


def test_missing_model_and_missing_key_fail_before_any_server_starts(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    config = write_config(tmp_path / "cfg", {"s": stub("lazy", "--marker", str(marker))})
    no_model = run_cli(["spawn", "--config-dir", str(config), "hi"], tmp_path)
    no_key = run_cli(
        ["spawn", "--config-dir", str(config), "--model", "openai:gpt-4.1-mini", "hi"], tmp_path
    )
    assert no_model.returncode == 2
    assert "--model" in no_model.stderr
    assert no_key.returncode == 1
    assert "OPENAI_API_KEY" in no_key.stderr
    assert "scripted:" in no_key.stderr
    assert not marker.exists()


def test_bad_script_names_file_and_line(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cfg", {})
    script = tmp_path / "bad.yaml"
    script.write_text("steps:\n  - call: [{tool: x, args: 3}]\n")
    proc = run_cli(
        ["spawn", "--config-dir", str(config), "--model", f"scripted:{script}", "hi"], tmp_path
    )
    assert proc.returncode == 2
    assert "bad.yaml:2" in proc.stderr
    assert "Traceback" not in proc.stderr
