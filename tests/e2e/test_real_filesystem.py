"""npm server-filesystem on a temp dir: read a file and list the directory through a spawn."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e import real_servers as rs

pytestmark = pytest.mark.e2e

PACKAGE = "@modelcontextprotocol/server-filesystem"


def test_filesystem_server_reads_and_lists_through_a_spawn(tmp_path: Path) -> None:
    root = tmp_path / "shared"
    (root / "docs").mkdir(parents=True)
    (root / "notes.txt").write_text("interop file body\n")
    config_dir = rs.write_config(tmp_path / "config", {"fs": rs.npm_server(PACKAGE, str(root))})
    calls = [
        {"tool": "fs__read_text_file", "args": {"path": str(root / "notes.txt")}},
        {"tool": "fs__list_directory", "args": {"path": str(root)}},
    ]

    events = rs.spawn_events(config_dir, "fs", calls, tmp_path=tmp_path)

    results = rs.tool_results(events)
    read, listed = results["fs__read_text_file"], results["fs__list_directory"]
    assert read["is_error"] is False
    assert "interop file body" in read["content"]
    assert listed["is_error"] is False
    assert "[FILE] notes.txt" in listed["content"]
    assert "[DIR] docs" in listed["content"]
    protocol = rs.connected_protocol(events, "fs")
    assert protocol is not None and protocol < rs.MODERN_PROTOCOL  # the handshake era
