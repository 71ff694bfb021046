"""Git repositories the model makes in the workspace are defused before the user's git
meets them (issue 28, N5), run as an unprivileged user and as root.

The model's shell makes a nested `sub/.git` with every config key that runs a program,
an included config, hooks; a bare `sub2/`; a `.git` file pointing at a git dir of its own
elsewhere in the workspace, one pointing outside, a `.git` FIFO; its `write` tool makes a
bare repository too. Then the user's own git runs in each: nothing of the model's runs.
What must keep working: the model's commits and log in its repository; a nested
repository the user made before the run keeps its config and hooks.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import parse_events
from tests.e2e.isolation_support import World, world
from tests.e2e.test_sandbox_protected import WHO, launch, script
from tests.e2e.test_sandbox_protected import pytestmark as protected_marks

pytestmark = protected_marks
ID = "-c user.name=m -c user.email=m@x"


def _user_git(w: World, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The user's git (their shell prompt, say) in a directory of the workspace."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(w.root / "home"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_PAGER": "",
    }
    return subprocess.run(
        ["git", "-c", "safe.directory=*", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def _session(w: World, who: str, calls: list[Any]) -> tuple[list[Any], str]:
    calls = [("bash", {"command": c}) if isinstance(c, str) else c for c in calls]
    model = f"scripted:{script(w, 'nested', calls)}"
    base = ["spawn", "--json", "--config-dir", str(w.config), "--workspace", str(w.repo)]
    run = launch(w, who, *base, "--model", model, "shell", "go")
    assert run.returncode == 0, run.stderr
    return [e for e in parse_events(run.stdout) if e["type"] == "tool_result"], run.stderr


@pytest.mark.parametrize("who", WHO)
def test_git_repositories_the_model_makes_run_nothing_for_the_user(who: str) -> None:
    with world({"README.md": "# project\n"}) as w:
        marks = w.root / "marks"
        marks.mkdir()
        os.chmod(marks, 0o777)
        # The user's own nested repository, made before the run: trusted, left alone.
        user = w.repo / "vendor/lib"
        user.mkdir(parents=True)
        assert _user_git(w, user, "init", "-q").returncode == 0
        assert _user_git(w, user, "config", "core.pager", "cat").returncode == 0
        (user / ".git/hooks/pre-commit").write_text("#!/bin/sh\nexit 0\n")
        os.chmod(user / ".git/hooks/pre-commit", 0o755)

        def run(name: str) -> str:
            return f"touch {marks}/{name}"

        hook = "printf '#!/bin/sh\\n{}\\n' > {} && chmod +x {}"
        bare = {"HEAD": "ref: refs/heads/main\n", "objects/k": "", "refs/heads/k": ""}
        writes = [("write", {"path": f"wr/{p}", "content": c}) for p, c in bare.items()]
        config = f"[core]\n\tfsmonitor = {run('write-fsmonitor')}\n"
        writes.append(("write", {"path": "wr/config", "content": config}))
        results, stderr = _session(
            w,
            who,
            [
                f"git init -q sub && git -C sub config core.fsmonitor '{run('fsmonitor')}'"
                f" && git -C sub config core.sshCommand '{run('ssh')}'"
                f" && git -C sub config diff.external '{run('diff')}'"
                f" && git -C sub config filter.x.clean '{run('clean')}'"
                f" && git -C sub config alias.st '!{run('alias')}'"
                f" && printf '[core]\\n\\tpager = {run('pager')}\\n' > inc.cfg"
                " && git -C sub config include.path ../../inc.cfg"
                " && echo '* filter=x diff=x' > sub/.gitattributes && "
                + hook.format(
                    run("hook"), "sub/.git/hooks/pre-commit", "sub/.git/hooks/pre-commit"
                ),
                f"git init -q --bare sub2 && git -C sub2 config core.fsmonitor '{run('bare')}'",
                "mkdir -p elsewhere sub3 && git init -q --bare elsewhere/gd"
                f" && git -C elsewhere/gd config core.fsmonitor '{run('gitfile')}'"
                " && git -C elsewhere/gd config core.bare false"
                " && printf 'gitdir: ../elsewhere/gd\\n' > sub3/.git",
                "mkdir -p out fifo && printf 'gitdir: /\\n' > out/.git && mkfifo fifo/.git",
                f"git -C vendor/lib log -1 >/dev/null 2>&1; git -C sub {ID} commit -q"
                " --allow-empty -m one && git -C sub branch side && git -C sub log --format=%s",
                *writes,
            ],
        )
        said = [r["content"] for r in results]
        assert all(r["is_error"] for r in results[:4]), said
        assert "defused" in said[0] and "core.fsmonitor" in said[0], said[0]
        assert "hooks/pre-commit" in said[0], said[0]
        # The model's repository keeps working: its commit, its branch, its log.
        assert not results[4]["is_error"], said[4]
        assert said[4].strip() == "one", said[4]
        assert "defused" in stderr and "wr" in stderr, stderr  # the write tool's: at the end
        assert not os.path.lexists(w.repo / "out/.git")
        assert not os.path.lexists(w.repo / "fifo/.git")
        # The user's git in each: status (fsmonitor), diff (external, driver), add (filter),
        # commit (hooks), the alias.
        for where in ("sub", "sub2", "sub3", "wr"):
            _user_git(w, w.repo / where, "status")
        sub = w.repo / "sub"
        (sub / "f.txt").write_text("a\n")
        _user_git(w, sub, "add", "f.txt")
        _user_git(w, sub, *ID.split(), "commit", "-qm", "two")
        (sub / "f.txt").write_text("b\n")
        _user_git(w, sub, "diff")
        _user_git(w, sub, "-p", "log")
        _user_git(w, sub, "st")
        assert sorted(p.name for p in marks.iterdir()) == []
        assert _user_git(w, sub, "log", "--format=%s").stdout.split() == ["two", "one"]
        # The user's nested repository is as they made it.
        assert _user_git(w, user, "config", "core.pager").stdout.strip() == "cat"
        assert (user / ".git/hooks/pre-commit").exists()
        assert "vendor" not in stderr and not any("vendor" in s for s in said), said


@pytest.mark.parametrize("who", WHO)
def test_the_result_names_each_repository_defused(who: str) -> None:
    """One line per repository, for the model to read (and the stream to keep)."""
    with world({"README.md": "# project\n"}) as w:
        results, _ = _session(
            w, who,
            ["git init -q a && git -C a config core.pager x && git init -q --bare b"
             " && git -C b config core.editor y"],
        )  # fmt: skip
        text = results[0]["content"]
        assert "a/.git (config: core.pager)" in text and "b (config: core.editor)" in text, text


@pytest.mark.parametrize("who", WHO)
def test_listings_reused_between_commands_hide_no_repository(who: str) -> None:
    """The walk reuses the listing of a directory unchanged since the last one: a repository
    made right after a walk, under a directory whose mtime is put back, deep under parents
    that did not change, or in a directory replaced by another, is still defused. And the
    model cannot choose a ctime: no confined process may set the clock."""
    files = {f"d{d}/f{f}.txt": "x\n" for d in range(5) for f in range(5)}
    files |= {"a/b/c/keep.txt": "x\n", "spare/old/keep.txt": "x\n"}
    with world(files) as w:
        marks = w.root / "marks"
        marks.mkdir()
        os.chmod(marks, 0o777)
        fsmonitor = f"git -C {{}} config core.fsmonitor 'touch {marks}/{{}}'"

        def plant(where: str) -> str:
            return f"git init -q {where} && " + fsmonitor.format(where, where.replace("/", "-"))

        keep = "touch -r d0 d3/m0 && touch -r d1 d3/m1 && touch -r . d3/m"
        put_back = "touch -m -r d3/m0 d0 && touch -m -r d3/m1 d1 && touch -m -r d3/m ."
        results, _ = _session(
            w, who,
            [
                "sleep 3",  # every directory older than the racy window: listings kept
                "true",
                # Right after a walk, in the same tick: no sleep in between.
                f"{keep} && {plant('d0')} && {plant('d1/new')} && {put_back}",
                f"mkdir -p a/b/c/x/y && {plant('a/b/c/x/y/z')}",
                f"rm -r d2 && mv spare/old d2 && {plant('d2/r')}",
                "grep -E '^Cap(Eff|Bnd)' /proc/self/status;"
                " date -s \"@$(date +%s)\" >/dev/null 2>&1 && echo clock-set || echo clock-kept",
            ],
        )  # fmt: skip
        said = [r["content"] for r in results]
        assert "d0/.git (config: core.fsmonitor)" in said[2], said
        assert "d1/new/.git (config: core.fsmonitor)" in said[2], said
        assert "a/b/c/x/y/z/.git (config: core.fsmonitor)" in said[3], said
        assert "d2/r/.git (config: core.fsmonitor)" in said[4], said
        assert "CapEff:\t0000000000000000" in said[5], said[5]
        if who == "root":
            assert "CapBnd:\t0000000000000000" in said[5], said[5]
        assert "clock-kept" in said[5], said[5]
        for where in ("d0", "d1/new", "a/b/c/x/y/z", "d2/r"):
            _user_git(w, w.repo / where, "status")
        assert sorted(p.name for p in marks.iterdir()) == []


POISON = "[core]\n\tfsmonitor = touch {mark}; false\n"


@pytest.mark.parametrize("who", WHO)
def test_a_headless_common_dir_and_a_git_dir_in_the_users_git_run_nothing(who: str) -> None:
    """A worktree-style `sub/.git` whose common dir has no HEAD; a git dir the model made
    inside the workspace's own `.git`, reached by a `.git` file (the `write` tool alone)."""
    with world({"README.md": "# project\n"}) as w:
        marks = {name: w.root / f"mark-{name}" for name in ("x", "evil")}
        evil = {
            ".git/evil/HEAD": "ref: refs/heads/main\n",
            ".git/evil/objects/info/keep": "",
            ".git/evil/refs/heads/keep": "",
            ".git/evil/config": POISON.format(mark=marks["evil"]),
            "w/.git": "gitdir: ../.git/evil\n",
        }
        writes = [("write", {"path": p, "content": c}) for p, c in evil.items()]
        _, stderr = _session(
            w, who,
            [f"git init -q --bare x && printf '{POISON.format(mark=marks['x'])}' > x/config"
             " && rm x/HEAD && mkdir -p sub/.git && echo 'ref: refs/heads/main' > sub/.git/HEAD"
             " && echo ../../x > sub/.git/commondir", *writes],
        )  # fmt: skip
        for sub in ("sub", "w"):
            _user_git(w, w.repo / sub, "status")
        assert not marks["x"].exists() and not marks["evil"].exists(), stderr
        assert not (w.repo / "sub/.git/commondir").exists(), stderr
        assert not os.path.lexists(w.repo / "w/.git"), stderr


@pytest.mark.parametrize("who", WHO)
def test_odd_names_are_said_escaped_and_end_the_session(who: str) -> None:
    """A repository under a non-UTF-8 name (bash) and a bare one named with terminal escapes
    and a forged line (the `write` tool: said on stderr at the session's end)."""
    with world({"README.md": "# project\n"}) as w:
        bad = "$'bad\\377'"
        odd = "\x1b]0;PWNED\x07\x1b[2J\nsubagent: all clean\x1b[8m"
        bare = {"HEAD": "ref: refs/heads/main\n", "objects/k": "", "refs/heads/k": ""}
        bare["config"] = "[core]\n\tpager = x\n"
        calls: list[Any] = [
            f"mkdir {bad} && git init -q {bad}/zz && git -C {bad}/zz config core.pager x"
        ]
        calls += [("write", {"path": f"{odd}/{p}", "content": c}) for p, c in bare.items()]
        results, stderr = _session(w, who, calls)
        assert "bad\\xff/zz/.git (config: core.pager)" in results[0]["content"], results
        assert "\x1b" not in stderr and "\x07" not in stderr, stderr
        assert "\nsubagent: all clean" not in stderr, stderr
        assert "\\x1b]0;PWNED\\x07\\x1b[2J\\nsubagent: all clean\\x1b[8m (config" in stderr


@pytest.mark.parametrize("who", WHO)
def test_a_cut_walk_is_said_as_cut_not_defused(who: str) -> None:
    """A 140-level chain cuts the walk: a shallow repository beside it is still defused, and
    the end of the session says the walk was cut, not that what lies below was defused."""
    with world({"README.md": "# project\n"}) as w:
        results, stderr = _session(
            w, who,
            ["mkdir -p $(printf 'd/%.0s' $(seq 140)) && git init -q a/zz"
             " && git -C a/zz config core.pager x"],
        )  # fmt: skip
        text = results[0]["content"]
        assert "a/zz/.git (config: core.pager)" in text, text
        assert "NOT checked or defused" in text and "(too deep)" in text, text
        assert _user_git(w, w.repo / "a/zz", "config", "core.pager").returncode != 0
        assert "cut at d/d/" in stderr and "defused (config keys" not in stderr, stderr
