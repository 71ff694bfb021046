"""What the sandbox e2e tests share: a scripted shell agent, planted secrets, listeners
that tell whether anything connected (a connection waits in the backlog: no timing)."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.spawn_support import SpawnRun, spawn, write_config

TOKEN = "tok-ABCdef0123456789-secret"
KEY = "PRIVATE-KEY-material-xyz"


def shell_agent(sandbox: str | None = None) -> str:
    """An agent with bash only; `sandbox` is the frontmatter value, if any."""
    field = f"sandbox: {sandbox}\n" if sandbox is not None else ""
    return f"---\nname: shell\ntools: [bash]\nextensions: false\n{field}---\nRun.\n"


@dataclass
class Planted:
    """A run's directories: SUBAGENT_HOME with a token, HOME with a key, the workspace."""

    root: Path
    state: Path
    home: Path
    workspace: Path
    outside: Path

    @property
    def token_file(self) -> Path:
        return self.state / "auth" / "tracker.json"


def plant(root: Path) -> Planted:
    """Secrets where the sandbox must keep them unread; readable by the user (DAC allows)."""
    planted = Planted(root, root / "state", root / "home", root / "ws", root / "outside")
    (planted.state / "auth").mkdir(parents=True)
    planted.token_file.write_text(json.dumps({"access_token": TOKEN}))
    (planted.home / ".ssh").mkdir(parents=True)
    (planted.home / ".ssh" / "id_ed25519").write_text(KEY)
    planted.workspace.mkdir()
    planted.outside.mkdir()
    return planted


def run_commands(
    planted: Planted,
    commands: list[str],
    *,
    sandbox: str | None = None,
    args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    config_default: dict[str, object] | None = None,
) -> SpawnRun:
    """One `spawn` of the shell agent: each command is one bash call, one turn each;
    `config_default` is the `"sandbox"` entry of the config's mcp.json."""
    config = write_config(planted.root / "cfg", {}, {"shell": shell_agent(sandbox)})
    if config_default is not None:
        mcp = {"mcpServers": {}, "sandbox": config_default}
        (config / "mcp.json").write_text(json.dumps(mcp))
    steps: list[dict[str, object]] = [
        {"call": [{"tool": "bash", "args": {"command": c}}]} for c in commands
    ]
    steps.append({"say": "done"})
    script = planted.root / "script.json"
    script.write_text(json.dumps({"steps": steps}))
    return spawn(
        config,
        script,
        *args,
        "--workspace",
        str(planted.workspace),
        "shell",
        "go",
        state=planted.state,
        cwd=planted.workspace,
        env={"HOME": str(planted.home), **(env or {})},
    )


def results(run: SpawnRun) -> list[dict[str, object]]:
    """The bash results in call order."""
    return run.result_of("bash")


@contextmanager
def listeners(sock_dir: Path) -> Iterator[tuple[int, Path, socket.socket, socket.socket]]:
    """A TCP listener on 127.0.0.1 and a UNIX one at `sock_dir/s.sock`."""
    tcp = socket.create_server(("127.0.0.1", 0), backlog=16)
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path = sock_dir / "s.sock"
    unix.bind(str(path))
    unix.listen(16)
    os.chmod(path, 0o777)
    try:
        yield tcp.getsockname()[1], path, tcp, unix
    finally:
        tcp.close()
        unix.close()


def connected(listener: socket.socket) -> bool:
    """Whether a connection is waiting (or was made): one accept, never blocking."""
    listener.setblocking(False)
    try:
        conn, _ = listener.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True
