"""The bash tool's sandbox, unit by unit: modes and switches, a workspace that holds a denied
path, the launcher out of the shell's reach, the legacy `SUBAGENT_BASH_SANDBOX=1`, and the
standalone helper run as a non-root user."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from launcher.config.types import SandboxMode, SandboxSettings
from launcher.errors import ConfigError, RunError
from launcher.tools import sandbox
from launcher.tools.bash import run_bash
from launcher.tools.sandbox import ShellSandbox, check_start, effective_mode, mechanism_problem

pytestmark = pytest.mark.anyio

needs_mechanism = pytest.mark.skipif(
    mechanism_problem() is not None, reason=f"no sandbox here: {mechanism_problem()}"
)
NOBODY = 65534


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[ShellSandbox]:
    (tmp_path / "ws").mkdir()
    box = ShellSandbox(
        SandboxSettings(), workspace=tmp_path / "ws", state_home=tmp_path / "st", home=tmp_path
    )
    yield box
    box.close()


def test_modes_and_switches() -> None:
    on, off = SandboxSettings(), SandboxSettings(mode=SandboxMode.OFF)
    assert effective_mode(on, env={}) is SandboxMode.ON
    assert effective_mode(on, env={"SUBAGENT_SANDBOX": "off"}) is SandboxMode.OFF
    assert effective_mode(off, env={"SUBAGENT_BASH_SANDBOX": "1"}) is SandboxMode.REQUIRED
    with pytest.raises(ConfigError, match="SUBAGENT_SANDBOX"):
        effective_mode(on, env={"SUBAGENT_SANDBOX": "sometimes"})


def test_required_without_mechanism_raises_naming_the_reason() -> None:
    env = {"SUBAGENT_SANDBOX_MECHANISM": "none"}
    required = SandboxSettings(mode=SandboxMode.REQUIRED)
    with pytest.raises(RunError, match=r"sandbox: unavailable \(SUBAGENT_SANDBOX_MECHANISM=none\)"):
        check_start("a", required, env=env)
    check_start("a", SandboxSettings(mode=SandboxMode.OFF), env=env)  # nothing to say


async def test_legacy_switch_refuses_the_command_without_a_mechanism(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUBAGENT_BASH_SANDBOX", "1")
    monkeypatch.setenv("SUBAGENT_SANDBOX_MECHANISM", "none")
    box = ShellSandbox(SandboxSettings(), workspace=tmp_path, state_home=tmp_path, home=tmp_path)
    result = await run_bash(f"touch {tmp_path}/ran", tmp_path, 30.0, 10_000, sandbox=box)
    assert result.is_error and "sandbox: unavailable" in result.content
    assert not (tmp_path / "ran").exists()


@needs_mechanism
async def test_the_launcher_is_out_of_reach(shell: ShellSandbox, tmp_path: Path) -> None:
    launcher = os.getpid()
    command = f"kill -0 {launcher} || echo no-signal; head -c 1 /proc/{launcher}/mem || echo no-mem"
    result = await run_bash(command, tmp_path / "ws", 30.0, 10_000, sandbox=shell)
    assert "no-signal" in result.content and "no-mem" in result.content


@needs_mechanism
async def test_workspace_holding_a_denied_path_keeps_it_denied(tmp_path: Path) -> None:
    # `subagent spawn` run in the home directory: ~ is the workspace, ~/.ssh still denied.
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_rsa").write_text("KEY")
    (tmp_path / "src").mkdir()
    box = ShellSandbox(
        SandboxSettings(), workspace=tmp_path, state_home=tmp_path / "st", home=tmp_path
    )
    try:
        denied = await run_bash("cat .ssh/id_rsa", tmp_path, 30.0, 10_000, sandbox=box)
        planted = await run_bash(
            "echo x > .ssh/authorized_keys", tmp_path, 30.0, 10_000, sandbox=box
        )
        allowed = await run_bash(
            "echo ok > src/f && cat src/f", tmp_path, 30.0, 10_000, sandbox=box
        )
    finally:
        box.close()
    assert denied.is_error and "KEY" not in denied.content
    assert planted.is_error and not (tmp_path / ".ssh" / "authorized_keys").exists()
    assert not allowed.is_error and allowed.content.strip() == "ok"


@needs_mechanism
async def test_deny_read_adds_the_agents_own_paths(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "k").write_text("SECRET")
    settings = SandboxSettings(deny_read=(str(tmp_path / "keys"),))
    box = ShellSandbox(
        settings, workspace=tmp_path / "ws", state_home=tmp_path / "st", home=tmp_path
    )
    try:
        result = await run_bash(
            f"cat {tmp_path}/keys/k", tmp_path / "ws", 30.0, 10_000, sandbox=box
        )
    finally:
        box.close()
    assert result.is_error and "SECRET" not in result.content


@needs_mechanism
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root")
def test_helper_confines_a_non_root_user() -> None:
    """Landlock and seccomp need no privilege: the same confinement holds for `nobody`."""
    tmp_path = Path(tempfile.mkdtemp(prefix="sandbox-nobody-"))  # pytest's is 0700: unreachable
    try:
        _helper_as_nobody(tmp_path)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


def _helper_as_nobody(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    ws, secret, outside = tmp_path / "ws", tmp_path / "secret", tmp_path / "outside"
    for d in (ws, secret, outside):
        d.mkdir()
        d.chmod(0o777)
    (secret / "token").write_text("TOKEN")
    (secret / "token").chmod(0o644)  # the user may read it: only the sandbox says no
    policy = sandbox.SandboxPolicy(deny_read=(secret,), writable=(ws,))
    (tmp_path / "policy.json").write_text(json.dumps(policy.to_json()))
    script = (
        f"cat {secret}/token; echo x > {outside}/f; echo ok > {ws}/f; "
        f"{sys.executable} -c 'import socket; socket.socket()'"
    )

    def as_nobody(*argv: str) -> subprocess.CompletedProcess[str]:
        drop = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        return subprocess.run(
            [*drop, *argv], capture_output=True, text=True, timeout=60, cwd="/", env=_env()
        )

    plain = as_nobody("bash", "-c", script)
    assert "TOKEN" in plain.stdout  # the test can fail: without the sandbox nobody reads it
    assert (outside / "f").exists()
    (outside / "f").unlink()
    helper = [sys.executable, "-m", "launcher.tools.sandbox.helper", str(tmp_path / "policy.json")]
    confined = as_nobody(*helper, "--", "bash", "-c", script)
    assert "TOKEN" not in confined.stdout
    assert confined.stderr.count("Permission denied") >= 3, confined.stderr
    assert not (outside / "f").exists()
    assert (ws / "f").read_text() == "ok\n"


def _env() -> dict[str, str]:
    root = Path(__file__).resolve().parents[1]
    return {"PATH": os.environ["PATH"], "PYTHONPATH": str(root), "HOME": "/nonexistent"}


@pytest.fixture
def other() -> Iterator[subprocess.Popen[bytes]]:
    """Another process of the user, with a secret in its environment."""
    process = subprocess.Popen(["sleep", "60"], env={"SECRET_X": "abc"})
    yield process
    process.kill()
    process.wait()


@needs_mechanism
async def test_legacy_switch_adds_namespaces_on_top(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, other: subprocess.Popen[bytes]
) -> None:
    """`SUBAGENT_BASH_SANDBOX=1` keeps what it gave (no other process visible, no network)
    and adds the files' confinement."""
    monkeypatch.setenv("SUBAGENT_BASH_SANDBOX", "1")
    if sandbox.namespaces.namespaces_problem() is not None:
        pytest.skip(f"no user namespaces here: {sandbox.namespaces.namespaces_problem()}")
    (tmp_path / "ws").mkdir()
    (tmp_path / "st").mkdir()
    (tmp_path / "st" / "token").write_text("TOKEN")
    box = ShellSandbox(
        SandboxSettings(), workspace=tmp_path / "ws", state_home=tmp_path / "st", home=tmp_path
    )
    command = (
        f"test -e /proc/{other.pid}/environ && echo other-visible; "
        f"cat {tmp_path}/st/token; echo x > {tmp_path}/out; echo ok > inside; "
        "echo devices: $(tail -n +3 /proc/net/dev | cut -d: -f1)"
    )
    try:
        result = await run_bash(command, tmp_path / "ws", 60.0, 10_000, sandbox=box)
    finally:
        box.close()
    assert "other-visible" not in result.content, result.content
    assert "TOKEN" not in result.content and "Permission denied" in result.content
    assert not (tmp_path / "out").exists()
    assert (tmp_path / "ws" / "inside").read_text() == "ok\n"
    assert result.content.splitlines()[-1].split() == ["devices:", "lo"]


LAUNCHER_AS_NOBODY = """
import anyio, sys
from pathlib import Path
from launcher.config.types import SandboxMode, SandboxSettings
from launcher.tools.bash import run_bash
from launcher.tools.sandbox import ShellSandbox

async def main(base: Path, mode: str) -> None:
    box = ShellSandbox(SandboxSettings(mode=SandboxMode(mode)), workspace=base / "ws",
                       state_home=base / "st", home=base)
    command = f"cat {base}/st/token; echo x > {base}/outside; echo ok > inside"
    print((await run_bash(command, base / "ws", 60.0, 10_000, sandbox=box)).content)
    box.close()

anyio.run(main, Path(sys.argv[1]), sys.argv[2])
"""


@needs_mechanism
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root")
@pytest.mark.parametrize(("mode", "confined"), [("on", True), ("off", False)])
def test_a_non_root_launcher_confines_its_shell(mode: str, confined: bool) -> None:
    """The confined thread needs no privilege either: a launcher run as `nobody`."""
    base = Path(tempfile.mkdtemp(prefix="sandbox-nobody-"))
    try:
        for d in (base, base / "ws", base / "st"):
            d.mkdir(exist_ok=True)
            d.chmod(0o777)
        (base / "st" / "token").write_text("TOKEN")
        (base / "st" / "token").chmod(0o644)
        drop = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        argv = [*drop, sys.executable, "-c", LAUNCHER_AS_NOBODY, str(base), mode]
        run = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd="/", env=_env())
        assert run.returncode == 0, run.stderr
        assert ("TOKEN" in run.stdout) is not confined
        assert (base / "outside").exists() is not confined
        assert (base / "ws" / "inside").read_text() == "ok\n"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_the_model_is_told_its_shell_is_sandboxed(tmp_path: Path) -> None:
    from launcher.tools import builtin_entries

    def description(settings: SandboxSettings, env: dict[str, str]) -> str:
        box = ShellSandbox(
            settings, workspace=tmp_path, state_home=tmp_path, home=tmp_path, env=env
        )
        return builtin_entries(tmp_path, ["bash"], sandbox=box)[0].description

    confined = description(SandboxSettings(), {})
    if mechanism_problem() is not None:
        assert "sandboxed" not in confined
    else:
        assert "sandboxed" in confined and "no network" in confined
        assert "no network" not in description(SandboxSettings(network=True), {})
    assert "sandboxed" not in description(SandboxSettings(mode=SandboxMode.OFF), {})
    gone = {"SUBAGENT_SANDBOX_MECHANISM": "none"}
    assert "sandboxed" not in description(SandboxSettings(), gone)


async def test_no_sandboxed_command_runs_without_its_watchdog(
    shell: ShellSandbox, tmp_path: Path
) -> None:
    """A watchdog that cannot start (its interpreter cannot be run) would leave plants,
    the private $TMPDIR and the guard's record behind a SIGKILLed launcher: refuse."""
    from launcher.procs.watchdog import Watchdog

    dog = Watchdog(python=str(tmp_path / "no-python"))
    try:
        ran = tmp_path / "ws" / "ran"
        result = await run_bash(f"touch {ran}", tmp_path / "ws", 30.0, 10_000, dog, shell)
        assert result.is_error, result.content
        assert "watchdog" in result.content and "no-python" in result.content
        assert not ran.exists()
    finally:
        dog.close()


@needs_mechanism
async def test_the_post_command_check_runs_off_the_event_loop(
    shell: ShellSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long walk for git repositories (thousands of them) leaves the loop serving others."""
    started, ticked = threading.Event(), threading.Event()
    waited: list[bool] = []

    def slow_check() -> list[str]:
        started.set()
        waited.append(ticked.wait(30))  # set only by a task on the event loop
        return []

    async def tick() -> None:
        await anyio.to_thread.run_sync(started.wait, 60)
        ticked.set()  # only once the loop runs again, while the check still waits

    monkeypatch.setattr(shell, "defuse_nested", slow_check)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(tick)
        result = await run_bash("true", tmp_path / "ws", 30.0, 10_000, sandbox=shell)
    assert waited == [True] and not result.is_error


@needs_mechanism
@pytest.mark.parametrize("mode", [SandboxMode.ON, SandboxMode.REQUIRED])
async def test_a_holder_that_cannot_be_made_is_said_or_refuses(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    mode: SandboxMode,
) -> None:
    """An ordinary user whose user namespaces are all held (a leftover process of the user
    can see to that) gets no holder: `on` says once what its commands may then do,
    `required` runs nothing. (As root here: the unprivileged path is taken by saying the
    user cannot remount, and the holder's start fails as the kernel would make it.)"""
    from launcher.tools.sandbox import privileges, readonly

    def no_namespace(policy: object) -> None:
        raise OSError("the read-only namespace could not be made: unshare: No space left")

    monkeypatch.setattr(privileges, "can_remount", lambda: False)
    monkeypatch.setattr(readonly, "Holder", no_namespace)
    (tmp_path / "ws").mkdir()
    box = ShellSandbox(
        SandboxSettings(mode=mode),
        workspace=tmp_path / "ws",
        state_home=tmp_path / "st",
        home=tmp_path,
    )
    try:
        first = await run_bash("touch ran1", tmp_path / "ws", 30.0, 10_000, sandbox=box)
        second = await run_bash("touch ran2", tmp_path / "ws", 30.0, 10_000, sandbox=box)
    finally:
        box.close()
    err = capsys.readouterr().err
    if mode is SandboxMode.REQUIRED:
        for result in (first, second):
            assert result.is_error and "no read-only namespace" in result.content
            assert "sandbox is required" in result.content
        assert not (tmp_path / "ws" / "ran1").exists() and not (tmp_path / "ws" / "ran2").exists()
    else:
        assert not first.is_error and not second.is_error
        assert (tmp_path / "ws" / "ran1").exists() and (tmp_path / "ws" / "ran2").exists()
        assert err.count("subagent: sandbox: no read-only namespace (") == 1, err
        assert "outside the workspace" in err
        # A serve worker's stderr is a log file: the model is told with the first output.
        assert first.content.startswith("[subagent: sandbox: no read-only namespace ("), first
        assert "sandbox" not in second.content, second


@needs_mechanism
async def test_a_command_whose_processes_did_not_end_is_an_error(
    shell: ShellSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When what a command started cannot be ended in time (its namespace's init stopped
    from outside), its result says so and is an error, not a success."""
    monkeypatch.setattr(ShellSandbox, "end_command", lambda self: False)
    result = await run_bash("echo hi", tmp_path / "ws", 30.0, 10_000, sandbox=shell)
    assert result.is_error
    assert "did not end in time" in result.content and "hi" in result.content
