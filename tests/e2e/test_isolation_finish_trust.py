"""An isolated run's finish reads nothing the run wrote but its work tree and its own
commits and objects; set-up takes only a repository git itself confirms.

Each test plants what a model may write in its own repository (`--sandbox off`: what is
tested is the launcher's own reading, whatever the sandbox protects), then shows what must
keep working beside it: the run's work-tree change still arrives as its branch.

- the run's `objects/info/alternates` (or symlinked loose objects) names another repository
  the user can read: none of its objects reach the user's repository;
- a FIFO or `/dev/zero` as the files the finish would read: the finish still ends;
- the run's commit is malformed and fsck is switched off in config: the fetch refuses it;
- the workspace's sub-directory is a symlink in HEAD: the run's workspace would be outside
  its repository, so the run is refused (exit 2);
- a `.git` file (or a `.git` directory with a `commondir`) names another repository that
  does not name it back: refused (exit 2), nothing of that repository is checked out.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.isolation_support import World, tool_results, worktree_event, world
from tests.worktree_support import make_repo

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="setpriv"),
]

SECRET = "top secret\n"


def spawn(w: World, script: Path, workspace: Path | None = None) -> list[str]:
    """`spawn --json --isolation worktree --sandbox off` of the shell agent."""
    return [
        "spawn", "--json", "--config-dir", str(w.config),
        "--workspace", str(workspace or w.repo), "--model", f"scripted:{script}",
        "--isolation", "worktree", "--sandbox", "off", "shell", "go",
    ]  # fmt: skip


def has_object(w: World, oid: str) -> bool:
    """Whether the user's repository holds `oid` (in its own store)."""
    done = subprocess.run(
        ["git", "-c", "safe.directory=*", "cat-file", "-e", oid],
        cwd=w.repo,
        capture_output=True,
        timeout=60,
    )
    return done.returncode == 0


def secret_repo(w: World) -> tuple[Path, str, str]:
    """(top, commit, blob) of a repository the user can read and the run was never given."""
    top = make_repo(w.root / "secret", {"SECRET.md": SECRET})
    commit = w.git("rev-parse", "HEAD", cwd=top).strip()
    blob = w.git("rev-parse", "HEAD:SECRET.md", cwd=top).strip()
    return top, commit, blob


def loose_links(secret: Path, oids: list[str]) -> str:
    """A shell command linking each of `oids` into the run's store from `secret`'s."""
    return " && ".join(
        f"mkdir -p .git/objects/{o[:2]} && ln -s {secret}/.git/objects/{o[:2]}/{o[2:]} "
        f".git/objects/{o[:2]}/{o[2:]}"
        for o in oids
    )


@pytest.mark.parametrize("how", ["alternates", "symlinks"])
def test_objects_of_a_repository_the_run_names_never_reach_the_users(how: str) -> None:
    with world() as w:
        secret, commit, blob = secret_repo(w)
        tree = w.git("rev-parse", "HEAD^{tree}", cwd=secret).strip()
        if how == "alternates":
            plant = f"echo {secret}/.git/objects >> .git/objects/info/alternates"
        else:
            plant = loose_links(secret, [commit, tree, blob])
        # The run's branch moves to the secret commit, which its store now seems to hold.
        commands = [plant, f"git update-ref HEAD {commit}", "echo new > NEW.md"]
        script = w.script("borrow", commands)

        run = w.run(*spawn(w, script))
        end = worktree_event(run)

        assert all(not r["is_error"] for r in tool_results(run)), tool_results(run)
        assert not has_object(w, blob) and not has_object(w, commit)
        # Delivered without it: the work tree's change on the run's base, and why.
        assert end["changed"] is True, end
        assert "commits were not taken" in (end["error"] or ""), end
        assert w.git("show", f"{end['branch']}:NEW.md") == "new\n"
        assert w.git("rev-parse", f"{end['branch']}^").strip() == end["base"]
        assert w.git("fsck", "--no-dangling").strip() == ""


@pytest.mark.parametrize("how", ["fifo", "devzero"])
def test_a_fifo_or_dev_zero_in_the_runs_repository_does_not_hold_the_finish(how: str) -> None:
    with world() as w:
        files = [
            ".git/$(git symbolic-ref HEAD)",
            ".git/objects/info/alternates",
            ".git/packed-refs",
            ".git/objects/info/commit-graph",
        ]
        make = "mkfifo" if how == "fifo" else "ln -s /dev/zero"
        # Resolved first: once HEAD's own ref is a FIFO, git in the run would wait too.
        commands = [
            "mkdir -p .git/objects/info && "
            + " && ".join(f"f={f} && rm -f $f && {make} $f" for f in files),
            "echo new > NEW.md",
        ]
        script = w.script("hold", commands)

        run = w.run(*spawn(w, script))  # bounded: RUN_LIMIT_S
        end = worktree_event(run)

        assert all(not r["is_error"] for r in tool_results(run)), tool_results(run)
        assert end["changed"] is True, end
        assert "commits were not taken" in (end["error"] or ""), end
        assert w.git("show", f"{end['branch']}:NEW.md") == "new\n"


def test_a_malformed_commit_is_refused_though_config_switches_fsck_off() -> None:
    with world() as w:
        # The user's repository itself says no fsck (as a planted config would): the pin wins.
        w.git("config", "fetch.fsckObjects", "false")
        w.git("config", "transfer.fsckObjects", "false")
        bad = (
            "t=$(git rev-parse 'HEAD^{tree}') && p=$(git rev-parse HEAD) && "
            "c=$(printf 'tree %s\\nparent %s\\nauthor bad <no-end 1 +0000\\n"
            "committer bad <no-end 1 +0000\\n\\nbad\\n' $t $p"
            " | git hash-object -t commit -w --literally --stdin) && "
            "git update-ref HEAD $c && echo $c > ../bad-commit"
        )
        commands = [
            "git config fetch.fsckObjects false && git config transfer.fsckObjects false",
            bad,
            "echo new > NEW.md",
        ]
        script = w.script("malformed", commands)

        run = w.run(*spawn(w, script))
        end = worktree_event(run)

        assert all(not r["is_error"] for r in tool_results(run)), tool_results(run)
        made = Path(end["path"]).parent / "bad-commit"
        bad_commit = made.read_text().strip() if made.exists() else ""
        assert bad_commit, "the run made its malformed commit"
        assert not has_object(w, bad_commit)
        assert end["changed"] is True and end["error"], end
        assert w.git("fsck", "--no-dangling").strip() == ""


def test_a_symlinked_sub_directory_is_refused_as_the_runs_workspace() -> None:
    with world() as w:
        home = w.root / "home"
        # HEAD has `sub` as a link to the user's HOME; the user's checkout has a directory.
        (w.repo / "sub").symlink_to(home)
        w.git("add", "sub")
        w.git("commit", "--quiet", "-m", "a link")
        (w.repo / "sub").unlink()
        (w.repo / "sub" / "inner").mkdir(parents=True)
        script = w.script("escape", ["echo pwned > PWNED.md"])

        for where in (w.repo / "sub", w.repo / "sub" / "inner"):
            run = w.run(*spawn(w, script, where))

            assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
            assert "sub" in run.stderr and "symlink" in run.stderr, run.stderr
            assert "Traceback" not in run.stderr
        assert not (home / "PWNED.md").exists()
        made = w.state / "worktrees"
        assert not made.exists() or list(made.iterdir()) == [], list(made.iterdir())
        assert w.branches() == []


@pytest.mark.parametrize("how", ["gitdir-file", "commondir"])
def test_a_git_dir_the_repository_does_not_name_back_is_refused(how: str) -> None:
    with world() as w:
        secret, _, _ = secret_repo(w)
        planted = w.root / "workspace"
        planted.mkdir()
        if how == "gitdir-file":  # as a model writes in a plain workspace
            (planted / ".git").write_text(f"gitdir: {secret}/.git\n")
        else:  # a git dir of its own that borrows the other's refs and objects
            dot_git = planted / ".git"
            (dot_git / "objects").mkdir(parents=True)
            (dot_git / "refs").mkdir()
            (dot_git / "HEAD").write_text("ref: refs/heads/main\n")
            (dot_git / "commondir").write_text(f"{secret}/.git\n")
        script = w.script("look", ["cat SECRET.md > ../seen || true", "echo new > NEW.md"])

        run = w.run(*spawn(w, script, planted))

        assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
        assert "Traceback" not in run.stderr
        assert str(planted) in run.stderr, run.stderr
        assert not list(w.root.rglob("seen"))
        assert w.git("branch", "--list", "subagent/*", cwd=secret).strip() == ""


def test_a_nested_isolated_child_does_not_take_its_parents_run_repository_as_the_users() -> None:
    with world() as w:
        secret, commit, _ = secret_repo(w)
        child = w.root / "child.json"
        read = {"tool": "read", "args": {"path": "SECRET.md"}}
        child.write_text(json.dumps({"steps": [{"call": [read]}, {"say": "child done"}]}))
        (w.config / "agents" / "child.md").write_text(
            f"---\nname: child\nmodel: scripted:{child}\ntools: [read]\nextensions: false\n"
            "isolation: worktree\n---\nRead.\n"
        )
        (w.config / "agents" / "parent.md").write_text(
            "---\nname: parent\ntools: [bash, subagent]\nallowed_subagents: [child]\n"
            "extensions: false\nsandbox: off\n---\nDelegate.\n"
        )
        # The parent's own repository (which it may write) borrows the secret one, and its
        # branch names the secret commit: a child's set-up must not take that as the user's.
        plant = (
            f"echo {secret}/.git/objects >> .git/objects/info/alternates && "
            f"git update-ref HEAD {commit}"
        )
        steps = [
            {"call": [{"tool": "bash", "args": {"command": plant}}]},
            {"call": [{"tool": "subagent", "args": {"agent": "child", "prompt": "go"}}]},
            {"say": "parent done"},
        ]
        parent = w.root / "parent.json"
        parent.write_text(json.dumps({"steps": steps}))

        run = w.run(
            "spawn", "--json", "--config-dir", str(w.config), "--workspace", str(w.repo),
            "--model", f"scripted:{parent}", "--isolation", "worktree", "parent", "go",
        )  # fmt: skip

        assert run.returncode == 0, run.stderr
        planted, delegated = tool_results(run)
        assert not planted["is_error"], planted
        assert delegated["is_error"] and "isolated run's repository" in delegated["content"]
        leaked = [
            p
            for p in w.state.rglob("*")
            if p.is_file() and SECRET.strip().encode() in p.read_bytes()
        ]
        assert leaked == []


def test_a_branch_linked_to_another_repository_is_refused_at_set_up() -> None:
    with world() as w:
        secret, _, _ = secret_repo(w)
        # What an earlier ordinary run could leave in the user's repository: its objects
        # borrowing another repository's, and HEAD's branch a link to that one's branch.
        (w.repo / ".git" / "objects" / "info").mkdir(exist_ok=True)
        (w.repo / ".git" / "objects" / "info" / "alternates").write_text(f"{secret}/.git/objects\n")
        main = w.repo / ".git" / "refs" / "heads" / "main"
        main.unlink()
        main.symlink_to(secret / ".git" / "refs" / "heads" / "main")
        script = w.script("look", ["cat SECRET.md > ../seen || true", "echo new > NEW.md"])

        run = w.run(*spawn(w, script))

        assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
        assert "symbolic link" in run.stderr and str(main) in run.stderr, run.stderr
        assert "Traceback" not in run.stderr
        assert not list(w.root.rglob("seen"))
