"""Putting the protected places back: a copy taken when the session starts, compared and
restored after every shell command (its processes gone) and at the session's end.

Everything is done at directory fds, never through a link: a place the model turned into
a symlink (or whose parent it did) is removed, not followed. Only what the model made or
changed is touched: an entry that was not there at the start is removed whole, a changed
one rewritten from the copy. Files are compared by content (a hash), never by size and time
(the model sets those): a changed file too large to copy is removed, and said so.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import os
import secrets
import stat
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from launcher.trust import Place, Protected

MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024
"""File contents kept in all; a file past this is hashed only (removed if changed)."""
MAX_ENTRIES = 20_000
"""Entries looked at per place; past this the place counts as changed."""
MAX_DEPTH = 64
"""Directory levels looked at below a place; deeper counts as changed."""
OVERFLOW = "\x00overflow"
"""The name of the entry that marks a tree cut short (never a real file name)."""
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Node:
    """One entry as it was: its kind (file, dir, link, other), mode, size, time, bytes."""

    kind: str
    mode: int
    size: int = 0
    mtime_ns: int = 0
    data: bytes | None = None  # a file's bytes, a link's target; None: not kept
    digest: bytes | None = None  # a file's SHA-256; None: not read


Tree = dict[str, Node]


class _Budget:
    def __init__(self) -> None:
        self.bytes = MAX_SNAPSHOT_BYTES


def _file_bytes(
    parent: int, name: str, size: int, budget: _Budget | None
) -> tuple[bytes | None, bytes | None]:
    """The file's bytes (kept while `budget` lasts; never without one) and its hash."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=parent)
    except OSError:
        return None, None
    keep = budget is not None and size <= budget.bytes
    chunks: list[bytes] = []
    total = 0
    digest = hashlib.sha256()
    try:
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
            total += len(chunk)
            if keep:
                chunks.append(chunk)
                if budget is not None and total > budget.bytes:
                    keep, chunks = False, []
    except OSError:
        return None, None
    finally:
        os.close(fd)
    if not keep or budget is None:
        return None, digest.digest()
    budget.bytes -= total
    return b"".join(chunks), digest.digest()


def _capture(
    parent: int,
    name: str,
    rel: str,
    tree: Tree,
    budget: _Budget | None,
    depth: int,
    skip: tuple[str, ...] = (),
    way: frozenset[str] = frozenset(),
    against: Tree | None = None,
) -> None:
    if rel in skip:
        return  # the model's own (its memory): neither copied nor put back
    if len(tree) >= MAX_ENTRIES or depth > MAX_DEPTH:
        tree[f"{rel}/{OVERFLOW}"] = Node("other", 0)
        return
    try:
        st = os.lstat(name, dir_fd=parent)
    except OSError:
        return
    mode, perms = st.st_mode, stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(mode):
        target = os.fsencode(os.readlink(name, dir_fd=parent))
        tree[rel] = Node("link", perms, st.st_size, st.st_mtime_ns, target)
    elif stat.S_ISREG(mode):
        data = digest = None
        old = against.get(rel) if against is not None else None
        if against is None or (old is not None and old.kind == "file" and old.size == st.st_size):
            data, digest = _file_bytes(parent, name, st.st_size, budget)
        tree[rel] = Node("file", perms, st.st_size, st.st_mtime_ns, data, digest)
    elif stat.S_ISDIR(mode):
        if rel not in way:  # a directory on the way to the model's own is not a change
            tree[rel] = Node("dir", perms)
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError:
            tree[f"{rel}/{OVERFLOW}"] = Node("other", 0)  # unreadable: cannot vouch for it
            return
        try:
            for entry in sorted(os.listdir(fd)):
                _capture(fd, entry, f"{rel}/{entry}", tree, budget, depth + 1, skip, way, against)
        finally:
            os.close(fd)
    else:
        tree[rel] = Node("other", perms, st.st_size, st.st_mtime_ns)


def snapshot(place: Place, budget: _Budget | None = None, against: Tree | None = None) -> Tree:
    """The place as it is (keys: paths relative to its base); where a component on the way
    is not a directory (a symlink the model made, say), that component, and nothing below.
    Given `against` (an earlier copy), nothing is kept: only the files of its size hashed."""
    if against is None:
        budget = budget or _Budget()
    tree: Tree = {}
    try:
        fd = os.open(place.base, _DIR_FLAGS)
    except OSError:
        return tree
    parts = PurePosixPath(place.rel).parts
    try:
        for depth, part in enumerate(parts[:-1], 1):
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                _capture(fd, part, "/".join(parts[:depth]), tree, budget, 0, against=against)
                return tree
            os.close(fd)
            fd = child
        way = frozenset(_ancestors(place.open))
        _capture(fd, parts[-1], place.rel, tree, budget, 0, place.open, way, against)
    finally:
        os.close(fd)
    return tree


def _differs(old: Node, new: Node) -> bool:
    if (old.kind, old.mode) != (new.kind, new.mode):
        return True
    if old.kind == "dir":
        return False
    if old.kind == "file":  # by content: size and time are the model's to set
        if old.size != new.size:
            return True
        if old.digest is not None or new.digest is not None:
            return old.digest != new.digest
    elif old.data is not None and new.data is not None:
        return old.data != new.data
    return (old.size, old.mtime_ns) != (new.size, new.mtime_ns)


def complete(tree: Tree) -> bool:
    """Whether the whole tree was looked at (no part cut short for size or depth)."""
    return not any(key.endswith(OVERFLOW) for key in tree)


def _under(rel: str, top: str) -> bool:
    return rel == top or rel.startswith(top + "/")


def _depth(rel: str) -> int:
    return rel.count("/")


def _open_dir(base: int, parts: tuple[str, ...]) -> int:
    """An fd on `parts` below `base`, never through a link (OSError otherwise)."""
    fd = os.dup(base)
    for part in parts:
        try:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        finally:
            os.close(fd)
        fd = child
    return fd


def remove_tree(parent: int, name: str) -> None:
    """Remove `name` under `parent`, a directory at any depth, never following a link:
    sub-directories are moved up beside it first, so nothing recurses."""
    pending = [name]
    while pending:
        current = pending.pop()
        try:
            st = os.lstat(current, dir_fd=parent)
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(current, dir_fd=parent)
            continue
        if stat.S_IMODE(st.st_mode) & 0o700 != 0o700:  # a 0000 directory the model made
            _open_up(parent, current)
        fd = os.open(current, _DIR_FLAGS, dir_fd=parent)
        try:
            for child in os.listdir(fd):
                if stat.S_ISDIR(os.lstat(child, dir_fd=fd).st_mode):
                    hoisted = f".subagent-removing-{secrets.token_hex(6)}"
                    os.rename(child, hoisted, src_dir_fd=fd, dst_dir_fd=parent)
                    pending.append(hoisted)
                else:
                    os.unlink(child, dir_fd=fd)
        finally:
            os.close(fd)
        os.rmdir(current, dir_fd=parent)


def _open_up(parent: int, name: str) -> None:
    """Give the owner rwx on directory `name` (not through a link where Linux can say so)."""
    o_path = getattr(os, "O_PATH", 0)
    if not o_path:
        os.chmod(name, 0o700, dir_fd=parent)
        return
    fd = os.open(name, o_path | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    try:
        os.chmod(f"/proc/self/fd/{fd}", 0o700)
    finally:
        os.close(fd)


def _make(parent: int, name: str, node: Node) -> None:
    """Create `name` under `parent` as `node` was (a directory 0700 until its mode is set)."""
    if node.kind == "dir":
        os.mkdir(name, 0o700, dir_fd=parent)
    elif node.kind == "link" and node.data is not None:
        os.symlink(os.fsdecode(node.data), name, dir_fd=parent)
    elif node.kind == "file" and node.data is not None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(name, flags, 0o600, dir_fd=parent)
        try:
            view = memoryview(node.data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, node.mode)
            os.utime(fd, ns=(node.mtime_ns, node.mtime_ns))
        finally:
            os.close(fd)


def _replace(root: int, rel: str, node: Node | None) -> None:
    """Remove what is at `rel` (below `root`) and, given `node`, make it again."""
    parts = PurePosixPath(rel).parts
    fd = _open_dir(root, parts[:-1])
    try:
        with contextlib.suppress(FileNotFoundError):
            remove_tree(fd, parts[-1])
        if node is not None:
            _make(fd, parts[-1], node)
    finally:
        os.close(fd)


def put_back(place: Place, before: Tree, now: Tree) -> list[str]:
    """Make the place what `before` says; the entries that could not be (not kept)."""
    root = os.open(place.base, _DIR_FLAGS)
    try:
        return _put_back(root, before, now)
    finally:
        os.close(root)


def _ancestors(paths: tuple[str, ...]) -> set[str]:
    """Every directory on the way to `paths` (which hold what stays the model's)."""
    found: set[str] = set()
    for path in paths:
        parts = PurePosixPath(path).parts
        found.update("/".join(parts[:n]) for n in range(1, len(parts)))
    return found


def _put_back(root: int, before: Tree, now: Tree) -> list[str]:
    lost: list[str] = []
    gone: list[str] = []  # removed whole: what was under them is made again from `before`
    for rel in sorted(now, key=_depth):
        if any(_under(rel, top) for top in gone):
            continue
        old, new = before.get(rel), now[rel]
        if rel.endswith(OVERFLOW):
            rel = rel.removesuffix(f"/{OVERFLOW}")
            old = None
        elif old is not None and not _differs(old, new):
            continue
        if old is not None and old.kind == new.kind == "dir":
            _chmod(root, rel, old.mode | 0o700)  # writable until the last pass sets it
            continue
        if old is not None and old.kind == "file" and old.data is None:
            lost.append(rel)  # changed and not copied: removed, never trusted
        _replace(root, rel, None)
        gone.append(rel)
    for rel in sorted(before, key=_depth):
        if rel.endswith(OVERFLOW) or (rel in now and not any(_under(rel, t) for t in gone)):
            continue
        node = before[rel]
        if node.kind in ("file", "link") and node.data is None:
            if rel not in lost:
                lost.append(rel)
            continue
        if node.kind == "other":
            continue
        _make_below(root, PurePosixPath(rel).parts, node)
    for rel in sorted(before, key=_depth, reverse=True):  # a 0555 one last: filled first
        if before[rel].kind == "dir":
            _chmod(root, rel, before[rel].mode)
    return lost


def _chmod(root: int, rel: str, mode: int) -> None:
    parts = PurePosixPath(rel).parts
    with contextlib.suppress(OSError):
        parent = _open_dir(root, parts[:-1])
        try:
            fd = os.open(parts[-1], _DIR_FLAGS, dir_fd=parent)
        finally:
            os.close(parent)
        try:
            os.fchmod(fd, mode)
        finally:
            os.close(fd)


def _make_below(root: int, parts: tuple[str, ...], node: Node) -> None:
    """Make `parts` (its parents remade as directories where the model removed them)."""
    fd = os.dup(root)
    try:
        for part in parts[:-1]:
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                os.mkdir(part, 0o700, dir_fd=fd)
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
        with contextlib.suppress(FileNotFoundError):
            remove_tree(fd, parts[-1])
        _make(fd, parts[-1], node)
    finally:
        os.close(fd)


@dataclass
class _Originals:
    """One workspace's protected places as the first of its live sessions found them."""

    before: list[tuple[Place, Tree]]
    had: set[tuple[Path, str]]
    users: int = 0
    record: _Record | None = None  # where other launchers of the workspace meet


def _encode(originals: _Originals) -> str:
    def node(n: Node) -> list[object]:
        data = None if n.data is None else base64.b64encode(n.data).decode()
        digest = None if n.digest is None else n.digest.hex()
        return [n.kind, n.mode, n.size, n.mtime_ns, data, digest]

    trees = [{rel: node(n) for rel, n in tree.items()} for _, tree in originals.before]
    had = sorted([str(base), way] for base, way in originals.had)
    return json.dumps({"trees": trees, "had": had})


def _decode(text: str, protected: Protected) -> _Originals:
    raw = json.loads(text)

    def node(f: list[object]) -> Node:
        kind, mode, size, mtime, data, digest = f
        return Node(
            str(kind),
            int(str(mode)),
            int(str(size)),
            int(str(mtime)),
            None if data is None else base64.b64decode(str(data)),
            None if digest is None else bytes.fromhex(str(digest)),
        )

    trees = raw["trees"]
    if len(trees) != len(protected.places):
        raise ValueError("a record of other places")
    before = [
        (place, {rel: node(f) for rel, f in tree.items()})
        for place, tree in zip(protected.places, trees, strict=True)
    ]
    return _Originals(before, {(Path(b), w) for b, w in raw["had"]})


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's: alive
    return True


class _Record:
    """A workspace's originals kept under the state home for the launchers guarding it at
    once (batch and serve workers are processes): a lock, the copy, one file per live
    launcher (named for its process id; a dead one's is not counted). The state home is
    denied to the sandboxed model, so the copy is the launcher's own."""

    def __init__(self, home: Path, key: object) -> None:
        self.dir = home / "guard" / hashlib.sha256(repr(key).encode()).hexdigest()[:32]
        self.me = f"{os.getpid()}-{secrets.token_hex(6)}"

    def _live(self) -> list[str]:
        users = self.dir / "users"
        live = []
        for entry in os.listdir(users):
            pid = entry.split("-", 1)[0]
            if pid.isdigit() and _alive(int(pid)):
                live.append(entry)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(users / entry)
        return live

    def _locked(self) -> int:
        (self.dir / "users").mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.dir / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)  # held for one copy at most
        return fd

    def join(self, protected: Protected) -> _Originals:
        """The live launchers' originals, or (none live) a fresh copy; this one counted."""
        fd = self._locked()
        try:
            copy = self.dir / "originals.json"
            originals = None
            if self._live() and copy.exists():
                with contextlib.suppress(ValueError, KeyError, TypeError, OSError):
                    originals = _decode(copy.read_text(), protected)
            if originals is None:
                originals = _originals(protected)
                tmp = self.dir / f".originals-{self.me}"
                tmp.write_text(_encode(originals))
                os.replace(tmp, copy)
            (self.dir / "users" / self.me).touch()
            return originals
        finally:
            os.close(fd)

    def leave(self) -> None:
        """This launcher is done; the last one out removes the copy."""
        fd = self._locked()
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.dir / "users" / self.me)
            if not self._live():
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.dir / "originals.json")
        finally:
            os.close(fd)


_ORIGINALS: dict[tuple[tuple[str, str, tuple[str, ...]], ...], _Originals] = {}
_ORIGINALS_LOCK = threading.Lock()


def _fresh_inode(parent: int, name: str, st: os.stat_result) -> None:
    """Give the file `name` a new inode (same bytes, mode, owner, time): a hard link made
    earlier then reaches only the old one."""
    tmp = f".subagent-unlinking-{secrets.token_hex(6)}"
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    src = os.open(name, flags, dir_fd=parent)
    try:
        if os.fstat(src).st_ino != st.st_ino:
            return  # changed under us: the next look sees it
        dst = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600, dir_fd=parent
        )
        try:
            while chunk := os.read(src, 1 << 20):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(dst, view) :]
            if os.geteuid() == 0:
                os.fchown(dst, st.st_uid, st.st_gid)
            os.fchmod(dst, stat.S_IMODE(st.st_mode))
            os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(dst)
    finally:
        os.close(src)
    try:
        os.rename(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=parent)
        raise


def _unlink_hard_links(place: Place) -> None:
    """Every protected regular file linked elsewhere (`st_nlink` > 1) gets a fresh inode."""
    parts = PurePosixPath(place.rel).parts
    try:
        top = os.open(place.base, _DIR_FLAGS)
        try:
            parent = _open_dir(top, parts[:-1])
        finally:
            os.close(top)
    except OSError:
        return
    try:
        _relink(parent, parts[-1], 0, [0])
    finally:
        os.close(parent)


def _relink(parent: int, name: str, depth: int, seen: list[int]) -> None:
    seen[0] += 1
    if seen[0] > MAX_ENTRIES or depth > MAX_DEPTH:
        return
    with contextlib.suppress(OSError):
        st = os.lstat(name, dir_fd=parent)
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            _fresh_inode(parent, name, st)
        elif stat.S_ISDIR(st.st_mode):
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
            try:
                for entry in os.listdir(fd):
                    _relink(fd, entry, depth + 1, seen)
            finally:
                os.close(fd)


def _originals(protected: Protected) -> _Originals:
    budget = _Budget()
    before = [(place, snapshot(place, budget)) for place in protected.places]
    # Directories on the way to the model's own that were there: never removed.
    had: set[tuple[Path, str]] = {
        (p.base, way)
        for p in protected.places
        for way in _ancestors(p.open)
        if os.path.lexists(p.base / way)
    }
    return _Originals(before, had)


class Guard:
    """The protected places as they were when the first live session of the workspace
    started; `restore` puts back whatever changed since (the model's processes must be
    gone when it is called). Sessions of one process share the copy: a session starting
    while a sibling's model has planted a file must not take the plant as the original."""

    def __init__(self, protected: Protected, home: Path | None = None) -> None:
        """`home`: the state home, where launchers guarding the workspace at once meet."""
        self.protected = protected
        self._key = tuple((os.path.realpath(p.base), p.rel, p.open) for p in protected.places)
        for place in protected.places:  # every session: a link may be newer than the copy
            _unlink_hard_links(place)
        with _ORIGINALS_LOCK:
            shared = _ORIGINALS.get(self._key)
            if shared is None:
                shared = None
                if home is not None and protected.places:
                    record = _Record(home, self._key)
                    with contextlib.suppress(OSError):  # an unusable home: this process only
                        shared = record.join(protected)
                        shared.record = record
                if shared is None:
                    shared = _originals(protected)
                _ORIGINALS[self._key] = shared
            shared.users += 1
        self._shared: _Originals | None = shared
        self._before = shared.before
        self._had = shared.had

    def release(self) -> None:
        """This session is done with the copy; the last one out lets it go (the next
        session takes a fresh one)."""
        with _ORIGINALS_LOCK:
            shared, self._shared = self._shared, None
            if shared is None:
                return
            shared.users -= 1
            if shared.users > 0:
                return
            if _ORIGINALS.get(self._key) is shared:
                del _ORIGINALS[self._key]
            if shared.record is not None:
                with contextlib.suppress(OSError):
                    shared.record.leave()

    def _now(self, place: Place, before: Tree) -> Tree | None:
        now = snapshot(place, against=before)
        if before.keys() != now.keys():
            return now
        return now if any(_differs(old, now[key]) for key, old in before.items()) else None

    def changed(self) -> list[str]:
        """The places that differ from their copies."""
        return [p.rel for p, before in self._before if self._now(p, before) is not None]

    def restore(self) -> list[str]:
        """Put every changed place back; the places put back (or that could not be).
        Each is looked at just before it is put back: one place's repair (a `.git` symlink
        removed) changes what the next one sees."""
        said: list[str] = []
        for place, before in self._before:
            now = self._now(place, before)
            if now is None:
                continue
            if not complete(before):  # a tree cut short: what it held cannot be made again
                said.append(f"{place.rel} (changed; too large to put back)")
                continue
            try:
                lost = put_back(place, before, now)
            except OSError as exc:
                said.append(f"{place.rel} (could not be put back: {exc.strerror})")
                continue
            said.append(
                place.rel
                + (f" (removed, too large to put back: {', '.join(lost)})" if lost else "")
            )
            self._tidy(place)
        return said

    def _tidy(self, place: Place) -> None:
        """Remove the now empty directories on the way to the model's own it made."""
        for way in sorted(_ancestors(place.open), key=_depth, reverse=True):
            if (place.base, way) not in self._had:
                with contextlib.suppress(OSError):
                    parts = PurePosixPath(way).parts
                    root = os.open(place.base, _DIR_FLAGS)
                    try:
                        parent = _open_dir(root, parts[:-1])
                    finally:
                        os.close(root)
                    try:
                        os.rmdir(parts[-1], dir_fd=parent)
                    finally:
                        os.close(parent)
