#!/usr/bin/env bash
# Idempotent set-up on a fresh machine: a project venv with subagent and its test tools.
# `--interop` also installs the real reference MCP servers, the conformance suite and the
# docs builder (mkdocs, pinned).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
if [ "${1:-}" = "--interop" ] && [ -f .ci/install-interop.sh ]; then
  PATH="$PWD/.venv/bin:$PATH" bash .ci/install-interop.sh
  # The manual's builder (mkdocs build --strict in .ci/run), pinned in the `docs` extra.
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test,docs]'
fi
# The orphan tests start a tmux server from the model's bash (a daemon that escapes).
if [ "${1:-}" = "--interop" ] && ! command -v tmux >/dev/null && [ "$(id -u)" = 0 ] \
  && command -v apt-get >/dev/null; then
  (apt-get install -y -qq tmux >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq tmux >/dev/null 2>&1; }) \
    || echo "setup: tmux not installed; the orphan test's tmux case will be skipped" >&2
fi
