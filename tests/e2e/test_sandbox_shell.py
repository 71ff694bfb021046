"""The model's shell, attacked from the shell: by default it reads no secret, writes only in
the workspace (and its private temporary directory) and reaches no network; `sandbox: off`
gives today's unconfined shell back; `required` without a mechanism refuses to start."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from launcher.tools.sandbox import mechanism_problem
from tests.e2e.sandbox_support import (
    KEY,
    TOKEN,
    connected,
    listeners,
    plant,
    results,
    run_commands,
)

pytestmark = pytest.mark.e2e

needs_mechanism = pytest.mark.skipif(
    mechanism_problem() is not None, reason=f"no sandbox here: {mechanism_problem()}"
)


def _py(code: str) -> str:
    return f"python3 -c {json.dumps(code)}"


@needs_mechanism
def test_secrets_stay_unread_in_every_form(tmp_path: Path) -> None:
    p = plant(tmp_path)
    token = p.token_file
    commands = [
        f"cat {token}",
        f"rev {token}",
        f"xxd -p {token}",
        _py(f"print(open('{token}').read()[::-1])"),
        f"cat {p.home}/.ssh/id_ed25519",
        "cat ~/.ssh/id_*",
        f"cp {token} stolen.json",
        f"ln {token} linked.json && cat linked.json",
        f"cat /proc/self/root{token}",
    ]
    run = run_commands(p, commands)
    assert run.code == 0, run.stderr
    out = results(run)
    assert len(out) == len(commands)
    assert all(r["is_error"] for r in out), out
    text = json.dumps(run.events)
    for form in (TOKEN, TOKEN[::-1], TOKEN.encode().hex()[:24], KEY, KEY[::-1]):
        assert form not in text
    assert "Permission denied" in str(out[0]["content"])
    assert not (p.workspace / "stolen.json").exists()


@needs_mechanism
def test_writes_outside_the_workspace_are_refused(tmp_path: Path) -> None:
    p = plant(tmp_path)
    out_dir = p.outside
    commands = [
        f"echo x > {out_dir}/abs",
        "echo x > ../outside/dotdot",
        "ln -s ../outside up && echo x > up/via-link",
        "echo x > /proc/self/cwd/../outside/via-proc",
        f"touch {p.home}/new-in-home",
        # Allowed: the workspace, git, python, reading the system.
        "echo inside > inside.txt && cat inside.txt",
        # A new repository at the top would be a `.git` the session did not start with.
        "git init -q sub && git -C sub -c user.email=a@b.c -c user.name=t commit -q"
        " --allow-empty -m one && git -C sub log --oneline | wc -l",
        _py("print(6 * 7)"),
        "ls /usr",
        'f=$(mktemp) && echo tmp > "$f" && mkdir -p "$XDG_CACHE_HOME/go" && cat "$f"',
        _py(
            "import concurrent.futures as f; print(sum(f.ProcessPoolExecutor(2).map(abs, [1, 2])))"
        ),
    ]
    run = run_commands(p, commands)
    assert run.code == 0, run.stderr
    out = results(run)
    assert [r["is_error"] for r in out] == [True] * 5 + [False] * 6, out
    assert list(out_dir.iterdir()) == [p.outside / "up"] or list(out_dir.iterdir()) == []
    assert not (p.home / "new-in-home").exists()
    assert (p.workspace / "inside.txt").read_text() == "inside\n"
    assert str(out[6]["content"]).strip() == "1"
    assert str(out[7]["content"]).strip() == "42"
    assert "bin" in str(out[8]["content"])
    assert str(out[9]["content"]).strip() == "tmp"
    assert str(out[10]["content"]).strip() == "3"  # multiprocessing: /dev/shm


@needs_mechanism
def test_no_network_and_no_outside_socket_even_from_a_detached_child(tmp_path: Path) -> None:
    p = plant(tmp_path)
    with listeners(p.outside) as (port, sock, tcp, unix):
        tcp_py = _py(f"import socket; socket.create_connection(('127.0.0.1', {port}), 5)")
        unix_py = _py(f"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{sock}')")
        commands = [
            tcp_py,
            f"echo hi > /dev/tcp/127.0.0.1/{port}",
            unix_py,
            f"setsid nohup {tcp_py} > detached.txt 2>&1 & wait $!; cat detached.txt",
            f"nohup setsid {unix_py} > detached2.txt 2>&1 & wait $!; cat detached2.txt",
        ]
        run = run_commands(p, commands)
        assert run.code == 0, run.stderr
        assert not connected(tcp)
        assert not connected(unix)
    out = results(run)
    assert all(r["is_error"] for r in out[:3]), out
    assert "ermission denied" in str(out[3]["content"]), out[3]
    assert "ermission denied" in str(out[4]["content"]), out[4]


@needs_mechanism
def test_git_commits_in_an_isolated_worktree_but_the_checkout_stays_closed(
    tmp_path: Path,
) -> None:
    p = plant(tmp_path)
    git = ["git", "-C", str(p.workspace), "-c", "user.email=a@b.c", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "base"], check=True)
    commands = [
        "echo new > f && git add f && git -c user.email=a@b.c -c user.name=t commit -qm run"
        " && git log --oneline | wc -l",
        f"echo x > {p.workspace}/in-the-checkout",
    ]
    run = run_commands(p, commands, args=("--isolation", "worktree"))
    assert run.code == 0, run.stderr
    out = results(run)
    assert not out[0]["is_error"] and str(out[0]["content"]).strip() == "2", out
    assert out[1]["is_error"] and not (p.workspace / "in-the-checkout").exists()


@needs_mechanism
def test_network_true_lets_the_shell_connect(tmp_path: Path) -> None:
    p = plant(tmp_path)
    with listeners(p.outside) as (port, _sock, tcp, _unix):
        tcp_py = _py(f"import socket; socket.create_connection(('127.0.0.1', {port}), 5)")
        run = run_commands(p, [tcp_py, f"cat {p.token_file}"], sandbox="{network: true}")
        assert connected(tcp)
    out = results(run)
    assert not out[0]["is_error"], out
    assert out[1]["is_error"]  # the network, not the files


@needs_mechanism
@pytest.mark.parametrize(
    ("field", "reaches"), [(None, True), ("on", False)], ids=["omitted", "own"]
)
def test_config_default_applies_to_agents_that_omit_the_field(
    tmp_path: Path, field: str | None, reaches: bool
) -> None:
    p = plant(tmp_path)
    with listeners(p.outside) as (port, _sock, tcp, _unix):
        tcp_py = _py(f"import socket; socket.create_connection(('127.0.0.1', {port}), 5)")
        run = run_commands(p, [tcp_py], sandbox=field, config_default={"network": True})
        assert run.code == 0, run.stderr
        assert connected(tcp) is reaches
    assert results(run)[0]["is_error"] is not reaches


def test_sandbox_off_is_the_unconfined_shell(tmp_path: Path) -> None:
    p = plant(tmp_path)
    with listeners(p.outside) as (port, _sock, tcp, _unix):
        tcp_py = _py(f"import socket; socket.create_connection(('127.0.0.1', {port}), 5)")
        commands = [f"cat {p.home}/.ssh/id_ed25519", f"echo x > {p.outside}/abs", tcp_py]
        run = run_commands(p, commands, sandbox="off")
        assert connected(tcp)
    out = results(run)
    assert [r["is_error"] for r in out] == [False] * 3, out
    assert KEY in str(out[0]["content"])
    assert (p.outside / "abs").exists()
    assert "sandbox" not in run.stderr


@pytest.mark.parametrize(
    ("field", "args"),
    [("required", ()), (None, ("--sandbox", "required"))],
    ids=["agent-field", "cli-option"],
)
def test_required_without_a_mechanism_refuses_to_start(
    tmp_path: Path, field: str | None, args: tuple[str, ...]
) -> None:
    p = plant(tmp_path)
    run = run_commands(
        p,
        ["touch ran"],
        sandbox=field,
        args=args,
        env={"SUBAGENT_SANDBOX_MECHANISM": "none"},
    )
    assert run.code == 1
    assert "sandbox: unavailable (SUBAGENT_SANDBOX_MECHANISM=none)" in run.stderr
    assert "required" in run.stderr
    assert not run.of_type("tool_call")
    assert not (p.workspace / "ran").exists()


def test_on_without_a_mechanism_says_so_once_and_runs(tmp_path: Path) -> None:
    p = plant(tmp_path)
    run = run_commands(p, ["touch one", "touch two"], env={"SUBAGENT_SANDBOX_MECHANISM": "none"})
    assert run.code == 0, run.stderr
    assert run.stderr.count("sandbox: unavailable (SUBAGENT_SANDBOX_MECHANISM=none)") == 1
    assert (p.workspace / "one").exists() and (p.workspace / "two").exists()
