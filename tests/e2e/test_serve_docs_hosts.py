"""Each host's set-up snippet in docs/serve.md, read in the host's own format, starts a serve
that answers `tools/list` — with the environment the snippet gives it and little else."""

from __future__ import annotations

import itertools
import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import write_config

pytestmark = pytest.mark.e2e

DOC = Path(__file__).resolve().parents[2] / "docs" / "serve.md"
PROJECT = "/path/to/project"
STATE = "/path/to/state"
LIMIT_S = 60.0
"""Bounds each serve's start-up and first answers."""
HOST_BASE_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
"""What the SDK's stdio client passes a server besides its `env`: hosts do no better."""


def blocks() -> list[tuple[str, str, str]]:
    """(section heading, fence language, text) of every fenced block in the page."""
    found, section, lang, lines = [], "", None, []
    for line in DOC.read_text().splitlines():
        if lang is None and line.startswith("## "):
            section = line[3:].strip()
        elif line.startswith("```") and lang is None:
            lang, lines = line[3:].strip(), []
        elif line.startswith("```"):
            found.append((section, lang, "\n".join(lines)))
            lang = None
        elif lang is not None:
            lines.append(line)
    return found


def launch(section: str, lang: str, text: str) -> tuple[list[str], dict[str, str]]:
    """The command line and environment a host would start serve with, from its snippet."""
    if lang == "console":
        words = shlex.split(text)
        assert words[:3] == ["claude", "mcp", "add"], text
        env = {}
        for flag, value in itertools.pairwise(words):
            if flag == "-e":
                name, eq, given = value.partition("=")
                assert eq, f"Claude Code rejects -e {value}: it needs KEY=value"
                # Claude Code expands ${NAME} from its own environment when it starts serve.
                env[name] = "from-claude-code" if given == f"${{{name}}}" else given
        return words[words.index("--") + 1 :], env
    if lang == "toml":
        entry = tomllib.loads(text)["mcp_servers"]["subagent"]
        assert entry["default_tools_approval_mode"] == "approve"
        env = dict(entry.get("env", {}))
        env.update(dict.fromkeys(entry.get("env_vars", []), "from-codex"))
        return [entry["command"], *entry["args"]], env
    data: dict[str, Any] = json.loads(text)
    if "mcp" in data:  # opencode
        entry = data["mcp"]["subagent"]
        assert entry["type"] == "local"
        return list(entry["command"]), dict(entry.get("environment", {}))
    entry = data["mcpServers"]["subagent"]
    return [entry["command"], *entry["args"]], dict(entry.get("env", {}))


HOSTS = ("Claude Code", "Codex", "Gemini CLI", "opencode")
"""The sections whose snippets start serve over stdio; the HTTP section's own examples
(a systemd unit, a container, an HTTP entry) are checked apart."""
SNIPPETS = [b for b in blocks() if b[0] in HOSTS and b[1] in ("console", "toml", "json")]


def test_every_host_has_its_snippets() -> None:
    sections = {(s, lang) for s, lang, _ in SNIPPETS}
    assert {
        ("Claude Code", "console"),
        ("Claude Code", "json"),
        ("Codex", "toml"),
        ("Gemini CLI", "json"),
        ("opencode", "json"),
    } <= sections
    for _, _, text in SNIPPETS:
        assert "--project" in text and "SUBAGENT_HOME" in text


@pytest.mark.parametrize(
    ("section", "lang", "text"), SNIPPETS, ids=[f"{s}-{lang}" for s, lang, _ in SNIPPETS]
)
def test_the_snippet_starts_a_serve_that_answers_tools_list(
    section: str, lang: str, text: str, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    write_config(
        project / ".subagent",
        {},
        {"helper": "---\nname: helper\ndescription: Helps.\n---\nHelp.\n"},
    )
    argv, env = launch(section, lang, text)
    assert argv[0] == "subagent"
    argv = [str(Path(sys.executable).parent / "subagent"), *argv[1:]]
    argv = [a.replace(PROJECT, str(project)) for a in argv]
    env = {k: v.replace(STATE, str(tmp_path / "state")) for k, v in env.items()}
    assert env.get("SUBAGENT_HOME") == str(tmp_path / "state")
    host_env = {k: os.environ[k] for k in HOST_BASE_ENV if k in os.environ} | env
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
    hello["clientInfo"] = {"name": "host", "version": "1"}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    wire = "".join(json.dumps(m) + "\n" for m in lines)
    # Input ends after the requests: serve answers them, then ends as at a host's exit.
    done = subprocess.run(
        argv,
        input=wire,
        capture_output=True,
        text=True,
        env=host_env,
        cwd=tmp_path,
        timeout=LIMIT_S,
    )
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert 2 in answers, done.stderr
    tools = {t["name"]: t for t in answers[2]["result"]["tools"]}
    assert "spawn_subagent" in tools
    assert "helper" in tools["spawn_subagent"]["inputSchema"]["properties"]["agent"]["enum"]


CLAUDE = Path(__file__).resolve().parents[2] / ".interop" / "node_modules" / ".bin" / "claude"
"""Claude Code from npm (.ci/install-interop.sh), run where it is installed."""


@pytest.mark.skipif(
    not CLAUDE.exists(), reason="Claude Code not installed (.ci/install-interop.sh)"
)
def test_claude_code_accepts_the_add_command_and_writes_the_json_snippet(tmp_path: Path) -> None:
    """The page's `claude mcp add` runs in the real Claude Code and writes the page's entry."""
    ((_, _, command),) = [b for b in SNIPPETS if b[:2] == ("Claude Code", "console")]
    ((_, _, snippet),) = [b for b in SNIPPETS if b[:2] == ("Claude Code", "json")]
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": os.environ["PATH"],
        # Offline: no update check, no telemetry.
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    words = shlex.split(command)
    done = subprocess.run(
        [str(CLAUDE), *words[1:]],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
    )
    assert done.returncode == 0 and "Invalid" not in done.stdout + done.stderr, done
    written = json.loads((project / ".mcp.json").read_text())["mcpServers"]["subagent"]
    assert written.pop("type") == "stdio"
    assert written == json.loads(snippet)["mcpServers"]["subagent"]


@pytest.mark.skipif(
    not CLAUDE.exists(), reason="Claude Code not installed (.ci/install-interop.sh)"
)
def test_claude_code_accepts_the_http_entry_command(tmp_path: Path) -> None:
    """The HTTP section's `claude mcp add --transport http` runs in the real Claude Code and
    records the URL and the header, the token left for Claude Code to expand: a shell
    that ran the page's line would not paste the token into the project's `.mcp.json`."""
    (command,) = [
        text
        for section, lang, text in blocks()
        if section == "A shared service over HTTP" and "claude mcp add" in text
    ]
    # Quoted as a shell would read it: single quotes leave `${...}` for Claude Code.
    assert "'Authorization: Bearer ${SUBAGENT_SERVE_TOKEN}'" in command
    words = shlex.split(command.removeprefix("$ "))
    url = next(w for w in words if w.startswith("http://"))
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": os.environ["PATH"],
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "SUBAGENT_SERVE_TOKEN": "t" * 24,
    }
    done = subprocess.run(
        [str(CLAUDE), *words[1:]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
    )
    assert done.returncode == 0 and "Invalid" not in done.stdout + done.stderr, done
    written = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["subagents"]
    assert written["type"] == "http" and written["url"] == url
    assert written["headers"] == {"Authorization": "Bearer ${SUBAGENT_SERVE_TOKEN}"}
    assert "t" * 24 not in (tmp_path / ".mcp.json").read_text()
