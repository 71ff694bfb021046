"""Shared fixtures for end-to-end tests: hermetic config, state dir, the real CLI, process checks.

PID 1 in the test container does not reap orphans, so a killed orphan stays a zombie:
every liveness check here treats a zombie as gone.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from launcher.secrets import is_secret_name

if TYPE_CHECKING:
    from tests.e2e.model_stub import ModelStub

RUN_LIMIT_S = 90.0
"""No CLI run in these tests comes near this; it only bounds a hung run."""
GONE_LIMIT_S = 10.0
"""How long processes may take to disappear after the launcher ends (TERM+KILL is ~4.5 s)."""
POLL_S = 0.05

LEGACY_PROXY = Path(__file__).with_name("legacy_era_proxy.py")
MODEL_ENDPOINTS = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")
"""Model settings a developer's shell may hold that would send a test's model elsewhere."""
TRACE_CONTEXT = ("TRACEPARENT", "TRACESTATE", "BAGGAGE")
"""A parent span a developer's shell may hold (OTEL_* variables are dropped as well)."""


def cli_env(home: Path, extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The one environment every CLI run in these tests gets.

    The caller's environment without `SUBAGENT_*`, credential-named variables (the
    launcher's own rule, `is_secret_name`), model endpoints and trace export settings;
    SUBAGENT_HOME at `home`; then `extra` (a value of None removes that variable).
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SUBAGENT_", "OTEL_"))
        and not is_secret_name(k)
        and k not in MODEL_ENDPOINTS + TRACE_CONTEXT
    }
    env["SUBAGENT_HOME"] = str(home)
    for name, value in (extra or {}).items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def cli_argv(*args: str) -> list[str]:
    """`subagent ARGS` as this interpreter runs it (the tree under test, not an installed copy)."""
    return [sys.executable, "-m", "launcher.cli", *args]


def run_process(
    argv: Iterable[str | Path],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float = RUN_LIMIT_S,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a command to its end, output captured as text; `stdin` fed to it, else none."""
    return subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        **({"input": stdin} if stdin is not None else {"stdin": subprocess.DEVNULL}),
    )


def scripted_spawn(config: Path, script: Path, *args: str) -> list[str]:
    """`spawn --json --config-dir CONFIG --model scripted:SCRIPT ARGS...`: the usual test run."""
    return ["spawn", "--json", "--config-dir", str(config), "--model", f"scripted:{script}", *args]


def parse_events(text: str, *, partial_tail: bool = False) -> list[dict[str, Any]]:
    """The JSON-lines event stream in `text` (`--json` stdout, an events.jsonl, a call log).

    `partial_tail`: the stream is still being written, so a last line that does not parse
    yet ends it instead of failing.
    """
    events: list[dict[str, Any]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            events.append(json.loads(line))
        except ValueError:
            if partial_tail:
                break
            raise
    return events


def stub(name: str, *args: str, **fields: Any) -> dict[str, Any]:
    """An mcp.json entry running `python -m mcp_servers.NAME ARGS` with this interpreter."""
    return {"command": sys.executable, "args": ["-m", f"mcp_servers.{name}", *args], **fields}


def legacy_stub(name: str, *args: str, **fields: Any) -> dict[str, Any]:
    """Like `stub`, behind a proxy that makes the server speak only the handshake era."""
    argv = [str(LEGACY_PROXY), sys.executable, "-m", f"mcp_servers.{name}", *args]
    return {"command": sys.executable, "args": argv, **fields}


def write_config(root: Path, servers: dict[str, Any], agents: dict[str, str] | None = None) -> Path:
    """A hermetic config dir: `mcp.json` plus `agents/NAME.md` files."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=1))
    (root / "agents").mkdir(exist_ok=True)
    for name, text in (agents or {}).items():
        (root / "agents" / f"{name}.md").write_text(text)
    return root


@dataclass
class Run:
    """A finished CLI run."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    def json_lines(self) -> list[dict[str, Any]]:
        return parse_events(self.stdout)


class Subagent:
    """Runs the real CLI (`python -m launcher.cli`) with SUBAGENT_HOME in a temp dir."""

    def __init__(self, home: Path, cwd: Path) -> None:
        self.home = home
        self.cwd = cwd

    def env(self, extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
        return cli_env(self.home, extra)

    def argv(self, args: Iterable[str]) -> list[str]:
        return cli_argv(*args)

    def run(
        self,
        *args: str,
        env: Mapping[str, str | None] | None = None,
        timeout: float = RUN_LIMIT_S,
        cwd: Path | None = None,
        stdin: str | None = None,
    ) -> Run:
        """Run to completion and capture its output (`stdin`: text fed to it, else none)."""
        proc = run_process(
            self.argv(args), cwd=cwd or self.cwd, env=self.env(env), timeout=timeout, stdin=stdin
        )
        return Run(proc.returncode, proc.stdout, proc.stderr)

    def start(
        self, *args: str, env: Mapping[str, str | None] | None = None, **popen: Any
    ) -> subprocess.Popen[str]:
        """Start in the background, in its own process group (as a shell job would be)."""
        popen.setdefault("stdout", subprocess.PIPE)
        popen.setdefault("stderr", subprocess.PIPE)
        return subprocess.Popen(
            self.argv(args),
            text=True,
            env=self.env(env),
            cwd=self.cwd,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            **popen,
        )

    def sessions(self) -> list[Path]:
        """Session directories under SUBAGENT_HOME, oldest first."""
        root = self.home / "sessions"
        return sorted(root.iterdir()) if root.exists() else []

    def events(self, session: Path | None = None) -> list[dict[str, Any]]:
        """The event stream a session wrote to `events.jsonl` (the only session by default)."""
        if session is None:
            (session,) = self.sessions()
        path = session / "events.jsonl"
        if not path.exists():
            return []
        # The last line may be half-written while the session runs.
        return parse_events(path.read_text(), partial_tail=True)


@pytest.fixture
def model() -> Iterator[ModelStub]:
    """A loopback model stub (OpenAI and Anthropic shapes, tests/e2e/model_stub.py)."""
    from tests.e2e.model_stub import ModelStub

    with ModelStub() as server:
        yield server


@pytest.fixture
def subagent(tmp_path: Path) -> Subagent:
    """The CLI with a private SUBAGENT_HOME; runs in a scratch working directory."""
    cwd = tmp_path / "work"
    cwd.mkdir()
    return Subagent(tmp_path / "home", cwd)


def signal_as_user(proc: subprocess.Popen[str], signum: int) -> None:
    """Signal a launcher started in its own group as a user would: SIGINT to the whole
    group (what Ctrl-C does to a foreground job), any other signal to the process."""
    if signum == signal.SIGINT:
        os.killpg(proc.pid, signum)
    else:
        proc.send_signal(signum)


def is_alive(pid: int) -> bool:
    """Whether `pid` is a live process; zombies count as gone (nobody here reaps orphans)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    except OSError:
        return True
    # The state follows the parenthesised command name, which may itself contain spaces.
    state = stat.rsplit(")", 1)[1].split()[0]
    return state not in ("Z", "X")


def read_pid(path: Path) -> int:
    return int(path.read_text().strip())


def processes_mentioning(text: str) -> list[int]:
    """Live processes whose command line or environment contains `text`.

    Tests put their temp dir in every server's arguments and in SUBAGENT_HOME, which
    the launcher's own helpers (the watchdog) inherit: this finds whatever they left.
    """
    needle = text.encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        for part in ("cmdline", "environ"):
            try:
                if needle in (entry / part).read_bytes():
                    if is_alive(int(entry.name)):
                        found.append(int(entry.name))
                    break
            except OSError:
                continue
    return found


def wait_until(predicate: Callable[[], bool], limit_s: float) -> bool:
    """Poll `predicate` until it holds or `limit_s` passes; returns its last value."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(POLL_S)
    return predicate()


def assert_all_gone(pids: Iterable[int], marker: Path, limit_s: float = GONE_LIMIT_S) -> None:
    """Every pid is gone, and no live process mentions `marker` (the test's temp dir)."""
    pids = list(pids)
    wait_until(lambda: not any(is_alive(p) for p in pids), limit_s)
    assert [p for p in pids if is_alive(p)] == []
    wait_until(lambda: not processes_mentioning(str(marker)), limit_s)
    assert processes_mentioning(str(marker)) == []


CONNECT_LIMIT_S = 30.0
"""Two SDK processes (launcher and stub) start on a loaded 2-core box well within this."""


def any_server_connected(subagent: Subagent) -> bool:
    """Whether the running session's event log shows a server connected."""
    if not subagent.sessions():
        return False
    return any(e["type"] == "server_state" and e["state"] == "connected" for e in subagent.events())


@contextmanager
def closed_port() -> Iterator[int]:
    """A loopback port nothing listens on, held while in use: bound but not listening, so
    a connect to it is refused and no other process can be given it meanwhile."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as hold:
        hold.bind(("127.0.0.1", 0))
        yield hold.getsockname()[1]
