"""What an isolated run's model writes is never trusted by the launcher's git (issue 28).

Each test is one hole of issue 28, run as an unprivileged user, and shows what must keep
working beside it: the run's change still arrives as its branch.

- #3: the run's repository config names an fsmonitor, hooks and a filter, or its `.git`
  is replaced by a gitdir file to a repository that does: the launcher's git at the end
  runs none of them.
- #4: an earlier ordinary run planted hooks and an fsmonitor in the user's repository:
  the next isolated run's set-up and finish run none of them.
- #5: a run rewrites a loose object of the user's `main`: refused; the user's history is
  unchanged and the run's change is reported as what arrived.
- #6: in a batch, a task moves its siblings' branches and makes fake result branches: it
  cannot; three tasks leave exactly their three branches.

#3 and #4 write with `sandbox: off`, so they hold whatever the sandbox protects: what is
tested is the launcher's own git.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from launcher.tools.sandbox import mechanism_problem
from tests.e2e.isolation_support import (
    README,
    World,
    session_events,
    tool_results,
    worktree_event,
    world,
)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="setpriv and Landlock"),
]
needs_mechanism = pytest.mark.skipif(
    mechanism_problem() is not None, reason=f"no sandbox here: {mechanism_problem()}"
)

HOOKS = ("post-checkout", "post-index-change", "reference-transaction", "pre-commit", "pre-auto-gc")
"""Hooks git could run on the launcher's checkout, staging, ref updates, commit and gc."""


def spawn(w: World, script: Path, *args: str) -> list[str]:
    """`spawn --json` of the shell agent on the world's repository."""
    base = ["spawn", "--json", "--config-dir", str(w.config), "--workspace", str(w.repo)]
    return [*base, "--model", f"scripted:{script}", *args, "shell", "go"]


def plant_hooks(git_path: str, marks: Path) -> str:
    """A shell command writing every hook of HOOKS into `$(git rev-parse --git-path hooks)`
    (or `git_path`), each leaving a marker named after it."""
    return (
        f"d={git_path}; mkdir -p $d; for h in {' '.join(HOOKS)}; do "
        f"printf '#!/bin/sh\\ntouch {marks}/hook-%s\\n' $h > $d/$h; chmod +x $d/$h; done"
    )


def ran(marks: Path) -> list[str]:
    return sorted(p.name for p in marks.iterdir())


@pytest.mark.parametrize("how", ["config", "gitdir"])
def test_the_runs_fsmonitor_hooks_and_filters_never_run_in_the_launchers_git(how: str) -> None:
    with world() as w:
        marks = w.root / "marks"
        marks.mkdir()
        evil = w.root / "evil"
        if how == "config":  # the repository the run works in
            commands = [
                f"git config core.fsmonitor 'touch {marks}/fsmonitor; false'",
                plant_hooks("$(git rev-parse --git-path hooks)", marks),
                "printf '* filter=evil diff=evil\\n' > .gitattributes && "
                f"git config filter.evil.clean 'touch {marks}/filter; cat' && "
                f"git config filter.evil.process 'touch {marks}/filter-process' && "
                f"git config diff.evil.textconv 'touch {marks}/textconv; cat'",
            ]
        else:  # the run's .git becomes a gitdir file to a repository of its making
            commands = [
                f"git init -q {evil} && git -C {evil} config core.fsmonitor "
                f"'touch {marks}/fsmonitor; false' && git -C {evil} config filter.evil.clean "
                f"'touch {marks}/filter; cat' && printf '* filter=evil\\n' > .gitattributes",
                plant_hooks(f"{evil}/.git/hooks", marks),
                f"rm -rf .git && printf 'gitdir: {evil}/.git\\n' > .git",
            ]
        commands.append("echo changed by the run > README.md")
        script = w.script("plant", commands)

        run = w.run(*spawn(w, script, "--isolation", "worktree", "--sandbox", "off"))
        end = worktree_event(run)

        planted = tool_results(run)
        assert all(not r["is_error"] for r in planted), planted  # each plant was in place
        assert ran(marks) == []
        assert end["changed"] is True and "README.md" in end["diffstat"], end
        # The change arrived as its branch, unfiltered: the run's filter never ran on it.
        assert w.git("show", f"{end['branch']}:README.md") == "changed by the run\n"
        if how == "gitdir":
            assert "replaced its repository's .git" in end["error"], end
            assert w.git("rev-parse", f"{end['branch']}^").strip() == end["base"]
        else:
            assert end["error"] is None, end
        assert (w.repo / "README.md").read_text() == README
        assert w.git("status", "--porcelain") == ""


def test_hooks_planted_in_the_users_repository_do_not_run_in_the_next_isolated_run() -> None:
    with world() as w:
        marks = w.root / "marks"
        marks.mkdir()
        plant = w.script(
            "plant",
            [
                plant_hooks(".git/hooks", marks),
                f"git config core.fsmonitor 'touch {marks}/fsmonitor; false'",
            ],
        )
        first = w.run(*spawn(w, plant, "--sandbox", "off"))  # an ordinary run, unconfined
        assert first.returncode == 0, first.stderr
        assert all(not r["is_error"] for r in tool_results(first)), tool_results(first)
        assert (w.repo / ".git" / "hooks" / "post-checkout").exists()
        edit = w.script("edit", ["echo new > NEW.md"])

        end = worktree_event(w.run(*spawn(w, edit, "--isolation", "worktree")))

        assert ran(marks) == []
        assert end["changed"] is True and end["error"] is None, end
        assert w.git("show", f"{end['branch']}:NEW.md") == "new\n"
        assert w.branches() == [end["branch"]]


@needs_mechanism
def test_an_object_rewrite_cannot_change_the_users_history() -> None:
    with world() as w:
        blob = w.git("rev-parse", "main:README.md").strip()
        loose = w.repo / ".git" / "objects" / blob[:2] / blob[2:]
        before = hashlib.sha256(loose.read_bytes()).hexdigest()
        commands = [
            f"chmod u+w {loose} && printf forged > {loose}",  # the user's own object
            # The same name in the run's own store: it must not stand in for the user's.
            f"mkdir -p .git/objects/{blob[:2]} && printf forged > .git/objects/{blob[:2]}/"
            + blob[2:],
            "echo edited > README.md",
        ]
        script = w.script("rewrite", commands)

        run = w.run(*spawn(w, script, "--isolation", "worktree"))
        end = worktree_event(run)

        refused, forged, edited = tool_results(run)
        assert refused["is_error"] and not forged["is_error"] and not edited["is_error"]
        assert hashlib.sha256(loose.read_bytes()).hexdigest() == before
        assert w.git("show", "main:README.md") == README
        assert w.git("fsck", "--no-dangling").strip() == ""
        # The run's change is reported as what arrived in the user's repository.
        assert end["changed"] is True and end["error"] is None, end
        assert "README.md" in end["diffstat"] and "1 file changed" in end["diffstat"]
        assert w.git("show", f"{end['branch']}:README.md") == "edited\n"
        assert w.git("diff", "--stat", end["base"], end["branch"]).rstrip() == end["diffstat"]


@needs_mechanism
def test_a_batch_task_cannot_move_or_forge_its_siblings_branches() -> None:
    with world() as w:
        repo = w.repo
        attack = [
            # Move every result branch there is (the two tasks before this one) to main.
            f"for r in $(git -C {repo} for-each-ref --format='%(refname)' refs/heads/subagent/);"
            f' do git -C {repo} update-ref "$r" main || exit 1; done; test -n "$r"',
            f"git -C {repo} branch subagent/fake-000000 main",
            f"git -C {repo} update-ref refs/heads/subagent/forged-111111 main",
            f"for d in {w.state}/worktrees/*/; do echo forged > $d/README.md || exit 1; done",
            "git branch subagent/own-222222",  # in its own repository: never fetched
            "echo attacker > ATTACK.md",
        ]
        scripts = {
            "t1": w.script("t1", ["echo t1 was here > README.md"]),
            "t2": w.script("t2", ["echo t2 was here > README.md"]),
            "ta": w.script("ta", attack),
        }
        tasks = w.root / "tasks.jsonl"
        tasks.write_text(
            "".join(
                json.dumps({"id": i, "prompt": "go", "agent": "shell", "model": f"scripted:{s}"})
                + "\n"
                for i, s in scripts.items()
            )
        )
        out = w.root / "results.jsonl"

        run = w.run(
            "batch", str(tasks), "--config-dir", str(w.config), "--workspace", str(repo),
            "--out", str(out), "--jobs", "1", "--isolation", "worktree",
        )  # fmt: skip

        assert run.returncode == 0, run.stderr
        rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
        attempts = [e for e in session_events(w, rows["ta"]) if e["type"] == "tool_result"]
        assert [r["is_error"] for r in attempts] == [True] * 4 + [False] * 2, attempts
        trees = {i: rows[i]["worktree"] for i in scripts}
        assert all(t["changed"] and t["error"] is None for t in trees.values()), trees
        # Exactly the three tasks' branches, each holding its own task's result.
        assert w.branches() == sorted(t["branch"] for t in trees.values())
        assert w.git("show", f"{trees['t1']['branch']}:README.md") == "t1 was here\n"
        assert w.git("show", f"{trees['t2']['branch']}:README.md") == "t2 was here\n"
        assert w.git("show", f"{trees['ta']['branch']}:ATTACK.md") == "attacker\n"
        assert (Path(trees["t1"]["path"]) / "README.md").read_text() == "t1 was here\n"
        assert w.git("show", "main:README.md") == README
