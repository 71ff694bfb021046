"""`subagent spawn triage` with the prompt forgotten is bad usage (exit 2, "missing PROMPT
for agent 'triage'"), not a run of general-purpose on the prompt "triage". `--` or
`--agent` says a lone word is the prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.spawn_support import spawn, write_config

SCRIPT = "steps:\n  - say: done\n"


def config_with_triage(tmp_path: Path) -> tuple[Path, Path]:
    config = write_config(tmp_path / "cfg", {})
    (config / "agents").mkdir(exist_ok=True)
    (config / "agents" / "triage.md").write_text(
        "---\nname: triage\ndescription: Reads only.\ntools: read\n---\nYou triage.\n"
    )
    script = tmp_path / "s.yaml"
    script.write_text(SCRIPT)
    return config, script


def test_a_lone_agent_name_is_a_missing_prompt(tmp_path: Path) -> None:
    config, script = config_with_triage(tmp_path)

    run = spawn(config, script, "triage", state=tmp_path / "state")

    assert run.code == 2, run.stderr
    assert "missing PROMPT for agent 'triage'" in run.stderr
    assert "Traceback" not in run.stderr
    assert run.events == []  # no session started
    assert not (tmp_path / "state" / "sessions").exists()


def test_a_lone_builtin_agent_name_is_a_missing_prompt(tmp_path: Path) -> None:
    config, script = config_with_triage(tmp_path)

    run = spawn(config, script, "general-purpose", state=tmp_path / "state")

    assert run.code == 2, run.stderr
    assert "missing PROMPT for agent 'general-purpose'" in run.stderr


def test_double_dash_makes_the_lone_word_the_prompt(tmp_path: Path) -> None:
    config, script = config_with_triage(tmp_path)

    run = spawn(config, script, "--", "triage", state=tmp_path / "state")

    assert run.code == 0, run.stderr
    assert run.of_type("session_start")[0]["agent"] == "general-purpose"
    assert run.end()["status"] == "completed"


def test_agent_option_makes_the_lone_word_the_prompt(tmp_path: Path) -> None:
    config, script = config_with_triage(tmp_path)

    run = spawn(config, script, "--agent", "triage", "triage", state=tmp_path / "state")

    assert run.code == 0, run.stderr
    assert run.of_type("session_start")[0]["agent"] == "triage"


def test_a_lone_word_naming_no_agent_is_the_prompt(tmp_path: Path) -> None:
    config, script = config_with_triage(tmp_path)

    run = spawn(config, script, "summarise", state=tmp_path / "state")

    assert run.code == 0, run.stderr
    assert run.of_type("session_start")[0]["agent"] == "general-purpose"


@pytest.mark.parametrize("word", ["TRIAGE", "Triage", "triage ", "triage.md"])
def test_a_lone_word_that_spells_an_agent_another_way_is_a_missing_prompt(
    tmp_path: Path, word: str
) -> None:
    """One typo from the agent's name must not run general-purpose in its place."""
    config, script = config_with_triage(tmp_path)

    run = spawn(config, script, word, state=tmp_path / "state")

    assert run.code == 2, run.stderr
    assert "missing PROMPT for agent" in run.stderr
    assert not (tmp_path / "state" / "sessions").exists()
