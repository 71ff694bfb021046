"""Every git command the launcher runs, hardened: git executes nothing a repository names.

A repository's own config, hooks and attributes may have been written by a model (an
earlier run's, or this run's in its isolated repository), and the launcher runs git
unconfined. So each call switches off, with git's own `-c` switches and environment,
everything in git that runs a program: hooks, fsmonitor, pagers and editors, signing,
credential helpers and askpass, every transport but local files (ssh, `ext::`, remote
helpers, proxies), the alternate-refs command, automatic gc and maintenance, replace refs.
System and global config are not read (nor is `safe.directory` ever widened), and the
process gets a small environment of its own: nothing `GIT_*` from the caller (which could
name another repository, config or program) and none of the launcher's secrets. Filter,
diff and merge drivers run only when a config names them: callers never run git where an
untrusted config could (isolation uses a git directory of its own, see worktree.py), and
diffs pass `--no-ext-diff --no-textconv` (DIFF_FLAGS).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from launcher.errors import RunError, UsageError
from launcher.exec_path import absolute_path

GIT_TIMEOUT_S = 120.0
"""A git call here is a local checkout, status or fetch: minutes mean a hung filesystem."""

HARDENING: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"),  # no hook of any repository runs
    ("core.fsmonitor", "false"),
    ("core.alternateRefsCommand", ""),  # empty: nothing is executed for an alternate's refs
    ("core.askPass", ""),
    ("credential.helper", ""),  # an empty helper clears every one configured before it
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.pager", "cat"),
    ("commit.gpgSign", "false"),  # gpg.program would run
    ("tag.gpgSign", "false"),
    ("protocol.allow", "never"),  # ssh (core.sshCommand), git:// (core.gitProxy), ext::,
    ("protocol.file.allow", "always"),  # http (credentials) and remote helpers: only files
    ("transfer.fsckObjects", "true"),  # git checks every object it receives, and the
    ("fetch.fsckObjects", "true"),  # more specific keys, which outrank it in a config
    ("receive.fsckObjects", "true"),  # file, are pinned too
    ("core.useReplaceRefs", "false"),
    ("submodule.recurse", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("color.ui", "false"),
)
"""`-c` pins on every call: the command line outranks every config file, includes too."""
ENVIRONMENT: dict[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_SYSTEM": "/dev/null",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",  # no credential prompt can stall a run
    "GIT_PAGER": "cat",
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_OPTIONAL_LOCKS": "0",  # a read never rewrites the user's index
    "LC_ALL": "C",  # messages in one language, for the user to read
}
"""Set on every call, after the caller's `GIT_*` variables were dropped."""
KEPT_VARIABLES = ("HOME", "XDG_CONFIG_HOME", "TMPDIR", "USER", "LOGNAME")
"""What git may still see of the launcher's environment (PATH is rebuilt from absolute
entries): the user's own ignore file is found through HOME and XDG_CONFIG_HOME."""
DIFF_FLAGS = ("--no-ext-diff", "--no-textconv", "--no-color")
"""For every diff: no external diff program, no textconv filter, plain text."""


def git_argv(args: Sequence[str]) -> list[str]:
    """The full argv of `git ARGS`, hardened (git resolved on the absolute PATH entries)."""
    pins = [item for key, value in HARDENING for item in ("-c", f"{key}={value}")]
    return [_git_program(), "--no-pager", "--no-replace-objects", *pins, *args]


def git_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a git call: a few plain variables, the pins, then `extra`."""
    env = {k: os.environ[k] for k in KEPT_VARIABLES if k in os.environ}
    env["PATH"] = _safe_path()
    env.update(ENVIRONMENT)
    env.update(extra or {})
    return env


def run_git(
    *args: str,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = GIT_TIMEOUT_S,
) -> str:
    """Run hardened `git ARGS` in `cwd`; its stdout, or RunError with git's own message.

    `env` adds variables (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, an identity) on top of
    the hardened environment. A missing git is a UsageError.
    """
    try:
        done = subprocess.run(
            git_argv(args),
            cwd=cwd,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            env=git_environment(env),
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError as exc:
        raise UsageError(f"git is needed here, and it is not installed ({exc})") from exc
    except subprocess.TimeoutExpired as exc:
        raise RunError(f"git {args[0]} in {cwd} did not finish in {timeout:.0f} s") from exc
    if done.returncode != 0:
        reason = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise RunError(f"git {args[0]} in {cwd}: {reason[-1] if reason else 'failed'}")
    return done.stdout


def _safe_path() -> str:
    """PATH without relative entries: a `git` in the directory a call runs in is never it."""
    return absolute_path(os.environ.get("PATH", os.defpath))


@functools.cache
def _git_program() -> str:
    found = shutil.which("git", path=_safe_path())
    if found is None:
        raise UsageError("git is needed here, and it is not installed (no git on PATH)")
    return found
