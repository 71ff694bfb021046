"""PyPI mcp-server-time through the bridge: listed, callable, on the 2026-07-28 era."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e import real_servers as rs

pytestmark = pytest.mark.e2e


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    server = rs.pypi_server("mcp_server_time", "--local-timezone", "UTC")
    return rs.write_config(tmp_path / "config", {"time": server})


def test_time_server_tools_are_listed_under_its_ext(config_dir: Path, tmp_path: Path) -> None:
    listing = rs.tools_json(config_dir, "time", tmp_path=tmp_path)

    assert listing["servers"]["time"]["state"] == "connected"
    assert set(rs.server_tools(listing, "time")) == {"get_current_time", "convert_time"}


def test_time_server_call_succeeds_on_the_stateless_era(config_dir: Path, tmp_path: Path) -> None:
    call = {"tool": "time__get_current_time", "args": {"timezone": "UTC"}}
    events = rs.spawn_events(config_dir, "time", [call], tmp_path=tmp_path)

    result = rs.tool_results(events)["time__get_current_time"]
    assert result["is_error"] is False
    assert json.loads(result["content"])["timezone"] == "UTC"
    assert rs.connected_protocol(events, "time") == rs.MODERN_PROTOCOL
