"""`subagent agents` never writes a file's control characters to the terminal: escape
sequences in a description or a tool name are shown escaped, not run."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from launcher.cli.loading import load
from launcher.cli.render import print_agents
from launcher.cli.views import agent_rows


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    agents = tmp_path / "cfg" / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "esc.md").write_text(
        '---\ndescription: "ok\\e]0;PWNED\\a\\e[2J\\e[31mred\\u202e"\n'
        'tools: "Read, \\e[2JBash"\n---\nHi.\n'
    )
    return agents.parent


def test_agents_output_holds_no_control_characters(
    config_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SUBAGENT_CONFIG_DIR", raising=False)
    config = load(config_dir)  # prints the config's warnings
    out = io.StringIO()
    print_agents(agent_rows(config), out=out)
    warned = capsys.readouterr().err
    assert "\\x1b[2JBash" in warned  # the left-out tool, named escaped
    assert "esc" in out.getvalue() and "\\x1b]0;PWNED" in out.getvalue()
    assert not any(char in out.getvalue() + warned for char in "\x1b\x07\u202e")
