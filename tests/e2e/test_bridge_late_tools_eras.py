"""The seed's evidence table, for both protocol eras: a tool that registers after the session
started is active exactly when the scope admits it, and an unselected server never starts.

`modern` is `mcp_servers.lazy` as the launcher's `auto` mode meets it (2026-07-28, the
listen stream); `legacy` is the same stub behind a proxy that refuses `server/discover`,
so the launcher falls back to the handshake era (`notifications/tools/list_changed`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from tests.e2e.conftest import Subagent, legacy_stub, stub, write_config

pytestmark = pytest.mark.e2e

LATE_AT = "0.2"
SETTLE = "2"
"""The late tools register 0.2 s after their server's first listing was answered (so never
in it); the settle after the barrier leaves the re-list the rest of 2 s."""

PICKY = """---
name: picky
description: all of modern, one tool of legacy
tools: ext:modern, ext:legacy/late
---
Picky agent.
"""


def _servers(tmp_path: Path, *lazy_args: str) -> dict[str, Any]:
    args = ("--at", f"{LATE_AT}:late", *lazy_args)
    return {
        "modern": stub("lazy", *args),
        "legacy": legacy_stub("lazy", *args),
        "unselected": stub("lazy", *args, "--marker", str(tmp_path / "unselected.started")),
    }


def _connected(events: list[dict[str, Any]], server: str) -> dict[str, Any]:
    (event,) = [
        e
        for e in events
        if e["type"] == "server_state" and e["server"] == server and e["state"] == "connected"
    ]
    return event


def _arrival(events: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (event,) = [e for e in events if e["type"] == "tools_changed" and name in e["added"]]
    return event


def _assert_late(events: list[dict[str, Any]], server: str) -> None:
    """`SERVER__late` was not in the first listing: it came by list_changed afterwards."""
    connected = _connected(events, server)
    arrival = _arrival(events, f"{server}__late")
    assert arrival["ts"] > connected["ts"]
    assert connected["tools"] == 2  # echo, sleep


def test_late_tool_without_ext_becomes_active_in_both_eras(
    tmp_path: Path, subagent: Subagent
) -> None:
    servers = _servers(tmp_path)
    del servers["unselected"]
    config = write_config(tmp_path / "cfg", servers)

    run = subagent.run("tools", "--config-dir", str(config), "--settle", SETTLE, "--json")

    assert run.code == 0, run.stderr
    report = run.json()
    active = {t["name"] for t in report["active"]}
    assert {"modern__late", "legacy__late"} <= active
    assert report["muted"] == []
    events = subagent.events()
    assert _connected(events, "modern")["protocol"] == "2026-07-28"
    assert _connected(events, "legacy")["protocol"] in HANDSHAKE_PROTOCOL_VERSIONS
    _assert_late(events, "modern")
    _assert_late(events, "legacy")


def test_late_tool_under_ext_is_active_when_selected_and_muted_when_not(
    tmp_path: Path, subagent: Subagent
) -> None:
    config = write_config(
        tmp_path / "cfg", _servers(tmp_path, "--at", f"{LATE_AT}:extra"), {"picky": PICKY}
    )

    run = subagent.run("tools", "picky", "--config-dir", str(config), "--settle", SETTLE, "--json")

    assert run.code == 0, run.stderr
    report = run.json()
    active = {t["name"] for t in report["active"]}
    muted = {t["name"]: t["reason"] for t in report["muted"]}
    # Selecting its server (whole, or by this tool's name): active once it registers.
    assert active == {"modern__echo", "modern__sleep", "modern__late", "modern__extra"} | {
        "legacy__late"
    }
    # Its server selected for another tool only: muted, with the reason.
    assert muted == {
        "legacy__echo": "not selected",
        "legacy__sleep": "not selected",
        "legacy__extra": "not selected",
    }
    # Selecting other servers only: this server never starts.
    assert report["servers"]["unselected"] == {"state": "not_started", "tools": 0, "error": None}
    assert not (tmp_path / "unselected.started").exists()
    events = subagent.events()
    assert _connected(events, "modern")["protocol"] == "2026-07-28"
    assert _connected(events, "legacy")["protocol"] in HANDSHAKE_PROTOCOL_VERSIONS
    _assert_late(events, "modern")
    _assert_late(events, "legacy")
    assert _arrival(events, "legacy__extra")["ts"] > _connected(events, "legacy")["ts"]
