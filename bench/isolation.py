"""Benchmark: an isolated run's git set-up and finish (issue 28.6), on a 10 000-file repository.

Ours: `create_worktree` (a new repository borrowing the user's objects, its checkout) and
`finish_worktree` (staging through the launcher's own git directory, a commit, the fetch
into the user's repository, the diff stat there), through launcher/worktree.py. The
baseline is what the launcher did before, as it ran git: `git worktree add -b BRANCH PATH
HEAD` (after its three `rev-parse`s), then `git add --all`, `rev-parse HEAD` and `diff
--cached --stat BASE` in the worktree. Both runs change the same two files in between (one
edited, one new). Pairs are interleaved (the order turns each pair); the figure is the
median of the per-pair ratios. Clean-up is not timed. Goal <= 1.5.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from _util import Result, Size, bench_main, median, pair_ratios, sized, spread, state_dir

from launcher.worktree import create_worktree, finish_worktree

FILES = 10_000
PER_DIRECTORY = 100
GOAL = 1.5
GIT_LIMIT_S = 300.0
"""A git call on 10 000 files takes seconds at most; this only bounds a hung one."""
IDENTITY = ("-c", "user.name=bench", "-c", "user.email=bench@example.invalid")
TODAYS_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
"""The environment the launcher gave git before issue 28 (on top of its own)."""


def git(cwd: Path, *args: str) -> str:
    """Plain git, as the launcher ran it before (the user's config, hooks and all)."""
    done = subprocess.run(
        ["git", *IDENTITY, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=GIT_LIMIT_S,
        env={**os.environ, **TODAYS_ENV},
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def make_repository(root: Path, files: int) -> Path:
    """A repository of `files` small files in directories of PER_DIRECTORY, one commit."""
    repo = root / "project"
    for i in range(files):
        path = repo / f"d{i // PER_DIRECTORY:03d}" / f"f{i:05d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"file {i}\n" + "x" * (i % 200) + "\n")
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", "files")
    return repo


def change(workspace: Path) -> None:
    """What the run does: one file edited, one made."""
    (workspace / "d000" / "f00000.txt").write_text("edited by the run\n")
    (workspace / "NEW.md").write_text("made by the run\n")


def todays(repo: Path, home: Path, n: int) -> tuple[float, float]:
    """(set-up, finish) seconds of the launcher before issue 28; cleaned up after."""
    path, branch = home / f"wt-{n}", f"subagent/bench-{n}"
    start = time.perf_counter()
    top = git(repo, "rev-parse", "--show-toplevel").strip()
    git(Path(top), "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    base = git(Path(top), "rev-parse", "HEAD").strip()
    git(Path(top), "worktree", "add", "--quiet", "-b", branch, str(path), base)
    set_up = time.perf_counter() - start
    change(path)
    start = time.perf_counter()
    git(path, "add", "--all")
    git(path, "rev-parse", "HEAD")
    stat = git(path, "diff", "--cached", "--stat", base)
    finish = time.perf_counter() - start
    assert "2 files changed" in stat, stat
    git(repo, "worktree", "remove", "--force", str(path))
    git(repo, "branch", "-D", branch)
    return set_up, finish


def ours(repo: Path, home: Path) -> tuple[float, float]:
    """(set-up, finish) seconds of launcher/worktree.py; cleaned up after."""
    start = time.perf_counter()
    tree = create_worktree(repo, label="bench", home=home)
    set_up = time.perf_counter() - start
    change(tree.workspace)
    start = time.perf_counter()
    end = finish_worktree(tree)
    finish = time.perf_counter() - start
    assert end.error is None and "2 files changed" in end.diffstat, end
    shutil.rmtree(tree.path)
    git(repo, "branch", "-D", tree.branch)
    return set_up, finish


def measure(root: Path, *, files: int, pairs: int) -> list[Result]:
    """Interleaved pairs on one repository of `files` files; the ratios as Results."""
    repo = make_repository(root, files)
    home = root / "home"
    home.mkdir()
    ours(repo, home), todays(repo, home, 0)  # warm the page cache and git's own start
    load_before = os.getloadavg()
    new: list[tuple[float, float]] = []
    old: list[tuple[float, float]] = []
    for n in range(1, pairs + 1):
        if n % 2:
            new.append(ours(repo, home))
            old.append(todays(repo, home, n))
        else:
            old.append(todays(repo, home, n))
            new.append(ours(repo, home))
    load_after = os.getloadavg()
    total = pair_ratios([sum(a) for a in new], [sum(b) for b in old])
    set_up = pair_ratios([a[0] for a in new], [b[0] for b in old])
    finish = pair_ratios([a[1] for a in new], [b[1] for b in old])
    load = f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after"
    detail = (
        f"ours {spread([sum(a) for a in new])}, before {spread([sum(b) for b in old])}; "
        f"{pairs} interleaved pairs, {files} files; {load}"
    )
    return [
        Result(
            "isolation", "set-up + finish: own repository ÷ worktree", median(total), GOAL, detail
        ),
        Result(
            "isolation",
            "set-up alone ÷ worktree add",
            median(set_up),
            None,
            f"ours {spread([a[0] for a in new])}, before {spread([b[0] for b in old])}",
        ),
        Result(
            "isolation",
            "finish alone ÷ add --all",
            median(finish),
            None,
            f"ours {spread([a[1] for a in new])}, before {spread([b[1] for b in old])}",
        ),
    ]


def run(size: Size = "full") -> list[Result]:
    if shutil.which("git") is None:
        return [Result("isolation", "skipped: git is not installed", 0.0)]
    with state_dir() as root:
        files, pairs = sized(size, (FILES, 9), (FILES, 3), (200, 1))
        return measure(root, files=files, pairs=pairs)


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
