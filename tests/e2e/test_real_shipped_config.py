"""The shipped configs/mcp.json wires the real reference servers and stays loadable."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.e2e.real_servers import REPO, pypi_server, run_cli, server_tools

pytestmark = pytest.mark.e2e

SHIPPED = REPO / "configs"
REAL_SERVERS = {"time", "git", "everything", "filesystem", "mcp-github-real"}


def test_shipped_config_loads_without_the_github_token(tmp_path: Path) -> None:
    out = run_cli(
        ["servers", "--json", "--config-dir", str(SHIPPED)],
        tmp_path=tmp_path,
        env={"GITHUB_PERSONAL_ACCESS_TOKEN": None},
    )

    servers = json.loads(out)
    assert REAL_SERVERS <= set(servers)
    assert servers["mcp-github-real"]["command"] == "npx"


def test_shipped_config_masks_the_github_token(tmp_path: Path) -> None:
    out = run_cli(
        ["servers", "--json", "--config-dir", str(SHIPPED)],
        tmp_path=tmp_path,
        env={"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_not_a_real_token"},
    )

    assert "ghp_not_a_real_token" not in out
    assert "GITHUB_PERSONAL_ACCESS_TOKEN" in json.loads(out)["mcp-github-real"]["env"]


def test_shipped_time_entry_starts_the_pypi_server(tmp_path: Path) -> None:
    pypi_server("mcp_server_time")  # skips (or fails under CI) when it is not installed
    # The entry says `python`: make it this interpreter, the one the server is installed in.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    out = run_cli(
        ["tools", "--ext", "time", "--json", "--config-dir", str(SHIPPED)],
        tmp_path=tmp_path,
        env={"PATH": path},
    )

    listing = json.loads(out)
    assert listing["servers"]["time"]["state"] == "connected"
    assert set(server_tools(listing, "time")) == {"get_current_time", "convert_time"}
