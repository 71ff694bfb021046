"""`subagent lock` end to end: pins a real server's tools, and re-pinning prints the drift."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, stub, write_config
from tests.e2e.test_cli_help_imports import _heavy, _imported

pytestmark = pytest.mark.e2e

DRIFT = ("--at", "0.1:late", "--redescribe-at", "0.1:echo", "--remove-at", "0.1:sleep")
"""After the first listing: a tool added, one re-described (a rug pull), one dropped."""


def locked(subagent: Subagent, config: Path, *args: str) -> str:
    run = subagent.run("lock", "--config-dir", str(config), *args)
    assert run.code == 0, run.stderr
    return run.stdout


def test_an_unchanged_surface_relocks_with_no_drift(tmp_path: Path, subagent: Subagent) -> None:
    config = write_config(tmp_path / "cfg", {"lazy": stub("lazy")})
    first = locked(subagent, config)
    assert "general-purpose: new pin, 2 tools from lazy" in first
    assert "  + lazy__echo" in first
    lock = config / "subagent.lock.json"
    data = json.loads(lock.read_text())
    assert data["version"] == 1
    pin = data["agents"]["general-purpose"]
    assert sorted(pin["tools"]) == ["lazy__echo", "lazy__sleep"]  # built-ins are not locked
    assert pin["servers"]["lazy"]["name"] == "lazy"
    before = lock.read_text()

    again = locked(subagent, config)
    assert "general-purpose: unchanged, 2 tools" in again
    assert "+ " not in again and "- " not in again and "~ " not in again
    assert lock.read_text() == before


def test_relock_names_each_added_redescribed_and_removed_tool(
    tmp_path: Path, subagent: Subagent
) -> None:
    config = write_config(tmp_path / "cfg", {"lazy": stub("lazy")})
    locked(subagent, config)
    write_config(config, {"lazy": stub("lazy", *DRIFT)})

    out = locked(subagent, config, "--settle", "1.5")

    assert "general-purpose: 3 changes" in out
    assert "  + lazy__late" in out
    assert "  ~ lazy__echo (description changed)" in out
    assert "  - lazy__sleep" in out
    tools = json.loads((config / "subagent.lock.json").read_text())["agents"]["general-purpose"]
    assert sorted(tools["tools"]) == ["lazy__echo", "lazy__late"]


def test_locking_one_agent_keeps_the_others_pins(tmp_path: Path, subagent: Subagent) -> None:
    narrow = "---\nname: narrow\ntools: ext:lazy/echo\n---\nNarrow.\n"
    config = write_config(tmp_path / "cfg", {"lazy": stub("lazy")}, {"narrow": narrow})
    locked(subagent, config)  # no agent named, none locked or with expect: general-purpose
    out = locked(subagent, config, "narrow")
    assert out.startswith("narrow: new pin, 1 tools")
    agents = json.loads((config / "subagent.lock.json").read_text())["agents"]
    assert sorted(agents) == ["general-purpose", "narrow"]
    assert sorted(agents["narrow"]["tools"]) == ["lazy__echo"]
    # With no agent named, every agent already in the lock is re-pinned.
    both = locked(subagent, config)
    assert "general-purpose: unchanged" in both and "narrow: unchanged" in both


def test_a_failed_server_locks_nothing_and_exits_1(tmp_path: Path, subagent: Subagent) -> None:
    config = write_config(
        tmp_path / "cfg", {"lazy": stub("lazy"), "broken": {"command": str(tmp_path / "nope")}}
    )
    run = subagent.run("lock", "--config-dir", str(config))
    assert run.code == 1
    assert "broken" in run.stderr and "not locked" in run.stderr
    assert not (config / "subagent.lock.json").exists()


def test_bad_usage_and_a_malformed_lock_exit_2(tmp_path: Path, subagent: Subagent) -> None:
    config = write_config(tmp_path / "cfg", {"lazy": stub("lazy")})
    run = subagent.run("lock", "nobody", "--config-dir", str(config))
    assert run.code == 2
    assert "unknown agent 'nobody'" in run.stderr
    lock = config / "subagent.lock.json"
    lock.write_text('{"version": 1, "agents": {"general-purpose": {"tools": []}}}')
    for args in (["lock"], ["tools"]):
        bad = subagent.run(*args, "--config-dir", str(config))
        assert bad.code == 2, args
        assert f"{lock}: field 'agents.general-purpose.tools'" in bad.stderr
        assert "Traceback" not in bad.stderr


def test_lock_help_imports_nothing_heavy(subagent: Subagent) -> None:
    modules = _imported(["lock", "--help"], subagent)
    assert "typer" in modules
    assert _heavy(modules) == set()
    assert not any(m.split(".")[0] == "pydantic" for m in modules)


SECRET_WORD = "Lk9SecretToolWord3vQx"
"""A `${TOOL_WORD}` value a server names a tool after (its description says the name too)."""


def _secret_named(tmp_path: Path) -> Path:
    return write_config(tmp_path / "cfg", {"srv": stub("lazy", "--at", "0:t${TOOL_WORD}")})


def _leaks(text: str) -> list[str]:
    from launcher.secrets import secret_forms

    return sorted(form for form in secret_forms(SECRET_WORD) if form in text)


def test_tools_prints_no_form_of_a_secret_a_tool_is_named_after(
    tmp_path: Path, subagent: Subagent
) -> None:
    config = _secret_named(tmp_path)
    env = {"TOOL_WORD": SECRET_WORD}
    as_json = subagent.run("tools", "--config-dir", str(config), "--json", env=env)
    assert as_json.code == 0, as_json.stderr
    active = {e["name"]: e for e in as_json.json()["active"]}
    assert active["srv__t****"]["description"].startswith("Echo tool t****")
    assert "srv__echo" in active
    table = subagent.run("tools", "--config-dir", str(config), env=env)
    assert table.code == 0, table.stderr
    assert "srv__t****" in table.stdout and "srv__echo" in table.stdout
    assert _leaks(as_json.stdout + as_json.stderr + table.stdout + table.stderr) == []


def test_lock_leaves_out_a_tool_holding_a_secret_says_why_and_mutes_it(
    tmp_path: Path, subagent: Subagent
) -> None:
    config = _secret_named(tmp_path)
    env = {"TOOL_WORD": SECRET_WORD}
    run = subagent.run("lock", "--config-dir", str(config), env=env)
    assert run.code == 0, run.stderr
    lock = (config / "subagent.lock.json").read_text()
    assert _leaks(run.stdout + run.stderr + lock) == []
    pinned = json.loads(lock)["agents"]["general-purpose"]["tools"]
    assert sorted(pinned) == ["srv__echo", "srv__sleep"]  # the others are still pinned
    (said,) = [line for line in run.stderr.splitlines() if "left out of the lock" in line]
    assert "server 'srv'" in said and "1 tool" in said and "secret" in said
    # Under the lock the tool is muted like any tool not in it; the rest stay active.
    under = subagent.run("tools", "--config-dir", str(config), "--json", env=env)
    assert under.code == 0, under.stderr
    report = under.json()
    assert {"name": "srv__t****", "server": "srv", "tool": "t****", "reason": "not in lock"} in (
        report["muted"]
    )
    assert {"srv__echo", "srv__sleep"} <= {e["name"] for e in report["active"]}
    assert _leaks(under.stdout + under.stderr) == []
