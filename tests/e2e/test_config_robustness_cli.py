"""Issue 15.6 through the real CLI: hostile config shapes and options exit 2 naming them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import cli_argv, cli_env

CLI_TIMEOUT_S = 30.0
"""Upper bound for one CLI run here; a hang (a blocked FIFO read) fails instead of stalling."""
DEEP = 5000


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_argv(*args),
        cwd=cwd,
        env=cli_env(cwd / "state", {"HOME": str(cwd)}),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
    )


def config_dir(tmp_path: Path) -> Path:
    root = tmp_path / "conf"
    (root / "agents").mkdir(parents=True)
    (root / "agents" / "ok.md").write_text("---\ndescription: fine\n---\nhi\n")
    return root


def test_inf_sleep_through_the_cli_exits_2_naming_file_and_field(tmp_path: Path) -> None:
    root = config_dir(tmp_path)
    script = tmp_path / "s.yaml"
    script.write_text("steps:\n  - sleep: .inf\n    say: hi\n")
    done = run_cli(
        "spawn",
        "--config-dir",
        str(root),
        "--agent",
        "ok",
        "--model",
        f"scripted:{script}",
        "go",
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    assert f"{script}:2: field 'sleep'" in done.stderr
    assert "Traceback" not in done.stderr


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.mkdir()


def _loop(path: Path) -> None:
    path.symlink_to(path.name)


@pytest.mark.parametrize("make", [_directory, _fifo, _loop], ids=["dir", "fifo", "loop"])
def test_mcp_json_not_a_regular_file_exits_2_naming_it(tmp_path: Path, make) -> None:
    root = config_dir(tmp_path)
    make(root / "mcp.json")
    done = run_cli("servers", "--config-dir", str(root), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert str(root / "mcp.json") in done.stderr
    assert "Traceback" not in done.stderr


def test_mcp_json_fifo_in_cwd_discovery_exits_2(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".mcp.json")
    done = run_cli("agents", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert ".mcp.json" in done.stderr


def test_agents_dir_symlink_loop_exits_2_naming_it(tmp_path: Path) -> None:
    root = tmp_path / "conf"
    root.mkdir()
    (root / "agents").symlink_to("agents")
    done = run_cli("agents", "--config-dir", str(root), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"{root / 'agents'}: is a symlink loop" in done.stderr


@pytest.mark.parametrize("make", [_fifo, _loop], ids=["fifo", "loop"])
def test_broken_agent_file_is_reported_skipped_and_exit_2_when_used(tmp_path: Path, make) -> None:
    root = config_dir(tmp_path)
    make(root / "agents" / "bad.md")
    listed = run_cli("agents", "--config-dir", str(root), "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "bad.md" in listed.stderr and '"ok"' in listed.stdout
    used = run_cli("tools", "bad", "--config-dir", str(root), cwd=tmp_path)
    assert used.returncode == 2, used.stderr
    assert "bad.md" in used.stderr


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("--workspace", "missing"), "--workspace"),
        (("--workspace", "afile"), "--workspace"),
        (("--settle", "-1"), "--settle"),
        (("--settle", "nan"), "--settle"),
        (("--settle", "inf"), "--settle"),
    ],
)
def test_bad_workspace_or_settle_exits_2_naming_the_option(
    tmp_path: Path, args: tuple[str, ...], named: str
) -> None:
    root = config_dir(tmp_path)
    (tmp_path / "afile").write_text("")
    done = run_cli("tools", "ok", "--config-dir", str(root), *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert named in done.stderr
