"""The model's shell, run by a launcher that is not root, changes nothing about a file of
the user's outside the writable roots: not its mode, times or extended attributes
(Landlock judges none of those; a read-only mount refuses them all). In the workspace
the same calls work, and git still commits there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from launcher.tools.sandbox import mechanism_problem
from tests.e2e.conftest import parse_events
from tests.e2e.spawn_support import write_config
from tests.e2e.test_sandbox_root import SIGNALS
from tests.e2e.unprivileged import NOBODY, shared_dir, user_can, user_prefix

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(mechanism_problem() is not None, reason=f"{mechanism_problem()}"),
]

RUN_LIMIT_S = 120.0
SHELL_AGENT = "---\nname: shell\ntools: [bash]\nextensions: false\n---\nRun.\n"


def test_an_unprivileged_shell_changes_no_attribute_outside(tmp_path: Path) -> None:
    prefix, why_not = user_prefix()
    if why_not is not None:
        pytest.skip(why_not)
    if not user_can(["unshare", "--user", "--map-current-user", "--mount", "true"]):
        pytest.skip("this user may make no user namespace: the read-only world is root's only")
    root = shared_dir()
    try:
        _attack(root, prefix)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _attack(root: Path, prefix: list[str]) -> None:
    ws, outside, state, home = (root / n for n in ("ws", "outside", "state", "home"))
    for d in (ws, outside, state, home):
        d.mkdir()
    victim = outside / "victim"
    victim.write_text("x")
    victim.chmod(0o600)
    os.utime(victim, (1_000_000_000, 1_000_000_000))
    commands = [
        f"chmod 777 {victim}; echo chmod $?",
        f"touch {victim}; echo touch $?",
        f"python3 -c \"import os; os.setxattr('{victim}', 'user.x', b'1')\"; echo xattr $?",
        f"chmod 777 {outside}; echo chmod-dir $?",
        f"chmod 700 {home}; echo chmod-home $?",
        # Allowed: the workspace's own files, and git there.
        "echo x > f && chmod 755 f && touch -d 2001-01-01 f && stat -c %a f",
        # The user's repository (made before the run: a new one the model makes is undone).
        "git add f && git -c user.email=a@b.c -c user.name=t commit -q -m one"
        " && git log --oneline | wc -l",
    ]
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    before = victim.stat()
    modes = (outside.stat().st_mode, home.stat().st_mode)
    out = _run_as_user(root, prefix, commands)
    assert len(out) == len(commands), out
    for line, what in zip(
        out[:5], ("chmod", "touch", "xattr", "chmod-dir", "chmod-home"), strict=True
    ):
        assert line.rstrip().endswith(f"{what} 1"), out
    after = victim.stat()
    assert (after.st_mode, after.st_mtime) == (before.st_mode, before.st_mtime)
    assert not os.listxattr(victim)
    assert (outside.stat().st_mode, home.stat().st_mode) == modes
    assert "755" in out[5] and out[6].strip().endswith("1"), out


def _run_as_user(root: Path, prefix: list[str], commands: list[str]) -> list[str]:
    """One `spawn` of a bash agent as the unprivileged user in `root` (ws, state, home made
    by the caller); each command one bash call; the results' texts."""
    ws, state, home = root / "ws", root / "state", root / "home"
    steps: list[dict[str, object]] = [
        {"call": [{"tool": "bash", "args": {"command": c}}]} for c in commands
    ]
    script = root / "script.json"
    script.write_text(json.dumps({"steps": [*steps, {"say": "done"}]}))
    config = write_config(root / "cfg", {}, {"shell": SHELL_AGENT})
    if os.geteuid() == 0:
        for path in [root, *root.rglob("*")]:
            os.lchown(path, NOBODY, NOBODY)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "SUBAGENT_HOME": str(state),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    argv = ["spawn", "--json", "--config-dir", str(config), "--model", f"scripted:{script}"]
    argv += ["--workspace", str(ws), "shell", "go"]
    run = subprocess.run(
        [*prefix, sys.executable, "-m", "launcher.cli", *argv],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_LIMIT_S,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, run.stderr
    events = parse_events(run.stdout)
    return [str(e["content"]) for e in events if e["type"] == "tool_result"]


def test_an_unprivileged_shell_cannot_signal_the_launcher(tmp_path: Path) -> None:
    """The confined thread shares the shell's Landlock domain: the seccomp filter keeps an
    unprivileged shell's tgkill off it, and where the commands have a PID namespace of
    their own the launcher is not even in sight (no pid of theirs names it)."""
    prefix, why_not = user_prefix()
    if why_not is not None:
        pytest.skip(why_not)
    root = shared_dir()
    try:
        for d in ("ws", "state", "home"):
            (root / d).mkdir()
        (root / "ws" / "signals.py").write_text(SIGNALS)
        own = "sleep 100 & kill %1; wait %1; echo own child ended: $?"
        first = "python3 signals.py; echo init: $(tr '\\0' ' ' < /proc/1/cmdline)"
        out = _run_as_user(root, prefix, [first, own, "echo still here"])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert len(out) == 3, out
    if "no launcher found" in out[0]:  # pid 1 is the namespace's init, the holder's fork
        assert "privileges.py" in out[0].split("init:", 1)[1], out[0]
        assert "own child ended: 143" in out[1] and "still here" in out[2], out
        return
    for name in ("tgkill0", "tkill0", "kill0", "kill0-all", "pidfd0", "tgkill-stop"):
        assert f"{name} refused" in out[0], out[0]
    assert "tgkill-kill refused" in out[0], out[0]
    assert "own child ended: 143" in out[1] and "still here" in out[2], out
