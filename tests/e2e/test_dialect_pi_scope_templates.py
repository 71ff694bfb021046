"""pi-subagents' 19 data-driven scope cases, as our own templates, run by `subagent check`.

Each file in `pi_scope/` is one case (its `expect:` block says which tools must and must
not be active, and which servers must never start). pi's extension fixtures become stub
MCP servers registering the same kinds of tools: `alpha` (two tools), `beta` (one) and
`late` (one tool that registers after the session started). The same files run from our
own `.subagent/agents/` and from pi's `.pi/agents/`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, stub

pytestmark = pytest.mark.e2e

TEMPLATES = Path(__file__).with_name("pi_scope")
SCOPE_CASES = 19

SERVERS = {
    "alpha": stub("lazy", "--at", "0:alpha_read", "--at", "0:alpha_write"),
    "beta": stub("lazy", "--at", "0:beta_tool"),
    "late": stub("lazy", "--at", "0.3:late_tool"),  # after its first listing
}


def test_every_scope_case_has_a_template() -> None:
    assert len(list(TEMPLATES.glob("*.md"))) == SCOPE_CASES


@pytest.mark.parametrize("folder", [".subagent/agents", ".pi/agents"])
def test_pi_scope_templates_pass_from_each_agent_folder(subagent: Subagent, folder: str) -> None:
    project = subagent.cwd
    shutil.copytree(TEMPLATES, project / folder)
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": SERVERS}))
    home = project.parent / "home"
    home.mkdir()

    run = subagent.run("check", "--json", "--jobs", "4", env={"HOME": str(home)}, timeout=300)

    report = run.json()
    failures = {c["name"]: c["failures"] for c in report["checks"] if c["status"] != "passed"}
    assert failures == {}, run.stderr
    assert report["passed"] == SCOPE_CASES
    assert run.code == 0
    expected_dialect = "pi" if folder == ".pi/agents" else "subagent"
    listing = subagent.run("agents", "--json", env={"HOME": str(home)}).json()
    dialects = {row["dialect"] for row in listing if row["source"]}
    assert dialects == {expected_dialect}
