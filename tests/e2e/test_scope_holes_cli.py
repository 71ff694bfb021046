"""Issue 15.2 through the real CLI: a literal `x[1]` is blocked, and of two servers whose
tools collide after naming, the first in mcp.json gets the plain name every run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, stub, write_config

pytestmark = pytest.mark.e2e


def test_disallowed_literal_with_glob_characters_is_muted(
    tmp_path: Path, subagent: Subagent
) -> None:
    hostile = tmp_path / "tools.json"
    hostile.write_text(json.dumps([{"name": "x[1]"}, {"name": "x2"}]))
    agent = "---\ntools: ['ext:s']\ndisallowed_tools: ['ext:s/x[1]']\n---\nhi\n"
    config = write_config(
        tmp_path / "cfg", {"s": stub("faulty", "--tools-from", str(hostile))}, {"a": agent}
    )
    run = subagent.run("tools", "--json", "--config-dir", str(config), "a")
    assert run.code == 0, run.stderr
    report = json.loads(run.stdout)
    muted = {t["tool"]: t["reason"] for t in report["muted"]}
    assert muted["x[1]"] == "disallowed"
    assert "s__x2" in [t["name"] for t in report["active"]]


def test_first_configured_server_gets_the_plain_name_every_run(
    tmp_path: Path, subagent: Subagent
) -> None:
    # `a.b` and `a_b` both reduce to `a_b__echo`; they start at once and either may list first.
    config = write_config(tmp_path / "cfg", {"a.b": stub("lazy"), "a_b": stub("lazy")})
    for _ in range(2):
        run = subagent.run("tools", "--json", "--config-dir", str(config))
        assert run.code == 0, run.stderr
        names = {(t["server"], t["tool"]): t["name"] for t in json.loads(run.stdout)["active"]}
        assert names[("a.b", "echo")] == "a_b__echo"
        assert names[("a_b", "echo")].startswith("a_b__echo_")
