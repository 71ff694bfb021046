"""A stub's pid file appears whole: a reader never finds it present but empty."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from mcp_servers._common import early_start


def test_the_pid_file_is_put_in_place_whole_not_truncated_and_written(tmp_path: Path) -> None:
    pidfile = tmp_path / "server.pid"
    earlier = tmp_path / "earlier"
    earlier.write_text("stale\n")
    # A second name for the file already at the path: writing in place (truncate, then
    # write) would show through it; putting a whole new file in place leaves it alone.
    os.link(earlier, pidfile)

    early_start(argparse.Namespace(marker=None, pidfile=pidfile))

    assert pidfile.read_text() == f"{os.getpid()}\n"
    assert earlier.read_text() == "stale\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["earlier", "server.pid"]


def test_a_fresh_pid_file_and_the_marker_are_written(tmp_path: Path) -> None:
    pidfile, marker = tmp_path / "server.pid", tmp_path / "started"

    early_start(argparse.Namespace(marker=marker, pidfile=pidfile))

    assert pidfile.read_text() == f"{os.getpid()}\n"
    assert marker.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["server.pid", "started"]
