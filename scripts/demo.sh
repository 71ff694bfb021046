#!/usr/bin/env bash
# Set up, then run the shipped demo: the `triage` agent, a scripted model (no network)
# and the stub GitHub MCP server. Extra arguments go to `subagent spawn` (e.g. --json).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export SUBAGENT_HOME="${SUBAGENT_HOME:-$PWD/.subagent-state}"
exec .venv/bin/subagent spawn --config-dir configs "$@" triage "Triage the open issues"
