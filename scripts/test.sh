#!/usr/bin/env bash
# Run the tests.
#
#   bash scripts/test.sh               everything (what CI runs)
#   bash scripts/test.sh --fast        the fast tier: -m "not e2e", no interop install
#   bash scripts/test.sh [--fast] ARGS extra ARGS go to pytest (e.g. -k lock, tests/e2e/test_demo.py)
#
# The first full run installs, before any test starts: .venv/ with subagent and its test
# tools (~300 MB), and the interop set the e2e tests run against (.ci/install-interop.sh):
# Node 22 and the npm packages (reference servers, the conformance suite, Claude Code) into
# .interop/ (~660 MB), two peer venvs for the benches (~450 MB), mcp-server-time,
# mcp-server-git and ray into .venv (~250 MB). About 3-5 minutes on a fresh machine with a fast network;
# later runs skip what is installed (seconds). The whole suite then takes ~15 minutes on
# a 2-core machine (16 min for the e2e tier at load 5, on two workers), more under load;
# every test has a timeout (pyproject.toml), so a hang fails naming its test.
set -euo pipefail
cd "$(dirname "$0")/.."
fast=0
if [ "${1:-}" = "--fast" ]; then
  fast=1
  shift
fi
if [ "$fast" = 1 ]; then
  echo "test.sh: setting up .venv (subagent + test tools; first time ~1 min), then the fast tier"
  bash scripts/setup.sh
  set -- -m "not e2e" "$@"
else
  if [ ! -f .interop/.npm-installed ] || [ ! -x .venv/bin/python ]; then
    echo "test.sh: first run: installing .venv (~300 MB) and the interop set (Node 22 + npm" \
      "packages ~660 MB and bench peers ~450 MB in .interop/, ray and two PyPI servers ~250 MB): ~3-5 min"
  else
    echo "test.sh: checking .venv and the interop set (already installed: seconds)"
  fi
  bash scripts/setup.sh --interop
fi
export PATH="$PWD/.venv/bin:$PATH"
if [ "$fast" = 0 ] && [ "$#" = 0 ]; then
  # Everything: two workers (pytest-xdist). Most e2e time is waiting on processes, and the
  # tests hold with another suite beside them; the slowest 25 are named at the end.
  set -- -n 2 --durations=25
fi
echo "test.sh: running pytest $*"
exec .venv/bin/python -m pytest -q "$@"
