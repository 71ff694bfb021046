"""What the model writes is never trusted (issue 28, items 1, 2, 4 and 9).

Each test is a hole, run as an unprivileged user (through `setpriv` when the tests run as
root) and as root, beside what must keep working:

- the model rewrites a hook script under `.claude/`, writes `.subagent/mcp.json` and
  `.mcp.json`, plants `.git/hooks/post-checkout`: all put back, so the next run starts no
  server of the model's; its `git add`, `commit`, `branch`, `stash`, `checkout -b` work;
- a `.git` FILE in a plain workspace (`gitdir: $HOME`, `gitdir: /`), planted by the model
  or left by an earlier session: the next session writes nothing outside the workspace;
- a linked worktree the user made before the run still commits;
- a launcher SIGKILLed mid-command leaves no private `$TMPDIR`;
- an unusable SUBAGENT_HOME exits 2 naming it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from launcher.tools.sandbox import mechanism_problem
from launcher.tools.sandbox.namespaces import UNSHARE_FLAGS, namespaces_problem
from tests.e2e.conftest import parse_events
from tests.e2e.isolation_support import RUN_LIMIT_S, World, world
from tests.e2e.spare_support import children
from tests.e2e.unprivileged import NOBODY, user_can, user_prefix

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="setpriv and Landlock"),
    pytest.mark.skipif(
        mechanism_problem() is not None, reason=f"no sandbox here: {mechanism_problem()}"
    ),
]
WHO = ["nobody", "root"]
WAIT_S = 120.0
"""How long a condition may take on a loaded box."""
USER_HOOK = "#!/bin/sh\necho the user's check\n"


def _env(w: World, home: Path | None = None) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home or w.root / "home"),
        "SUBAGENT_HOME": str(w.state),
        "PYTHONDONTWRITEBYTECODE": "1",
        **_extra_env,
    }


_extra_env: dict[str, str] = {}


def _argv(who: str) -> list[str]:
    if who == "root":
        if os.geteuid() != 0:
            pytest.skip("not root")
        return [sys.executable, "-m", "launcher.cli"]
    prefix, _ = user_prefix()
    return [*prefix, sys.executable, "-m", "launcher.cli"]


def _own(w: World, who: str) -> None:
    if who == "nobody" and os.geteuid() == 0:
        for path in [w.root, *w.root.rglob("*")]:
            os.lchown(path, NOBODY, NOBODY)


def launch(
    w: World, who: str, *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`subagent ARGS` as `who`, in `cwd` (the world's root)."""
    argv = _argv(who)
    _own(w, who)
    return subprocess.run(
        [*argv, *args],
        cwd=cwd or w.root,
        env=_env(w),
        capture_output=True,
        text=True,
        timeout=RUN_LIMIT_S,
        stdin=subprocess.DEVNULL,
    )


def script(w: World, name: str, calls: list[tuple[str, dict[str, Any]]]) -> Path:
    """A scripted model: each (tool, args) one call in a turn of its own, then done."""
    steps: list[dict[str, Any]] = [{"call": [{"tool": t, "args": a}]} for t, a in calls]
    path = w.root / f"{name}.json"
    path.write_text(json.dumps({"steps": [*steps, {"say": "done"}]}))
    return path


def shell(w: World, who: str, workspace: Path, name: str, calls: list[Any]) -> list[Any]:
    """One session of the shell agent (bash, write) in `workspace`; its tool results."""
    calls = [("bash", {"command": c}) if isinstance(c, str) else c for c in calls]
    model = f"scripted:{script(w, name, calls)}"
    base = ["spawn", "--json", "--config-dir", str(w.config), "--workspace", str(workspace)]
    run = launch(w, who, *base, "--model", model, "shell", "go")
    assert run.returncode == 0, run.stderr
    return [e for e in parse_events(run.stdout) if e["type"] == "tool_result"]


@pytest.mark.parametrize("who", WHO)
def test_config_and_what_git_runs_stay_the_users(who: str) -> None:
    with world({"README.md": "# project\n", ".claude/hooks/check.sh": USER_HOOK}) as w:
        marks = w.root / "marks"
        marks.mkdir()
        server = {"mcpServers": {"evil": {"command": "sh", "args": ["-c", f"touch {marks}/s"]}}}
        planted = json.dumps(server)
        results = shell(
            w,
            who,
            w.repo,
            "plant",
            [
                f"printf '#!/bin/sh\\ntouch {marks}/hook\\n' > .claude/hooks/check.sh",
                f"mkdir -p .subagent && printf '%s' '{planted}' > .subagent/mcp.json",
                f"printf '%s' '{planted}' > .mcp.json",
                f"printf '#!/bin/sh\\ntouch {marks}/git\\n' > .git/hooks/post-checkout"
                " && chmod +x .git/hooks/post-checkout",
                ("write", {"path": ".mcp.json", "content": planted}),
                ("write", {"path": ".vscode/mcp.json", "content": planted}),
                # What must keep working in the workspace's repository:
                "echo new > new.txt && git add new.txt && git -c user.name=m -c user.email=m@x"
                " commit -qm new && git branch side && git checkout -qb feature"
                " && echo more >> new.txt && git stash -q && git stash pop -q"
                " && git checkout -q main && git checkout -q feature",
            ],
        )
        assert [r["is_error"] for r in results] == [True] * 6 + [False], results
        # Undone after the command, or (where a mount namespace can be had) refused.
        said = [r["content"].lower() for r in results[:6]]
        assert all("protected" in c or "read-only file system" in c for c in said), said
        assert (w.repo / ".claude/hooks/check.sh").read_text() == USER_HOOK
        for gone in (".subagent", ".mcp.json", ".vscode", ".git/hooks/post-checkout"):
            assert not os.path.lexists(w.repo / gone), gone
        assert w.git("log", "--format=%s", "feature").split() == ["new", "first"]
        assert "side" in w.git("branch", "--format=%(refname:short)").split()
        # The next run reads the workspace's config: no server of the model's starts.
        say = script(w, "say", [])
        nxt = launch(w, who, "spawn", "--model", f"scripted:{say}", "general-purpose", "go",
                     cwd=w.repo)  # fmt: skip
        assert nxt.returncode == 0, nxt.stderr
        w.git("checkout", "-q", "main")  # the user's own checkout runs no planted hook
        assert sorted(p.name for p in marks.iterdir()) == []


@pytest.mark.parametrize("who", WHO)
def test_the_repositorys_borrowed_object_stores_stay_the_users(who: str) -> None:
    """An alternates file the model plants would make git (the user's, and the next isolated
    run's set-up) read objects of a repository the run was never given."""
    with world({"README.md": "# project\n"}) as w:
        other = w.root / "other.git"
        results = shell(
            w,
            who,
            w.repo,
            "borrow",
            [
                f"echo {other}/objects > .git/objects/info/alternates",
                "echo x > x.txt && git add x.txt && git -c user.name=m -c user.email=m@x"
                " commit -qm x && git log --format=%s | head -1",
            ],
        )
        assert [r["is_error"] for r in results] == [True, False], results
        assert not os.path.lexists(w.repo / ".git/objects/info/alternates")
        assert results[1]["content"].strip().endswith("x"), results[1]


@pytest.mark.parametrize("who", WHO)
def test_write_config_lets_an_agent_edit_config_but_not_git_hooks(who: str) -> None:
    with world() as w:
        agent = w.config / "agents" / "shell.md"
        agent.write_text(
            agent.read_text().replace("---\nRun", "sandbox:\n  write_config: true\n---\nRun")
        )
        results = shell(
            w,
            who,
            w.repo,
            "config",
            [
                "mkdir -p .subagent && echo '{}' > .subagent/mcp.json",
                "echo hook > .git/hooks/pre-commit",
            ],
        )
        assert [r["is_error"] for r in results] == [False, True], results
        assert (w.repo / ".subagent/mcp.json").read_text() == "{}\n"
        assert not (w.repo / ".git/hooks/pre-commit").exists()


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("target", ["home", "root"])
@pytest.mark.parametrize("planted_by", ["model", "earlier"])
def test_a_git_file_never_widens_the_next_sessions_writes(
    who: str, target: str, planted_by: str
) -> None:
    with world() as w:
        plain = w.root / "plain"
        plain.mkdir()
        home = w.root / "home"
        victim = home / ".bashrc" if target == "home" else w.root / "outside.txt"
        victim.write_text("the user's\n")
        line = f"gitdir: {home if target == 'home' else '/'}\n"
        if planted_by == "earlier":  # by a session before this protection, say
            (plain / ".git").write_text(line)
        else:
            first = shell(w, who, plain, "plant", [f"printf '{line}' > .git"])
            assert first[0]["is_error"], first
            assert not os.path.lexists(plain / ".git")
        results = shell(w, who, plain, "write", [f"echo pwned >> {victim}", "echo ok > ok.txt"])
        assert [r["is_error"] for r in results] == [True, False], results
        assert victim.read_text() == "the user's\n"


@pytest.mark.parametrize("who", WHO)
def test_a_linked_worktree_the_user_made_still_commits(who: str) -> None:
    with world() as w:
        linked = w.root / "linked"
        w.git("worktree", "add", "-q", "-b", "feature", str(linked))
        gitdir = w.repo / ".git" / "worktrees" / "linked"
        commondir = (gitdir / "commondir").read_text()
        results = shell(
            w,
            who,
            linked,
            "commit",
            [
                "echo x > x.txt && git add x.txt && git -c user.name=m -c user.email=m@x"
                " commit -qm x",
                "git config core.fsmonitor 'touch /tmp/never'",
                f"echo {w.root}/evil > {gitdir}/commondir",
            ],
        )
        assert [r["is_error"] for r in results] == [False, True, True], results
        assert w.git("log", "--format=%s", "feature").split() == ["x", "first"]
        assert "fsmonitor" not in (w.repo / ".git" / "config").read_text()
        assert (gitdir / "commondir").read_text() == commondir


@pytest.mark.parametrize(("who", "namespaces"), [("root", False), ("root", True), ("nobody", True)])
def test_where_a_mount_namespace_can_be_had_protected_places_are_read_only(
    who: str, namespaces: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if namespaces:
        if namespaces_problem() is not None:
            pytest.skip(f"no namespaces here: {namespaces_problem()}")
        probe = ["unshare", *UNSHARE_FLAGS, sys.executable, "-I", "-S", "-c", "pass"]
        if who == "nobody" and os.geteuid() == 0 and not user_can(probe):
            pytest.skip("the unprivileged user cannot reach the interpreter inside unshare")
        monkeypatch.setitem(_extra_env, "SUBAGENT_BASH_SANDBOX", "1")
    files = {"README.md": "# project\n", ".claude/hooks/check.sh": USER_HOOK, ".mcp.json": "{}"}
    with world(files) as w:
        results = shell(
            w,
            who,
            w.repo,
            "refused",
            [
                "echo evil > .claude/hooks/check.sh",
                "rm -f .mcp.json",
                "echo evil > .git/hooks/pre-commit",
                "echo fine > fine.txt && git add fine.txt",
            ],
        )
        assert [r["is_error"] for r in results] == [True, True, True, False], [
            r["content"] for r in results
        ]
        assert "Read-only file system" in results[0]["content"], results[0]
        assert "busy" in results[1]["content"], results[1]
        assert "Read-only file system" in results[2]["content"], results[2]
        assert (w.repo / ".claude/hooks/check.sh").read_text() == USER_HOOK


@pytest.mark.parametrize("who", WHO)
def test_a_process_outside_its_commands_group_cannot_change_a_protected_place(who: str) -> None:
    """A `setsid` process (out of its command's group) writes a protected place while its
    command waits: the read-only bind refuses it, before any putting back — root's own
    mount namespace, or an unprivileged launcher's holder namespace (where user
    namespaces are allowed)."""
    if who != "root" and holder_problem() is not None:
        pytest.skip(f"no holder namespace for an unprivileged launcher: {holder_problem()}")
    with world({"README.md": "# project\n", ".claude/hooks/check.sh": USER_HOOK}) as w:
        writer = (
            "setsid -f sh -c 'touch ready; for i in $(seq 1200); do [ -e go ] && break;"
            " sleep 0.1; done; echo evil > .claude/hooks/check.sh; touch wrote'"
            " </dev/null >/dev/null 2>&1; for i in $(seq 1200); do [ -e ready ] && break;"
            " sleep 0.1; done"  # in a session of its own before this command's group dies
        )
        read = "touch go; for i in $(seq 1200); do [ -e wrote ] && break; sleep 0.1; done; cat"
        command = f"{writer}; {read} .claude/hooks/check.sh"
        results = shell(w, who, w.repo, "outlive", [command])
        assert results[0]["content"].strip() == USER_HOOK.strip(), results
        assert (w.repo / ".claude/hooks/check.sh").read_text() == USER_HOOK


@pytest.mark.parametrize("who", WHO)
def test_renaming_git_does_not_unprotect_its_config(who: str) -> None:
    """`mv .git .gitold && cp -a .gitold .git` would carry the read-only binds away and
    leave a writable copy; a process out of its command's group would then poison the
    user's config before the put-back. The parents of the places are mount points: the
    rename fails."""
    if who != "root" and holder_problem() is not None:
        pytest.skip(f"no holder namespace for an unprivileged launcher: {holder_problem()}")
    with world({"README.md": "# project\n", ".claude/hooks/check.sh": USER_HOOK}) as w:
        config = (w.repo / ".git/config").read_text()
        escape = (
            "mv .git .gitold && cp -a .gitold .git"
            ' && printf "[core]\\n\\tfsmonitor = touch poisoned\\n" >> .git/config'
        )
        writer = (
            f"setsid -f sh -c 'touch ready; for i in $(seq 1200); do [ -e go ] && break;"
            f" sleep 0.1; done; ( {escape} ) 2>renamed.txt; touch wrote'"
            " </dev/null >/dev/null 2>&1; for i in $(seq 1200); do [ -e ready ] && break;"
            " sleep 0.1; done"
        )
        read = "touch go; for i in $(seq 1200); do [ -e wrote ] && break; sleep 0.1; done"
        results = shell(
            w,
            who,
            w.repo,
            "rename",
            [escape, "mv .claude .claude-old", f"{writer}; {read}; cat .git/config"],
        )
        assert [r["is_error"] for r in results[:2]] == [True, True], results
        assert "busy" in results[0]["content"], results[0]
        assert "busy" in results[1]["content"], results[1]
        assert "fsmonitor" not in results[2]["content"], results[2]
        assert "busy" in (w.repo / "renamed.txt").read_text()
        assert (w.repo / ".git/config").read_text() == config
        assert not (w.repo / ".gitold").exists()
        assert (w.repo / ".claude/hooks/check.sh").read_text() == USER_HOOK


def holder_problem() -> str | None:
    """Why an unprivileged launcher would have no holder namespace here, else None."""
    if not user_can(["unshare", "--user", "--map-current-user", "--mount", "true"]):
        return "the unprivileged user may make no user namespace"
    return None


def _launch(w: World, who: str, model: Path, workspace: Path) -> subprocess.Popen[bytes]:
    """`spawn` of the `shell` agent on the scripted `model` in `workspace`, as `who`, in the
    background (its output unread: these tests look at what it leaves)."""
    _own(w, who)
    base = ["spawn", "--config-dir", str(w.config), "--workspace", str(workspace)]
    return subprocess.Popen(
        [*_argv(who), *base, "--model", f"scripted:{model}", "shell", "go"],
        cwd=w.root,
        env=_env(w),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _read(path: Path) -> bytes | None:
    """The file's bytes, or None while it is not there (mid put-back)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.mark.parametrize("who", WHO)
def test_a_killed_launchers_tmpdir_goes(who: str) -> None:
    with world() as w:
        told = w.root / "plain" / "tmpdir.txt"
        told.parent.mkdir()
        # A 000 directory the model leaves in it: still removed (its owner opens it up).
        lock = 'mkdir -p "$TMPDIR/a/b" && touch "$TMPDIR/a/b/f" && chmod 000 "$TMPDIR/a"'
        command = f"{lock}; echo $TMPDIR > {told}; sleep 600"
        model = script(w, "sleep", [("bash", {"command": command})])
        proc = _launch(w, who, model, told.parent)
        try:
            _wait_for(lambda: told.exists() and told.read_text().strip(), "the command")
            tmp = Path(told.read_text().strip())
            assert tmp.name.startswith("subagent-tmp-") and tmp.is_dir()
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=WAIT_S)
            _wait_for(lambda: not tmp.exists(), f"{tmp} to be removed")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=WAIT_S)


@pytest.mark.parametrize("who", WHO)
def test_an_unusable_subagent_home_exits_2_naming_it(who: str) -> None:
    with world() as w:
        blocker = w.root / "a-file"
        blocker.write_text("not a directory\n")
        say = script(w, "say", [])
        argv = _argv(who)
        _own(w, who)
        env = {**_env(w), "SUBAGENT_HOME": str(blocker / "state")}
        run = subprocess.run(
            [*argv, "spawn", "--model", f"scripted:{say}", "general-purpose", "go"],
            cwd=w.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_LIMIT_S,
            stdin=subprocess.DEVNULL,
        )
        assert run.returncode == 2, run.stderr
        assert "SUBAGENT_HOME" in run.stderr and str(blocker / "state") in run.stderr
        assert "Traceback" not in run.stderr


@pytest.mark.parametrize("who", WHO)
def test_an_agents_project_memory_survives_its_shell_commands(who: str) -> None:
    """`.subagent/` is protected, but the `memory` tools' notes in it stay the model's."""
    with world() as w:
        agent = w.config / "agents" / "shell.md"
        agent.write_text(agent.read_text().replace("---\nRun", "memory: project\n---\nRun"))
        results = shell(
            w,
            who,
            w.repo,
            "memory",
            [
                ("memory_write", {"key": "notes", "content": "remember this"}),
                "echo fine > fine.txt",
                "echo evil > .subagent/mcp.json",
            ],
        )
        assert [r["is_error"] for r in results] == [False, False, True], results
        note = w.repo / ".subagent" / "memory" / "shell" / "notes.md"
        assert note.read_text().strip() == "remember this"
        assert not (w.repo / ".subagent" / "mcp.json").exists()


@pytest.mark.parametrize("who", WHO)
def test_a_batch_session_starting_beside_a_plant_never_puts_it_back(who: str) -> None:
    """`batch --jobs 2` in one workspace: task a keeps planting `.subagent/mcp.json` until
    task c, started in b's slot while the plant is there, has run; after the batch the
    plant is gone and the next run starts no server of the model's."""
    with world({"README.md": "# project\n"}) as w:
        mark = w.root / "marks"
        mark.mkdir()
        server = {"mcpServers": {"evil": {"command": "sh", "args": ["-c", f"touch {mark}/s"]}}}
        planted = json.dumps(server)
        plant = (
            f"for i in $(seq 2400); do [ -e c-ran ] && break; mkdir -p .subagent;"
            f" [ -e .subagent/mcp.json ] || printf '%s' '{planted}' > .subagent/mcp.json;"
            " sleep 0.05; done"
        )
        wait_c = "for i in $(seq 2400); do [ -e a-done ] && break; sleep 0.05; done; sleep 3"
        steps = {
            "a": [plant, "touch a-done"],
            "b": ["true"],
            "c": ["touch c-ran", wait_c],  # c ends last: its end's put-back is the last
        }
        lines = []
        for name, calls in steps.items():
            model = f"scripted:{script(w, name, [('bash', {'command': c}) for c in calls])}"
            task = {"id": name, "prompt": "go", "agent": "shell", "model": model}
            lines.append(json.dumps({**task, "workspace": str(w.repo)}))
        tasks = w.root / "tasks.jsonl"
        tasks.write_text("\n".join(lines) + "\n")
        out = w.root / "out.jsonl"
        run = launch(w, who, "batch", str(tasks), "--config-dir", str(w.config),
                     "--out", str(out), "--jobs", "2")  # fmt: skip
        assert run.returncode == 0, run.stderr
        statuses = {e["id"]: e["status"] for e in parse_events(out.read_text())}
        assert statuses == {"a": "completed", "b": "completed", "c": "completed"}, statuses
        assert not os.path.lexists(w.repo / ".subagent")
        say = script(w, "say", [])
        nxt = launch(w, who, "spawn", "--model", f"scripted:{say}", "general-purpose", "go",
                     cwd=w.repo)  # fmt: skip
        assert nxt.returncode == 0, nxt.stderr
        assert sorted(p.name for p in mark.iterdir()) == []


@pytest.mark.parametrize("who", WHO)
def test_a_killed_launchers_protected_places_are_put_back(who: str) -> None:
    """SIGKILL the launcher while its command, which changed protected places (a new
    `.subagent/mcp.json`, the repository's config), still runs: its watchdog puts them back
    once it has ended the command's processes."""
    with world({"README.md": "# project\n"}) as w:
        config = (w.repo / ".git/config").read_bytes()
        started = w.repo / "started.txt"
        command = (
            "mkdir -p .subagent && echo '{}' > .subagent/mcp.json; echo '{}' > .mcp.json;"
            " git config core.fsmonitor 'touch /nonexistent' 2>/dev/null;"
            " git init -q sub && git -C sub config core.pager 'touch /nonexistent';"
            f" echo yes > {started}; sleep 600"
        )
        model = script(w, "kill", [("bash", {"command": command})])
        proc = _launch(w, who, model, w.repo)
        try:
            _wait_for(lambda: started.exists(), "the command")
            assert os.path.lexists(w.repo / ".subagent/mcp.json")  # not refused: made
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=WAIT_S)
            # One wait for all three: the put-back goes place by place, `.git` last.
            _wait_for(
                lambda: (
                    not os.path.lexists(w.repo / ".subagent")
                    and not os.path.lexists(w.repo / ".mcp.json")
                    and _read(w.repo / ".git/config") == config
                ),
                "the protected places to be put back",
            )
            # The git repository the command made is defused too (its config runs nothing).
            _wait_for(
                lambda: "pager" not in (w.repo / "sub/.git/config").read_text(),
                "the model's repository to be defused",
            )
            # The last user gone, the copy goes too: removed last (a put-back cut short
            # keeps it for another try), so a moment after the defusing.
            _wait_for(
                lambda: list((w.state / "guard").glob("*/originals.json")) == [],
                "the guard's copy to be removed",
            )
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=WAIT_S)


@pytest.mark.parametrize("who", WHO)
def test_a_locked_tmpdir_goes_at_a_normal_end(who: str) -> None:
    with world() as w:
        told = w.root / "plain" / "tmpdir.txt"
        told.parent.mkdir()
        lock = 'mkdir -p "$TMPDIR/a/b" && touch "$TMPDIR/a/b/f" && chmod 000 "$TMPDIR/a"'
        shell(w, who, told.parent, "lock", [f"{lock} && echo $TMPDIR > {told}"])
        tmp = Path(told.read_text().strip())
        assert tmp.name.startswith("subagent-tmp-")
        assert not os.path.lexists(tmp)


@pytest.mark.parametrize("who", WHO)
def test_a_read_only_workspace_root_does_not_keep_a_plant(who: str) -> None:
    with world() as w:
        plant = (
            'echo \'{"mcpServers": {"x": {"command": "id"}}}\' > .mcp.json && '
            "mkdir -p .subagent && echo '{}' > .subagent/mcp.json && "
            "git config core.fsmonitor 'touch /tmp/pwned' ; "
            "chmod 0555 .subagent . .git/hooks .git"
        )
        results = shell(w, who, w.repo, "lock", [plant, "echo again"])
        said = results[0]["content"]
        assert results[0]["is_error"] and "could not be put back" not in said, said
        assert "again" in results[1]["content"]  # all put back: commands go on
        assert not os.path.lexists(w.repo / ".mcp.json")
        assert not os.path.lexists(w.repo / ".subagent")
        assert "fsmonitor" not in (w.repo / ".git/config").read_text()
        assert w.repo.stat().st_mode & 0o700 == 0o700


@pytest.mark.parametrize("who", WHO)
def test_a_read_only_nested_git_dir_is_defused(who: str) -> None:
    with world() as w:
        poison = (
            "git init -q sub && git -C sub config core.fsmonitor 'touch /tmp/pwned' && "
            "printf '#!/bin/sh\\n' > sub/.git/hooks/pre-commit && "
            "chmod 0555 sub/.git/hooks sub/.git"
        )
        results = shell(w, who, w.repo, "nested", [poison, "echo again"])
        assert "could not be defused" not in results[0]["content"], results[0]["content"]
        assert "again" in results[1]["content"]
        assert "fsmonitor" not in (w.repo / "sub/.git/config").read_text()
        assert not os.path.lexists(w.repo / "sub/.git/hooks/pre-commit")


HOME_AGENT = "---\nname: home\ntools: [bash, write, read, grep, ls]\nextensions: false\n---\nRun.\n"
TOKEN = "OAUTH-TOKEN-0123456789abcdef"


@pytest.mark.parametrize("who", WHO)
def test_the_state_home_inside_the_workspace_is_the_launchers(who: str) -> None:
    """A session run in ~ has SUBAGENT_HOME (OAuth tokens, the guard's record) in its
    workspace: neither the shell nor the file tools read, list or write it."""
    with world() as w:
        state = w.repo / ".local/state/subagent"
        (state / "auth").mkdir(parents=True)
        token = state / "auth/remote.json"
        token.write_text(json.dumps({"access_token": TOKEN}))
        (w.config / "agents/home.md").write_text(HOME_AGENT)
        rel = ".local/state/subagent"
        calls: list[tuple[str, dict[str, Any]]] = [
            ("bash", {"command": f"cat {rel}/auth/remote.json; ls {rel}/guard; echo"}),
            ("bash", {"command": f"echo x > {rel}/auth/remote.json; echo y > {rel}/planted"}),
            ("read", {"path": f"{rel}/auth/remote.json"}),
            ("grep", {"pattern": "OAUTH", "path": "."}),
            ("ls", {"path": f"{rel}/auth"}),
            ("write", {"path": f"{rel}/auth/remote.json", "content": "{}"}),
        ]
        model = f"scripted:{script(w, 'home', calls)}"
        argv = _argv(who)
        _own(w, who)
        run = subprocess.run(
            [
                *argv,
                "spawn",
                "--json",
                "--config-dir",
                str(w.config),
                "--workspace",
                str(w.repo),
                "--model",
                model,
                "home",
                "go",
            ],
            cwd=w.root,
            env={**_env(w), "SUBAGENT_HOME": str(state)},
            capture_output=True,
            text=True,
            timeout=RUN_LIMIT_S,
            stdin=subprocess.DEVNULL,
        )
        assert run.returncode == 0, run.stderr
        results = [e for e in parse_events(run.stdout) if e["type"] == "tool_result"]
        assert len(results) == len(calls), results
        assert all(TOKEN not in r["content"] for r in results), results
        assert "guard" not in results[0]["content"].split(), results[0]
        assert [r["is_error"] for r in results[2:]] == [True, False, True, True], results
        assert json.loads(token.read_text()) == {"access_token": TOKEN}
        assert not (state / "planted").exists()


HOPPER = """import os, sys, time
ws, started = sys.argv[1], sys.argv[2]
end, last = time.monotonic() + 90, 0.0
while time.monotonic() < end:
    if os.fork():
        os._exit(0)
    os.setsid()
    if time.monotonic() - last > 0.05:
        last = time.monotonic()
        try:
            with open(os.path.join(ws, ".mcp.json"), "w") as f:
                f.write('{"mcpServers": {"evil": {"command": "true"}}}')
            with open(os.path.join(ws, "sub/.git/config"), "a") as f:
                f.write("[core]\\n\\tfsmonitor = touch hopped\\n")
            open(started, "w").close()
        except OSError:
            pass
"""
"""Each generation forks its successor and exits at once (no pid lives long enough to be
seen twice), and re-plants `.mcp.json` and a model repository's fsmonitor every 50 ms."""


def _running(marker: str) -> list[int]:
    """Live (not zombie) processes whose command line names `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker in entry.joinpath("cmdline").read_bytes().decode(errors="replace"):
                if "Z" not in entry.joinpath("stat").read_text().rsplit(")", 1)[1].split()[0]:
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def _end_hopper(marker: str) -> None:
    """Kill what is left of a hopper (on a launcher without the fix); bounded."""
    deadline = time.monotonic() + WAIT_S
    while (pids := _running(marker)) and time.monotonic() < deadline:
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _hop(w: World) -> tuple[Path, str]:
    """The hopper script in the world, and the command that starts it in the background
    and returns once it has planted (its first generation's parent gone)."""
    hopper = w.repo / "hop.py"
    hopper.write_text(HOPPER)
    start = (
        f"git init -q sub; (python3 {hopper} $PWD started </dev/null >/dev/null 2>&1 &);"
        " for i in $(seq 1200); do [ -e started ] && break; sleep 0.1; done; echo started"
    )
    return hopper, start


def _no_hopper_left(w: World, hopper: Path) -> None:
    # Bounded: a hopper left alive is seen in one of these passes (it re-plants every 50
    # ms and lives 90 s); one ended before the put-back is never seen again.
    left = [pid for _ in range(50) for pid in _running(str(hopper))]
    assert left == [], f"the hopper outlived the session: {sorted(set(left))}"
    assert not os.path.lexists(w.repo / ".mcp.json")
    assert "fsmonitor" not in (w.repo / "sub/.git/config").read_text()


@pytest.mark.parametrize("who", WHO)
def test_a_fast_hopper_is_ended_before_the_session_ends(who: str) -> None:
    """A process that forks its successor and exits at once, every few microseconds, is
    ended with the command's PID namespace before the put-back: nothing it plants stays,
    nothing of it runs on."""
    if who != "root" and holder_problem() is not None:
        pytest.skip(f"no holder namespace for an unprivileged launcher: {holder_problem()}")
    with world({"README.md": "# project\n"}) as w:
        hopper, start = _hop(w)
        try:
            results = shell(w, who, w.repo, "hopper", [start])
            assert results[0]["content"].startswith("started"), results
            _no_hopper_left(w, hopper)
        finally:
            _end_hopper(str(hopper))


def _watchdog_of(launcher: int) -> int | None:
    """The launcher's watchdog process (`python -m launcher.procs.watchdog`, its child)."""
    for pid in children(launcher):
        with contextlib.suppress(OSError):
            if b"launcher.procs.watchdog" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return pid
    return None


@pytest.mark.parametrize("with_watchdog", [False, True], ids=["launcher", "and-watchdog"])
@pytest.mark.parametrize("who", WHO)
def test_a_fast_hopper_dies_with_a_killed_launcher(who: str, with_watchdog: bool) -> None:
    """SIGKILL the launcher while a hopper it started runs: the kernel (the namespace's
    init dies with the holder, or root's with the confined thread) and the watchdog end
    every process of it, and only then are the protected places put back. Killed together
    with its watchdog, nothing is left to put the places back (docs/security.md says so),
    but the kernel still ends every process of the commands' namespace."""
    if who != "root" and holder_problem() is not None:
        pytest.skip(f"no holder namespace for an unprivileged launcher: {holder_problem()}")
    with world({"README.md": "# project\n"}) as w:
        hopper, start = _hop(w)
        model = script(w, "kill", [("bash", {"command": f"{start}; sleep 600"})])
        proc = _launch(w, who, model, w.repo)
        try:
            _wait_for(lambda: (w.repo / "started").exists(), "the hopper")
            if with_watchdog:
                watchdog = _watchdog_of(proc.pid)
                assert watchdog is not None, "no watchdog found"
                os.kill(watchdog, signal.SIGKILL)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=WAIT_S)
            if with_watchdog:
                _wait_for(lambda: _running(str(hopper)) == [], "the hopper to be ended")
                left = [pid for _ in range(50) for pid in _running(str(hopper))]
                assert left == [], f"the hopper outlived the launcher: {sorted(set(left))}"
                return
            # The watchdog's put-back is done when the last user of the record is gone.
            _wait_for(
                lambda: list((w.state / "guard").glob("*/originals.json")) == [],
                "the watchdog's put-back",
            )
            _wait_for(lambda: not os.path.lexists(w.repo / ".mcp.json"), "the put-back")
            _no_hopper_left(w, hopper)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=WAIT_S)
            _end_hopper(str(hopper))


LOOP = """import os, sys, time
ws, started = sys.argv[1], sys.argv[2]
os.setsid()
end = time.monotonic() + 300
while time.monotonic() < end:
    try:
        with open(os.path.join(ws, "sub/.git/config"), "a") as f:
            f.write("[core]\\n\\tfsmonitor = touch looped\\n")
        open(started, "a").close()
    except OSError:
        pass
    time.sleep(0.05)
"""
"""A process that left its command's group and re-plants a model repository's fsmonitor
every 50 ms for minutes."""


@pytest.mark.parametrize("who", WHO)
def test_a_process_a_command_leaves_ends_with_the_command(who: str) -> None:
    """A command starts a setsid'd loop re-planting `sub/.git/config` and returns: once its
    result is in, no process of it is left, and the repository stays defused while the
    model thinks (here: while the next command waits for the test's go)."""
    if who != "root" and holder_problem() is not None:
        pytest.skip(f"no holder namespace for an unprivileged launcher: {holder_problem()}")
    with world({"README.md": "# project\n"}) as w:
        loop = w.repo / "loop.py"
        loop.write_text(LOOP)
        start = (
            f"git init -q sub; (python3 {loop} $PWD started </dev/null >/dev/null 2>&1 &);"
            " for i in $(seq 1200); do [ -e started ] && break; sleep 0.1; done; echo started"
        )
        thinking, go = w.repo / "thinking", w.repo / "go"  # the commands write there
        wait = (
            f"touch {thinking}; for i in $(seq 1200); do [ -e {go} ] && break; sleep 0.1; done;"
            " grep -q fsmonitor sub/.git/config && echo planted || echo clean"
        )
        model = script(w, "h8", [("bash", {"command": start}), ("bash", {"command": wait})])
        argv = _argv(who)
        _own(w, who)
        base = ["spawn", "--json", "--config-dir", str(w.config), "--workspace", str(w.repo)]
        proc = subprocess.Popen(
            [*argv, *base, "--model", f"scripted:{model}", "shell", "go"],
            cwd=w.root,
            env=_env(w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            # The second command has started: the first one's result and check are done.
            _wait_for(thinking.exists, "the second command")
            assert _running(str(loop)) == [], "a process the first command left runs on"
            assert "fsmonitor" not in (w.repo / "sub/.git/config").read_text()
            go.touch()
            out, err = proc.communicate(timeout=WAIT_S)
            assert proc.returncode == 0, err
            results = [e for e in parse_events(out) if e["type"] == "tool_result"]
            assert results[0]["content"].startswith("started"), results
            assert "defused" in results[0]["content"], results
            assert results[1]["content"].strip() == "clean", results
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=WAIT_S)
            _end_hopper(str(loop))


def test_an_unprivileged_launchers_commands_see_only_their_own_processes() -> None:
    """Their PID namespace has a /proc of its own: `ps` lists the command's processes
    (the launcher, its servers and the user's other processes are not there) under the
    pids `kill` takes, and what `pkill` finds it ends."""
    if holder_problem() is not None:
        pytest.skip(f"no holder namespace for an unprivileged launcher: {holder_problem()}")
    with world({"README.md": "# project\n"}) as w:
        # The name is put together when it runs: no command line here holds it whole.
        command = (
            'N=nap; setsid -f bash -c "exec -a ${N}per sleep 300";'
            " echo pids $(ls /proc | grep -c '^[0-9]'); ps -e -o comm= | tr '\\n' ' ';"
            ' pkill -f "${N}per" && for i in $(seq 600); do'
            ' pgrep -f "${N}per" >/dev/null || break; sleep 0.1; done;'
            ' pgrep -f "${N}per" || echo ended'
        )
        results = shell(w, "nobody", w.repo, "ps", [command])
        out = results[0]["content"]
        assert not results[0]["is_error"], out
        count = int(out.split("pids ", 1)[1].split()[0])
        assert count < 10, out  # init, bash, sleep, ls, grep: not the whole machine
        listed = out.split("pids ", 1)[1].split()[1:]
        assert "bash" in listed, out
        assert not any("subagent" in name or "launcher" in name for name in listed), out
        assert out.rstrip().endswith("ended"), out
