"""Git repositories the model made inside the workspace, defused before the user's git meets
them: a nested `sub/.git`, a bare `sub2/` (HEAD, objects, refs), a linked worktree's git
dir, a `.git` file or link pointing at one. The user's shell prompt running `git status`
there would otherwise run what the model put in their config (fsmonitor, pager, drivers,
`include.path`) or hooks.

The workspace is walked (no link followed, the workspace's own `.git` skipped, within a
budget) when the session starts and after every command: a git dir that was not there at
the start, or whose config or hooks changed since, keeps only the config keys in
`SAFE_KEYS` (rewritten at directory fds, never through a link) and no hooks but samples.
A walk cut short by the budget says so: the caller refuses further commands.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from launcher.trust.snapshot import _DIR_FLAGS, _open_dir, remove_tree

MAX_WALK_ENTRIES = 500_000
"""Directory entries looked at per walk; past this the walk is cut short (refuse-safe)."""
MAX_WALK_DEPTH = 128
"""Directory levels looked at; deeper is cut short too."""
MAX_CONFIG_BYTES = 1 << 20
"""A config larger than this is not read: it is replaced by one keeping nothing."""
MAX_POINTER_BYTES = 4096
"""A `.git` file or `commondir` longer than this is not git's."""
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
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass
class Scan:
    """What one walk found: git dirs and their fingerprints, `.git` pointers, and whether
    the budget cut it short (`cut`: where)."""

    gitdirs: dict[str, bytes] = field(default_factory=dict)
    pointers: dict[str, bytes] = field(default_factory=dict)
    cut: str | None = None


def _read_at(parent: int, name: str, cap: int) -> bytes | None:
    """A regular file's bytes (None: missing, not regular, or longer than `cap`)."""
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=parent)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = b""
        while chunk := os.read(fd, cap + 1 - len(data)):
            data += chunk
            if len(data) > cap:
                return None
        return data
    except OSError:
        return None
    finally:
        os.close(fd)


def _fingerprint(gitdir: int) -> bytes:
    """What decides what git runs in a git dir: its config, pointers and hooks."""
    digest = hashlib.sha256()
    for name in ("config", "config.worktree", "commondir"):
        with contextlib.suppress(OSError):
            st = os.lstat(name, dir_fd=gitdir)
            digest.update(f"{name}:{st.st_mode}:{st.st_size}:".encode())
            digest.update(_read_at(gitdir, name, MAX_CONFIG_BYTES) or b"\x00")
    with contextlib.suppress(OSError):
        st = os.lstat("hooks", dir_fd=gitdir)
        digest.update(f"hooks:{st.st_mode}:".encode())
        if stat.S_ISDIR(st.st_mode):
            hooks = os.open("hooks", _DIR_FLAGS, dir_fd=gitdir)
            try:
                for name in sorted(os.listdir(hooks)):
                    if not name.endswith(".sample"):
                        digest.update(name.encode() + b"\x00")
                        digest.update(_read_at(hooks, name, MAX_CONFIG_BYTES) or b"\x00")
            finally:
                os.close(hooks)
    return digest.digest()


def _is_gitdir(names: set[str]) -> bool:
    """What git's discovery takes for a git dir (HEAD, and objects and refs or a
    commondir that has them)."""
    return "HEAD" in names and ("commondir" in names or {"objects", "refs"} <= names)


def _pointer(parent: int, name: str, mode: int) -> bytes:
    """A `.git` entry that is not a directory, as a mark: its kind and what it says."""
    data = b""
    with contextlib.suppress(OSError):
        if stat.S_ISLNK(mode):
            data = os.fsencode(os.readlink(name, dir_fd=parent))
        elif stat.S_ISREG(mode):
            data = _read_at(parent, name, MAX_POINTER_BYTES) or b""
    return f"{mode:o}:".encode() + data


def scan(workspace: Path) -> Scan:
    """Every git dir and `.git` pointer in `workspace` (not its own `.git`)."""
    found = Scan()
    try:
        root = os.open(workspace, _DIR_FLAGS)
    except OSError:
        found.cut = "."
        return found
    seen = 0
    # The workspace's own `.git` is protected apart, but for its `modules/`: a submodule's
    # git dir made during the run is the model's like any other.
    stack: list[tuple[str, int]] = [(".git/modules", 1), (".", 0)]
    try:
        while stack:
            rel, depth = stack.pop()
            try:  # by name from the root, never through a link: few fds open at once
                fd = _open_dir(root, () if rel == "." else PurePosixPath(rel).parts)
            except (FileNotFoundError, NotADirectoryError):
                continue  # gone meanwhile (or no submodules)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    continue  # now a link: not followed, nor by the walk's parent
                found.cut = rel  # unreadable: cannot vouch for what is below
                return found
            try:
                names: list[str] = []
                with os.scandir(fd) as entries:  # the kind from the entry: no stat a file
                    for entry in entries:
                        names.append(entry.name)
                        child = entry.name if rel == "." else f"{rel}/{entry.name}"
                        if child == ".git":
                            continue  # the workspace's own: protected places, put back
                        if entry.is_dir(follow_symlinks=False):
                            stack.append((child, depth + 1))
                        elif entry.name == ".git":
                            mode = entry.stat(follow_symlinks=False).st_mode
                            found.pointers[child] = _pointer(fd, entry.name, mode)
                seen += len(names)
                if seen > MAX_WALK_ENTRIES or depth > MAX_WALK_DEPTH:
                    found.cut = rel
                    return found
                if _is_gitdir(set(names)):
                    found.gitdirs[rel] = _fingerprint(fd)
            finally:
                os.close(fd)
    finally:
        os.close(root)
    return found


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
    data = _read_at(gitdir, "config", MAX_CONFIG_BYTES) if stat.S_ISREG(st.st_mode) else None
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


def _within(workspace: Path, target: str) -> bool:
    """Whether `target` is in the workspace: walked there, and defused when new (its own
    `.git` is the user's, protected apart, and its `modules/` walked too)."""
    return Path(os.path.realpath(target)).is_relative_to(workspace)


def defuse_gitdir(workspace: Path, rel: str) -> list[str]:
    """Make git dir `rel` (below `workspace`) run nothing; what was removed or dropped."""
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
        common = _read_at(gitdir, "commondir", MAX_POINTER_BYTES)
        if common is not None or os.path.lexists(f"/proc/self/fd/{gitdir}/commondir"):
            target = os.path.join(workspace, rel, os.fsdecode(common or b"").strip())
            if common is None or not _within(workspace, target):
                _remove(gitdir, "commondir")
                said.append("commondir (outside the workspace)")
    finally:
        os.close(gitdir)
    return said


def defuse_pointer(workspace: Path, rel: str) -> bool:
    """Remove the `.git` file or link `rel` when it points outside the workspace (or is
    neither: a FIFO); True when removed."""
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
            data = _read_at(parent, parts[-1], MAX_POINTER_BYTES) or b""
            text = data.decode("utf-8", "replace").strip()
            target = os.path.join(base, text.removeprefix("gitdir:").strip()) if text else ""
        else:
            target = ""
        if target and _within(workspace, target):
            return False  # what it points at is walked, and defused when new
        return _remove(parent, parts[-1])
    finally:
        os.close(parent)


@dataclass
class NestedGuard:
    """The workspace's git dirs as the session found them; `check` defuses the others."""

    workspace: Path
    before: Scan = field(default_factory=Scan)
    cut: str | None = None

    @classmethod
    def start(cls, workspace: Path) -> NestedGuard:
        """Take the workspace's git dirs now (the user's: trusted, left alone)."""
        return cls.of(workspace, scan(Path(os.path.realpath(workspace))))

    @classmethod
    def of(cls, workspace: Path, before: Scan) -> NestedGuard:
        """Guard `workspace` against `before`, its git dirs as a first session found them."""
        return cls(Path(os.path.realpath(workspace)), before, before.cut)

    def _settle(self, rel: str) -> None:
        """Remember the defused git dir as it is now: checked again only once changed."""
        with contextlib.suppress(OSError):
            root = os.open(self.workspace, _DIR_FLAGS)
            try:
                fd = _open_dir(root, () if rel == "." else PurePosixPath(rel).parts)
            finally:
                os.close(root)
            try:
                self.before.gitdirs[rel] = _fingerprint(fd)
            finally:
                os.close(fd)

    def check(self) -> list[str]:
        """Defuse every git dir and `.git` pointer new since the start (or changed); what
        was done, one line each. A walk cut short is said, and `cut` set."""
        now = scan(self.workspace)
        said: list[str] = []
        for rel, mark in sorted(now.gitdirs.items()):
            if self.before.gitdirs.get(rel) == mark:
                continue
            try:
                done = defuse_gitdir(self.workspace, rel)
            except OSError as exc:
                said.append(f"{rel} (could not be defused: {exc.strerror})")
                continue
            if done:
                said.append(f"{rel} ({'; '.join(done)})")
            self._settle(rel)
        for rel, mark in sorted(now.pointers.items()):
            if self.before.pointers.get(rel) == mark:
                continue
            with contextlib.suppress(OSError):
                if defuse_pointer(self.workspace, rel):
                    said.append(f"{rel} (removed: not a pointer into the workspace)")
                else:
                    self.before.pointers[rel] = mark
        if now.cut is not None:
            self.cut = now.cut
            said.append(f"{now.cut} (the walk for git repositories stopped there: too large)")
        return said
