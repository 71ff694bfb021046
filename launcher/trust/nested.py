"""Git repositories the model made inside the workspace, defused before the user's git meets
them: a nested `sub/.git`, a bare `sub2/` (HEAD, objects, refs), a linked worktree's git
dir, a `.git` file or link pointing at one. The user's shell prompt running `git status`
there would otherwise run what the model put in their config (fsmonitor, pager, drivers,
`include.path`) or hooks.

The workspace is walked (no link followed, the workspace's own `.git` skipped, within a
budget) when the session starts and after every command, reusing the listing of each
directory unchanged since the last walk (`gitwalk.Walker`): a git dir that was not there at
the start, or whose config or hooks changed since, keeps only the config keys in
`SAFE_KEYS` (rewritten at directory fds, never through a link) and no hooks but samples.
A walk cut short (too deep, unreadable, over budget or time) says where: the caller refuses
further commands.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import subprocess
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from launcher.trust.gitwalk import (
    MAX_CONFIG_BYTES,
    MAX_POINTER_BYTES,
    Scan,
    Walker,
    fingerprint,
    read_at,
)
from launcher.trust.snapshot import _DIR_FLAGS, _open_dir, remove_tree

SAFE_KEYS: tuple[str, ...] = (
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "extensions.objectformat",
    "init.defaultbranch",
    "user.name",
    "user.email",
    "branch.*.remote",
    "branch.*.merge",
    "remote.*.url",
    "remote.*.fetch",
)
"""Config keys a defused repository keeps: none makes git run a program, read config from
elsewhere (include, includeIf, core.worktree) or move where it finds hooks. Its commits,
branches, log and remotes keep working. A remote URL of the `ext::`/`fd::` transports
(they run a command) is dropped too."""
_SAFE = [re.compile("^" + re.escape(k).replace(r"\*", r"[^\n]*") + "$") for k in SAFE_KEYS]


def _safe(key: str, value: str) -> bool:
    if not any(p.match(key) for p in _SAFE):
        return False
    return not (key.endswith(".url") and value.lstrip().lower().startswith(("ext::", "fd::")))


def _entries(data: bytes) -> list[tuple[str, str]] | None:
    """The config's (key, value) pairs as git reads them (includes not followed), or None
    for a config git cannot parse."""
    from launcher.gitcmd import git_argv, git_environment

    try:
        done = subprocess.run(
            git_argv(["config", "--no-includes", "--file", "-", "--list", "-z"]),
            input=data,
            capture_output=True,
            cwd="/",
            env=git_environment(),
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    pairs = []
    for item in done.stdout.split(b"\x00"):
        if item:
            key, _, value = item.decode("utf-8", "replace").partition("\n")
            pairs.append((key, value))
    return pairs


def _quote(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped.replace(chr(9), chr(92) + "t")}"'


def _render(pairs: list[tuple[str, str]]) -> bytes:
    lines: list[str] = []
    current = None
    for key, value in pairs:
        section, _, rest = key.partition(".")
        sub, _, name = rest.rpartition(".")
        header = f"[{section}]" if not sub else f"[{section} {_quote(sub)}]"
        if header != current:
            lines.append(header)
            current = header
        lines.append(f"\t{name} = {_quote(value)}")
    return ("\n".join(lines) + "\n").encode() if lines else b""


def _write_at(parent: int, name: str, data: bytes) -> None:
    """Replace `name` under `parent` by a new file of `data` (a link there is replaced,
    never followed)."""
    tmp = f".subagent-defusing-{secrets.token_hex(6)}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, 0o644, dir_fd=parent)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    try:
        os.rename(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
    except IsADirectoryError:
        remove_tree(parent, name)
        os.rename(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=parent)
        raise


def _defuse_config(gitdir: int) -> str | None:
    """Keep only the safe keys of `config`; what was dropped, or None (nothing to drop)."""
    try:
        st = os.lstat("config", dir_fd=gitdir)
    except FileNotFoundError:
        return None
    data = read_at(gitdir, "config", MAX_CONFIG_BYTES) if stat.S_ISREG(st.st_mode) else None
    pairs = _entries(data) if data is not None else None
    if pairs is None:
        _write_at(gitdir, "config", b"")
        return "config (not a plain file, unreadable or too large: emptied)"
    kept = [(k, v) for k, v in pairs if _safe(k, v)]
    if len(kept) == len(pairs):
        return None
    dropped = sorted({k for k, v in pairs if not _safe(k, v)})
    _write_at(gitdir, "config", _render(kept))
    return "config: " + ", ".join(dropped)


def _remove(parent: int, name: str) -> bool:
    try:
        os.lstat(name, dir_fd=parent)
        remove_tree(parent, name)
    except FileNotFoundError:
        return False
    return True


def _defuse_hooks(gitdir: int) -> list[str]:
    """Remove every hook but the samples (a `hooks` that is not a directory: all of it)."""
    try:
        st = os.lstat("hooks", dir_fd=gitdir)
    except FileNotFoundError:
        return []
    if not stat.S_ISDIR(st.st_mode):
        _remove(gitdir, "hooks")
        return ["hooks"]
    hooks = os.open("hooks", _DIR_FLAGS, dir_fd=gitdir)
    try:
        gone = []
        for name in sorted(os.listdir(hooks)):
            sample = name.endswith(".sample")
            if sample and stat.S_ISREG(os.lstat(name, dir_fd=hooks).st_mode):
                continue
            if _remove(hooks, name):
                gone.append(f"hooks/{name}")
        return gone
    finally:
        os.close(hooks)


def shown(name: str) -> str:
    """A path as said to the user: bytes that are not UTF-8 and control characters (escapes,
    newlines) written as backslash escapes, so a name cannot forge a line or drive the
    terminal."""
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _in_own_git(workspace: Path, target: str) -> bool:
    """Whether `target` is inside the workspace's own `.git` (not `.git` itself, nor its
    `modules/`, which is walked): no git dir of the user's is there but what git makes."""
    real = Path(os.path.realpath(target))
    own = workspace / ".git"
    return real.is_relative_to(own) and real != own and not real.is_relative_to(own / "modules")


def _linked_back(workspace: Path, target: str, pointer: str) -> bool:
    """Whether git dir `target` (a linked worktree's, in `.git/worktrees/`) names `pointer`
    as its worktree's `.git`: git's own layout, the back-link confirming it."""
    try:
        with open(os.path.join(target, "gitdir"), "rb") as file:
            back = file.read(MAX_POINTER_BYTES).strip()
    except OSError:
        return False
    real = Path(os.path.realpath(target))
    return real.parent == workspace / ".git" / "worktrees" and os.path.realpath(
        os.fsdecode(back)
    ) == os.path.realpath(pointer)


def _within(workspace: Path, target: str) -> bool:
    """Whether `target` is in the workspace: walked there, and defused when new (its own
    `.git` is the user's, protected apart, and its `modules/` walked too)."""
    return Path(os.path.realpath(target)).is_relative_to(workspace)


def defuse_gitdir(workspace: Path, rel: str, gitdirs: Collection[str] = ()) -> list[str]:
    """Make git dir `rel` (below `workspace`) run nothing; its `commondir` is kept only when
    it names one of `gitdirs` (seen by the walk, checked on its own) or the user's `.git`;
    what was removed or dropped."""
    parts = () if rel == "." else PurePosixPath(rel).parts
    said: list[str] = []
    root = os.open(workspace, _DIR_FLAGS)
    try:
        gitdir = _open_dir(root, parts)
    finally:
        os.close(root)
    try:
        config = _defuse_config(gitdir)
        if config:
            said.append(config)
        said += _defuse_hooks(gitdir)
        if _remove(gitdir, "config.worktree"):
            said.append("config.worktree")
        common = read_at(gitdir, "commondir", MAX_POINTER_BYTES)
        if common is not None or os.path.lexists(f"/proc/self/fd/{gitdir}/commondir"):
            target = os.path.join(workspace, rel, os.fsdecode(common or b"").strip())
            if common is None or not _within(workspace, target):
                _remove(gitdir, "commondir")
                said.append("commondir (outside the workspace)")
            elif _in_own_git(workspace, target):
                _remove(gitdir, "commondir")
                said.append("commondir (into the workspace's own .git)")
            else:
                real = Path(os.path.realpath(target)).relative_to(workspace).as_posix()
                if real not in gitdirs and real != ".git":
                    # Git reads a common dir's config and hooks without a HEAD there, but
                    # git never makes one: cut it off rather than rewrite what may be the
                    # user's own files (a `config`, a `hooks/` of their project).
                    _remove(gitdir, "commondir")
                    said.append(f"commondir (names no git repository: {shown(real)})")
    finally:
        os.close(gitdir)
    return said


def defuse_pointer(workspace: Path, rel: str) -> bool:
    """Remove the `.git` file or link `rel` when it points outside the workspace, or into
    its own `.git` (but at `.git` itself, its `modules/`, or a linked worktree's git dir
    whose back-link names `rel`), or is neither (a FIFO); True when removed."""
    parts = PurePosixPath(rel).parts
    root = os.open(workspace, _DIR_FLAGS)
    try:
        parent = _open_dir(root, parts[:-1])
    finally:
        os.close(root)
    try:
        st = os.lstat(parts[-1], dir_fd=parent)
        base = os.path.join(workspace, *parts[:-1])
        if stat.S_ISLNK(st.st_mode):
            target = os.path.join(base, os.readlink(parts[-1], dir_fd=parent))
        elif stat.S_ISREG(st.st_mode):
            data = read_at(parent, parts[-1], MAX_POINTER_BYTES) or b""
            text = data.decode("utf-8", "replace").strip()
            target = os.path.join(base, text.removeprefix("gitdir:").strip()) if text else ""
        else:
            target = ""
        if target and _within(workspace, target):
            pointer = os.path.join(workspace, rel)
            if not _in_own_git(workspace, target) or _linked_back(workspace, target, pointer):
                return False  # what it points at is walked, and defused when new
            # A git dir the model planted in the user's `.git` is never walked: cut it off.
        return _remove(parent, parts[-1])
    finally:
        os.close(parent)


@dataclass
class NestedGuard:
    """The workspace's git dirs as the session found them; `check` defuses the others."""

    workspace: Path
    before: Scan = field(default_factory=Scan)
    cut: str | None = None
    why: str = "too large"
    # This guard's own: what it reuses was seen by its own walks, so a change another
    # session (or the watchdog) made is still seen here, by its ctime.
    walker: Walker | None = field(default=None, repr=False, compare=False)

    @classmethod
    def start(cls, workspace: Path) -> NestedGuard:
        """Take the workspace's git dirs now (the user's: trusted, left alone)."""
        walker = Walker(Path(os.path.realpath(workspace)))
        guard = cls.of(workspace, walker.scan())
        guard.walker = walker
        return guard

    @classmethod
    def of(cls, workspace: Path, before: Scan) -> NestedGuard:
        """Guard `workspace` against `before`, its git dirs as a first session found them."""
        return cls(Path(os.path.realpath(workspace)), before, before.cut, before.why or "too large")

    def _settle(self, rel: str) -> None:
        """Remember the defused git dir as it is now: checked again only once changed."""
        with contextlib.suppress(OSError):
            root = os.open(self.workspace, _DIR_FLAGS)
            try:
                fd = _open_dir(root, () if rel == "." else PurePosixPath(rel).parts)
            finally:
                os.close(root)
            try:
                self.before.gitdirs[rel] = fingerprint(fd)
            finally:
                os.close(fd)

    def check(self) -> list[str]:
        """Defuse every git dir and `.git` pointer new since the start (or changed); what
        was done, one line each (names escaped). A walk cut short sets `cut` and `why`
        (said by `cut_line`); the rest of the workspace is still walked."""
        if self.walker is None:
            self.walker = Walker(self.workspace)
        now = self.walker.scan()
        said: list[str] = []
        for rel, mark in sorted(now.gitdirs.items()):
            if self.before.gitdirs.get(rel) == mark:
                continue
            try:
                done = defuse_gitdir(self.workspace, rel, now.gitdirs)
            except OSError as exc:
                said.append(f"{shown(rel)} (could not be defused: {exc.strerror})")
                continue
            if done:
                said.append(f"{shown(rel)} ({'; '.join(done)})")
            self._settle(rel)
        for rel, mark in sorted(now.pointers.items()):
            if self.before.pointers.get(rel) == mark:
                continue
            with contextlib.suppress(OSError):
                if defuse_pointer(self.workspace, rel):
                    said.append(f"{shown(rel)} (removed: not a pointer into the workspace)")
                else:
                    self.before.pointers[rel] = mark
        if now.cut is not None:
            self.cut, self.why = now.cut, now.why or "too large"
        return said

    def cut_line(self) -> str | None:
        """What is said of a walk cut short (None: never cut): where, and that nothing
        below was checked or defused."""
        if self.cut is None:
            return None
        return (
            f"the walk for git repositories was cut at {shown(self.cut)} ({self.why}): git "
            "repositories the model made there or beyond were NOT checked or defused"
        )
