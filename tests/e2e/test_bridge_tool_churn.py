"""A server's tool list arrives whole, however many pages, and each re-list is one diff:
2 000 tools in pages of 300, then one tool removed and one added after the session started."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, stub, write_config

pytestmark = pytest.mark.e2e

COUNT = 2000
PAGE = 300


def test_two_thousand_tools_in_pages_arrive_whole_and_removed_tools_leave(
    tmp_path: Path, subagent: Subagent
) -> None:
    lazy = stub(
        "lazy",
        *("--count", str(COUNT), "--pages", str(PAGE)),
        *("--at", "0:early", "--remove-at", "0.2:early", "--at", "0.2:late"),
    )
    config = write_config(tmp_path / "cfg", {"big": lazy})

    run = subagent.run("tools", "--config-dir", str(config), "--settle", "2", "--json")

    assert run.code == 0, run.stderr
    report = run.json()
    names = {t["name"] for t in report["active"] if t["server"] == "big"}
    expected = {f"big__tool_{i:04d}" for i in range(COUNT)} | {"big__echo", "big__sleep"}
    assert names == expected | {"big__late"}
    assert report["muted"] == []
    assert report["servers"]["big"] == {"state": "connected", "tools": COUNT + 3, "error": None}

    first, *later = [e for e in subagent.events() if e["type"] == "tools_changed"]
    # The first listing (7 pages) is one change; later changes touch only the tools that
    # changed: no partial list ever reached the registry.
    assert set(first["added"]) == expected | {"big__early"}
    assert first["removed"] == []
    assert 1 <= len(later) <= 2
    assert sorted(n for e in later for n in e["added"]) == ["big__late"]
    assert sorted(n for e in later for n in e["removed"]) == ["big__early"]
