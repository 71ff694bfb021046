"""A run is one value: `plan_run` settles the agent once, and the Session and the agent
loop are made from that plan, never from a second lookup or a keyword chain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.assemble import assemble_session, plan_run, run_agent
from launcher.budget import Limits
from launcher.config.discovery import load_config
from launcher.config.lockfile import AgentPin, Lock, ToolPin
from launcher.config.types import AgentSpec, Config, SandboxSettings
from launcher.errors import UsageError
from launcher.events import RunStatus
from launcher.run_plan import ModelChoice, StoreSettings
from launcher.store.history import StoredSession


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUBAGENT_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("SUBAGENT_SANDBOX", "off")


def _config(root: Path, **top: object) -> Config:
    config = root / "cfg"
    (config / "agents").mkdir(parents=True)
    (config / "mcp.json").write_text(json.dumps({"mcpServers": {}, **top}))
    return load_config(config, cwd=root)


def test_a_resolved_agent_is_used_as_given_not_looked_up_again(tmp_path: Path) -> None:
    config = _config(tmp_path, tool_search="off")
    own = AgentSpec(name="only-in-hand", prompt="p")

    plan = plan_run(config, own, workspace=tmp_path)

    assert plan.agent.name == "only-in-hand"
    assert plan.agent.prompt == "p"
    # The config's defaults are settled on the agent once, in the plan.
    assert plan.agent.tool_search == "off"
    assert plan.sandbox == SandboxSettings()
    with pytest.raises(UsageError):
        plan_run(config, "only-in-hand", workspace=tmp_path)


def test_an_unknown_ext_is_refused_for_a_resolved_agent_too(tmp_path: Path) -> None:
    config = _config(tmp_path)
    with pytest.raises(UsageError, match="nope"):
        plan_run(config, AgentSpec(name="a"), ext=["nope"], workspace=tmp_path)


def test_the_pin_comes_from_the_pins_given_unless_the_lock_is_off(tmp_path: Path) -> None:
    config = _config(tmp_path)
    hashes = {"description_sha256": "0" * 64, "schema_sha256": "1" * 64}
    pin = AgentPin(tools={"s_t": ToolPin(name="s_t", server="s", tool="t", **hashes)})
    pins = Lock({"general-purpose": pin})

    assert plan_run(config, "general-purpose", workspace=tmp_path, pins=pins).pin is pin
    unlocked = plan_run(config, "general-purpose", workspace=tmp_path, pins=pins, lock=False)
    assert unlocked.pin is None


def test_the_store_is_left_out_of_the_plan_when_switched_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path)
    store = StoreSettings(config_dir=tmp_path, depth=2)

    assert plan_run(config, "general-purpose", workspace=tmp_path, store=store).store == store
    monkeypatch.setenv("SUBAGENT_STORE", "0")
    assert plan_run(config, "general-purpose", workspace=tmp_path, store=store).store is None


def test_the_session_is_made_from_the_plan(tmp_path: Path) -> None:
    config = _config(tmp_path)
    history = StoredSession(
        id="s-123", agent="general-purpose", model=None, config_dir=None, workspace=None, turns=1
    )
    plan = plan_run(config, "general-purpose", workspace=tmp_path / ".", history=history)

    session = assemble_session(plan)

    assert session.plan is plan
    assert session.agent is plan.agent
    assert session.id == plan.session_id == "s-123"
    assert session.workspace == plan.workspace == tmp_path.resolve()
    assert session.pin is plan.pin
    assert set(session.servers) == set(plan.servers)


@pytest.mark.anyio
async def test_the_loop_runs_the_plans_model_under_its_limits(tmp_path: Path) -> None:
    config = _config(tmp_path)
    script = tmp_path / "script.yaml"
    script.write_text("steps:\n  - call: [{tool: ls, args: {}}]\n  - say: done\n")
    model = ModelChoice(f"scripted:{script}")

    whole = plan_run(config, "general-purpose", workspace=tmp_path, model=model)
    assert await run_agent(assemble_session(whole), "go") == RunStatus.COMPLETED

    one = plan_run(
        config, "general-purpose", workspace=tmp_path, model=model, limits=Limits(max_turns=1)
    )
    assert await run_agent(assemble_session(one), "go") == RunStatus.MAX_TURNS
