#!/usr/bin/env bash
# Set up, then run the shipped demo: the `triage` agent, a scripted model (no network, no
# API key) and the stub GitHub MCP server.
#
#   bash scripts/demo.sh [--no-setup] [SPAWN-OPTIONS]    e.g. --json, --verbose
#
# The session is stored where `subagent log` looks (SUBAGENT_HOME, default
# ~/.local/state/subagent), so `.venv/bin/subagent log last` shows it afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--no-setup" ]; then
  shift
else
  bash scripts/setup.sh
fi
set +e
.venv/bin/subagent spawn --config-dir configs "$@" triage "Triage the open issues"
code=$?
set -e
cat >&2 <<'NOTE'

What the demo shows: the triage agent may use only the mcp-github server (its
`tools: read, grep, ext:mcp-github`). In turn 2 the scripted model also asked for
lazy__early, a tool of the `lazy` server this agent does not select. The call-time
veto refused it ("not available to this sub-agent") before any server saw it, and
the lazy server was never started: that refusal is the scope enforcement at work.

The run is stored. See it again with:  .venv/bin/subagent log last
NOTE
exit "$code"
