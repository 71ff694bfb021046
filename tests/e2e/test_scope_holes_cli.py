"""Issue 15.2 end to end, through `subagent tools --json` with real stub servers.

A tool named with glob metacharacters (`x[1]`) is blocked by `disallowed_tools` spelling
its name; and when two servers' tools collide after naming (`a.b` and `a_b` both give
`a_b__echo`), the plain name goes to the server first in mcp.json on every run, whichever
server lists the tool first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from launcher.toolset.naming import name_hash
from tests.e2e.conftest import Subagent, stub, write_config

pytestmark = pytest.mark.e2e

LATE_AT = "2.5"
"""A late tool registers this long after its server's initialization..."""
SETTLE = "4"
"""...and `tools --settle` waits past it, so the late tool is in the report."""

LITERAL = """---
name: literal
tools: ext:s
disallowed_tools: {selector}
---
Literal agent.
"""


@pytest.mark.parametrize("selector", ['"ext:s/x[1]"', '"s__x[1]"'], ids=["ext", "exposed"])
def test_disallowed_literal_name_with_glob_characters_is_muted(
    tmp_path: Path, subagent: Subagent, selector: str
) -> None:
    config = write_config(
        tmp_path / "cfg",
        {"s": stub("lazy", "--at", "0:x[1]")},
        {"literal": LITERAL.format(selector=selector)},
    )

    run = subagent.run("tools", "literal", "--config-dir", str(config), "--json")

    assert run.code == 0, run.stderr
    report = run.json()
    muted = [(t["server"], t["tool"], t["reason"]) for t in report["muted"]]
    assert muted == [("s", "x[1]", "disallowed")]
    assert {(t["server"], t["tool"]) for t in report["active"]} == {("s", "echo"), ("s", "sleep")}


def _names(report: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(t["server"], t["tool"]): t["name"] for t in report["active"] if t["server"]}


@pytest.mark.parametrize(
    "late",
    ["a.b", "a_b", None],
    ids=["first-configured-lists-last", "later-configured-lists-last", "both-at-once"],
)
def test_colliding_names_go_to_the_first_configured_server(
    tmp_path: Path, subagent: Subagent, late: str | None
) -> None:
    # Both stubs serve echo and sleep at once; `t` comes late from one of them (or neither).
    servers = {
        name: stub("lazy", "--at", f"{LATE_AT if name == late else 0}:t") for name in ("a.b", "a_b")
    }
    config = write_config(tmp_path / "cfg", servers)

    run = subagent.run("tools", "--config-dir", str(config), "--settle", SETTLE, "--json")

    assert run.code == 0, run.stderr
    names = _names(run.json())
    assert len(names) == 6, names
    for tool in ("echo", "sleep", "t"):
        assert names[("a.b", tool)] == f"a_b__{tool}"
        assert names[("a_b", tool)] == f"a_b__{tool}_{name_hash('a_b', tool)}"
    if late == "a.b":
        # The premise: the later-configured server held a `t` before the first one listed.
        added = [
            (e["source"], e["added"]) for e in subagent.events() if e["type"] == "tools_changed"
        ]
        first_t = next(src for src, new in added if any("__t" in n for n in new))
        assert first_t == "a_b", added
