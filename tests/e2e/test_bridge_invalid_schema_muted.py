"""A tool announced with an invalid input schema is never active: `tools --json` lists it
as muted with reason `invalid input schema`, next to the server's usable tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, stub, write_config

pytestmark = pytest.mark.e2e


def test_tool_with_invalid_schema_is_muted_with_its_reason(
    tmp_path: Path, subagent: Subagent
) -> None:
    config = write_config(tmp_path / "cfg", {"broken": stub("faulty", "--invalid-schema")})

    run = subagent.run("tools", "--config-dir", str(config), "--json")

    assert run.code == 0, run.stderr
    report = run.json()
    active = [e["name"] for e in report["active"] if e["server"] == "broken"]
    assert active == ["broken__ok"]
    assert report["muted"] == [
        {
            "name": "broken__bad_schema",
            "server": "broken",
            "tool": "bad_schema",
            "reason": "invalid input schema",
        }
    ]
    assert report["servers"]["broken"]["state"] == "connected"
