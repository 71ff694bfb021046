"""`agents --json` shows each agent's sandbox; bad `--sandbox` values and fields are usage
and config errors (exit 2, naming the option or the file, line and field)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, write_config

pytestmark = pytest.mark.e2e

AGENTS = {
    "plain": "---\nname: plain\ntools: [bash]\n---\nRun.\n",
    "strict": "---\nname: strict\nsandbox: required\n---\nRun.\n",
    "online": (
        "---\nname: online\nsandbox: {network: true, deny_read: [~/keys], write_config: true}\n"
        "---\nRun.\n"
    ),
    "loose": "---\nname: loose\nsandbox: off\n---\nRun.\n",
}


def _sandboxes(run_stdout: str) -> dict[str, dict[str, object]]:
    return {row["name"]: row.get("sandbox") for row in json.loads(run_stdout)}


def test_agents_json_shows_each_agents_sandbox(tmp_path: Path, subagent: Subagent) -> None:
    config = write_config(tmp_path / "cfg", {}, AGENTS)
    run = subagent.run("agents", "--json", "--config-dir", str(config))
    assert run.code == 0, run.stderr
    rows = _sandboxes(run.stdout)
    assert rows["plain"]["mode"] == "on" and rows["plain"]["network"] is False
    assert rows["strict"]["mode"] == "required"
    assert rows["online"] == {
        "mode": "on",
        "network": True,
        "deny_read": ["~/keys"],
        "write_config": True,
        "unavailable": rows["online"]["unavailable"],
    }
    assert rows["loose"] == {
        "mode": "off",
        "network": False,
        "deny_read": [],
        "write_config": False,
        "unavailable": None,
    }

    gone = subagent.run(
        "agents", "--json", "--config-dir", str(config), env={"SUBAGENT_SANDBOX_MECHANISM": "none"}
    )
    assert _sandboxes(gone.stdout)["plain"]["unavailable"] == "SUBAGENT_SANDBOX_MECHANISM=none"


def test_config_default_shows_for_agents_that_omit_the_field(
    tmp_path: Path, subagent: Subagent
) -> None:
    config = write_config(tmp_path / "cfg", {}, AGENTS)
    (config / "mcp.json").write_text(json.dumps({"mcpServers": {}, "sandbox": "required"}))
    run = subagent.run("agents", "--json", "--config-dir", str(config))
    assert run.code == 0, run.stderr
    rows = _sandboxes(run.stdout)
    assert rows["plain"]["mode"] == "required"
    assert rows["loose"]["mode"] == "off"  # its own field wins
    assert "unknown top-level field" not in run.stderr


def test_bad_values_are_usage_and_config_errors(tmp_path: Path, subagent: Subagent) -> None:
    config = write_config(tmp_path / "cfg", {}, {"plain": AGENTS["plain"]})
    bad_option = subagent.run(
        "spawn", "--config-dir", str(config), "--sandbox", "maybe", "plain", "hi"
    )
    assert bad_option.code == 2 and "--sandbox" in bad_option.stderr
    (config / "mcp.json").write_text('{"mcpServers": {},\n "sandbox": {"netwrok": true}}')
    bad_default = subagent.run("agents", "--config-dir", str(config))
    assert bad_default.code == 2
    assert "mcp.json:2: field 'sandbox': unknown key 'netwrok'" in bad_default.stderr
    assert "Traceback" not in bad_default.stderr + bad_option.stderr
