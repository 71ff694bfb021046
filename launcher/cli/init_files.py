"""The files `subagent init` writes, and where: an example agent, its scripted model, a
check, a workflow (cli/init.py imports this module only when `init` runs).

Everything runs offline: the one server is the shipped stub GitHub server, started with
the interpreter that runs `subagent` (so it works from a pipx or uv tool install, whose
`python` on PATH is not that one); `SUBAGENT_PYTHON` overrides it, which the CI workflow
does, because the path written here exists on this machine only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from launcher import settings

SERVER = "github"
AGENT = "triage"
CONFIG = ".subagent"
WORKFLOW = Path(".github") / "workflows" / "agents.yml"
REQUIREMENT_VAR = settings.REQUIREMENT.name
"""The repository variable the workflow installs from when init knows no public address."""
PYTHON_ENV = settings.PYTHON.name
"""Overrides the stub server's interpreter (the CI workflow sets it to the runner's)."""


def mcp_json(python: str) -> str:
    """`.subagent/mcp.json`: the stub GitHub server, on this interpreter unless overridden."""
    command = json.dumps(f"${{{PYTHON_ENV}:-{python}}}")
    return (
        '{\n  "mcpServers": {\n'
        f'    "{SERVER}": {{\n'
        f'      "command": {command},\n'
        '      "args": ["-P", "-m", "mcp_servers.github"],\n'
        '      "startup_timeout": 30\n'
        "    }\n  }\n}\n"
    )


def agent_md(script: str) -> str:
    """`.subagent/agents/triage.md`: reads issues through the stub server, never writes."""
    return f"""---
name: {AGENT}
description: Triage open GitHub issues with the {SERVER} server only; never writes.
model: scripted:{script}   # relative to this file
tools: read, grep, ext:{SERVER}
disallowed_tools: ext:{SERVER}/create_*, ext:{SERVER}/add_*
max_turns: 6
expect:
  tools_present: [read, grep, "ext:{SERVER}/list_issues", "ext:{SERVER}/get_issue"]
  tools_absent: ["ext:{SERVER}/create_*", "ext:{SERVER}/add_*", bash, write]
  servers_connected: [{SERVER}]
  prompt_contains: ["You triage GitHub issues"]
---
You triage GitHub issues. List the open issues, read the ones that look urgent,
and answer with a short prioritised list: issue number, title, and why.
You never change issues or code.
"""


SCRIPT_YAML = f"""# The `scripted:` model replays these turns: no network, no API key.
# Turn 2 also asks for {SERVER}__create_issue, which the agent's disallowed_tools exclude:
# the call-time veto refuses it before it reaches the server (the refusal is the point).
# Swap the model for a real one with --model, e.g. --model openai:gpt-4.1-mini.
steps:
  - call:
      - {{tool_from: {SERVER}/list_issues, args: {{repo: acme/widgets, state: open}}}}
  - call:
      - {{tool_from: {SERVER}/get_issue, args: {{repo: acme/widgets, number: 1}}}}
      - {{tool: {SERVER}__create_issue, args: {{repo: acme/widgets, title: "not allowed"}}}}
  - say: |
      Open issues in acme/widgets, by priority:
      1. acme/widgets#1 "Crash when widget size is zero" (bug, priority:high).
      2. acme/widgets#3 "Support dark mode" (enhancement).
"""

CHECK_YAML = f"""# A whole scripted run of the {AGENT} agent, judged from its events (offline).
agent: {AGENT}
run:
  scripted: ../scripts/triage.yaml      # relative to this file
  prompt: Triage the open issues
  calls: [{SERVER}__list_issues, {SERVER}__get_issue]
  tool_errors: [{SERVER}__create_issue]  # the veto refuses the disallowed tool
  result_contains: ["acme/widgets#1"]
"""


def install_step(install: str | None) -> str:
    """The workflow's install step: `install` when init knows one, else the repository
    variable, failing with what to set when it is empty (never a made-up address)."""
    if install is not None:
        return f"""      # Pin it: add @TAG or @COMMIT to a git URL, or install a wheel you keep.
      - run: pip install "{install}"
"""
    return f"""      # subagent installs from a clone or a wheel (see its README): set the
      # repository variable {REQUIREMENT_VAR} to a pip requirement,
      # e.g. "subagent @ git+URL@TAG".
      - name: Install subagent
        env:
          {REQUIREMENT_VAR}: ${{{{ vars.{REQUIREMENT_VAR} }}}}
        run: |
          if [ -z "${REQUIREMENT_VAR}" ]; then
            echo "::error::set the repository variable {REQUIREMENT_VAR}"
            exit 1
          fi
          pip install "${REQUIREMENT_VAR}"
"""


def workflow_yaml(install: str | None) -> str:
    """`.github/workflows/agents.yml`: `subagent check` on every dialect's agents, with a
    JUnit report; `install` is the pip requirement that installs subagent, if known."""
    return f"""# Smoke-test the project's agents (.subagent/, .claude/agents/, .pi/ and .agents/
# agents) on every push: offline, a few seconds.
name: agents
on: [push, pull_request]
# The JUnit report step writes a check run; nothing else is written.
permissions:
  contents: read
  checks: write
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
{install_step(install)}      # No --config-dir: discovery reads every dialect's project folders
      # (the runner's home holds none).
      - run: subagent check --junit report.xml
        env:
          # The stub server runs on the runner's python, not on the one init wrote down.
          {PYTHON_ENV}: ${{{{ env.pythonLocation }}}}/bin/python
      - uses: mikepenz/action-junit-report@v5
        if: always()
        with:
          report_paths: report.xml
"""


@dataclass(frozen=True)
class Planned:
    """One file init writes: its path and its text."""

    path: Path
    text: str


def plan(root: Path, *, ci: bool, python: str) -> list[Planned]:
    """Every file `init` would write under `root` (the lock comes after, from a session)."""
    config = root / CONFIG
    script = config / "scripts" / "triage.yaml"
    out = [
        Planned(config / "mcp.json", mcp_json(python)),
        # Relative to the agent file: the config runs from any directory, and in CI.
        Planned(config / "agents" / f"{AGENT}.md", agent_md("../scripts/triage.yaml")),
        Planned(script, SCRIPT_YAML),
        Planned(config / "checks" / "triage-run.yaml", CHECK_YAML),
    ]
    if ci:
        out.append(Planned(root / WORKFLOW, workflow_yaml(install_requirement())))
    return out


def install_requirement() -> str | None:
    """The pip requirement for subagent, if one is known: the package metadata's public
    repository, else the VCS URL and commit it was installed from; None otherwise."""
    import json as json_
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("subagent")
    except PackageNotFoundError:
        return None
    for entry in dist.metadata.get_all("Project-URL") or []:
        label, _, value = entry.partition(",")
        if label.strip().lower() == "repository":
            return f"subagent @ git+{value.strip()}"
    # PEP 610: a `pip install git+URL` records the URL and the commit; a local path or an
    # editable install records a file: URL that means nothing on a CI runner.
    try:
        direct = json_.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        return None
    url, vcs = direct.get("url", ""), direct.get("vcs_info") or {}
    # pip records the VCS it installed from (git, hg, svn, bzr) and installs from it again.
    if vcs.get("vcs") and url.startswith(("https://", "ssh://")) and vcs.get("commit_id"):
        return f"subagent @ {vcs['vcs']}+{url}@{vcs['commit_id']}"
    return None
