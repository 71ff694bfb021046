"""The directories bound onto themselves so a protected place cannot be renamed away."""

from __future__ import annotations

import os
from pathlib import Path

from launcher.tools.sandbox.mounts import pinned_parents


def test_every_directory_between_the_root_and_a_place_is_pinned(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git/hooks").mkdir(parents=True)
    (ws / ".git/config").write_text("")
    (ws / ".subagent").mkdir()
    (ws / ".subagent/mcp.json").write_text("{}")
    (ws / ".mcp.json").write_text("{}")
    places = [ws / ".git/config", ws / ".git/hooks", ws / ".subagent/mcp.json", ws / ".mcp.json"]
    pinned = pinned_parents([os.fsencode(p) for p in places], [ws, tmp_path / "other"])
    assert pinned == [os.fsencode(ws / ".git"), os.fsencode(ws / ".subagent")]


def test_nothing_outside_a_writable_root_nor_the_root_itself_is_pinned(tmp_path: Path) -> None:
    (tmp_path / "out/deep").mkdir(parents=True)
    (tmp_path / "ws").mkdir()
    places = [os.fsencode(tmp_path / "out/deep/config"), os.fsencode(tmp_path / "ws/.mcp.json")]
    assert pinned_parents(places, [tmp_path / "ws"]) == []
