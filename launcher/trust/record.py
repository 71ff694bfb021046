"""One copy of a workspace's protected places for every session guarding it at once: in
this process a registry, across processes (batch and serve workers) a record under the
state home, which the sandboxed model can neither read nor write."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from launcher import runtime
from launcher.trust import Place, Protected
from launcher.trust.gitwalk import Scan, scan
from launcher.trust.snapshot import Node, Tree, _ancestors, _Budget, snapshot


@dataclass
class _Originals:
    """One workspace's protected places as the first of its live sessions found them."""

    before: list[tuple[Place, Tree]]
    had: set[tuple[Path, str]]
    users: int = 0
    record: _Record | None = None  # where other launchers of the workspace meet
    nested: Scan | None = None  # the workspace's git dirs then (None: not looked for)
    workspace: Path | None = None


def _encode(originals: _Originals) -> str:
    def node(n: Node) -> list[object]:
        data = None if n.data is None else base64.b64encode(n.data).decode()
        digest = None if n.digest is None else n.digest.hex()
        return [n.kind, n.mode, n.size, n.mtime_ns, data, digest]

    trees = [{rel: node(n) for rel, n in tree.items()} for _, tree in originals.before]
    had = sorted([str(base), way] for base, way in originals.had)
    # The places too: the watchdog of a launcher that died puts them back from this alone.
    places = [[str(p.base), p.rel, list(p.open)] for p, _ in originals.before]
    nested = originals.nested
    return json.dumps(
        {
            "trees": trees,
            "had": had,
            "places": places,
            "workspace": None if originals.workspace is None else str(originals.workspace),
            "nested": None
            if nested is None
            else {
                "gitdirs": {k: v.hex() for k, v in nested.gitdirs.items()},
                "pointers": {k: v.hex() for k, v in nested.pointers.items()},
                "cut": nested.cut,
            },
        }
    )


def places_of(text: str) -> Protected:
    """The places a record was taken of (for putting them back without a session)."""
    raw = json.loads(text)
    return Protected(
        tuple(Place(Path(str(b)), str(r), tuple(map(str, o))) for b, r, o in raw["places"])
    )


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
    originals = _Originals(before, {(Path(b), w) for b, w in raw["had"]})
    if raw.get("workspace") is not None and raw.get("nested") is not None:
        found = raw["nested"]
        originals.workspace = Path(str(raw["workspace"]))
        originals.nested = Scan(
            {str(k): bytes.fromhex(str(v)) for k, v in found["gitdirs"].items()},
            {str(k): bytes.fromhex(str(v)) for k, v in found["pointers"].items()},
            None if found["cut"] is None else str(found["cut"]),
        )
    return originals


def _started(pid: int) -> str:
    """When process `pid` started (Linux: clock ticks since boot), "0" where unknown: a
    reused pid must not keep a dead launcher's copy alive."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat_file:
            fields = stat_file.read().rsplit(b")", 1)[1].split()
        return fields[19].decode()
    except (OSError, IndexError, UnicodeDecodeError):
        return "0"


def _alive(pid: int, started: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's: alive
    return _started(pid) == started and not _zombie(pid)


def _zombie(pid: int) -> bool:
    """A launcher that died but is not reaped yet (its parent has not waited) is dead."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat_file:
            return stat_file.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return False


class _Record:
    """A workspace's originals kept under the state home for the launchers guarding it at
    once (batch and serve workers are processes): a lock, the copy, one file per live
    launcher (named for its process id; a dead one's is not counted). The state home is
    denied to the sandboxed model, so the copy is the launcher's own."""

    def __init__(self, home: Path, key: object, folder: Path | None = None) -> None:
        """`folder`: the record's own directory, given (the watchdog's: no key to hash)."""
        digest = hashlib.sha256(repr(key).encode()).hexdigest()[:32]
        self.dir = folder if folder is not None else home / "guard" / digest
        pid = os.getpid()
        self.me = f"{pid}-{_started(pid)}-{secrets.token_hex(6)}"

    def orphaned(self) -> str | None:
        """The copy, when no launcher that joined the record is alive (taken: removed);
        None while one still is, or when there is none."""
        fd = self._locked()
        try:
            copy = self.dir / "originals.json"
            if self._live() or not copy.exists():
                return None
            text = copy.read_text()
            return text
        finally:
            os.close(fd)

    def forget(self) -> None:
        """Remove the copy (the places were put back), unless a launcher joined meanwhile."""
        fd = self._locked()
        try:
            if not self._live():
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.dir / "originals.json")
        finally:
            os.close(fd)

    def _live(self) -> list[str]:
        users = self.dir / "users"
        live = []
        for entry in os.listdir(users):
            pid, started, *_ = [*entry.split("-"), "", ""]
            if pid.isdigit() and _alive(int(pid), started):
                live.append(entry)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(users / entry)
        return live

    def _locked(self) -> int:
        # Private like all of SUBAGENT_HOME: every level made 0700 (mkdir's parents are not).
        self.dir.parent.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # the home
        for level in (self.dir.parent, self.dir, self.dir / "users"):
            level.mkdir(exist_ok=True, mode=0o700)
        fd = os.open(self.dir / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)  # held for one copy at most
        return fd

    def join(self, protected: Protected, workspace: Path | None) -> _Originals:
        """The live launchers' originals, or (none live) a fresh copy; this one counted."""
        fd = self._locked()
        try:
            copy = self.dir / "originals.json"
            originals = None
            if self._live() and copy.exists():
                with contextlib.suppress(ValueError, KeyError, TypeError, OSError):
                    originals = _decode(copy.read_text(), protected)
            if originals is None:
                originals = _originals(protected, workspace)
                tmp = self.dir / f".originals-{self.me}"
                out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
                with os.fdopen(out, "w", encoding="utf-8") as file:
                    file.write(_encode(originals))
                os.replace(tmp, copy)
            (self.dir / "users" / self.me).touch(mode=0o600)
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


def _originals(protected: Protected, workspace: Path | None = None) -> _Originals:
    budget = _Budget()
    before = [(place, snapshot(place, budget)) for place in protected.places]
    # Directories on the way to the model's own that were there: never removed.
    had: set[tuple[Path, str]] = {
        (p.base, way)
        for p in protected.places
        for way in _ancestors(p.open)
        if os.path.lexists(p.base / way)
    }
    originals = _Originals(before, had)
    if workspace is not None:  # its git dirs now: the user's (the model's come later)
        originals.workspace = Path(os.path.realpath(workspace))
        originals.nested = scan(originals.workspace)
    return originals


Key = tuple[tuple[str, str, tuple[str, ...]], ...]


def acquire(
    protected: Protected, key: Key, home: Path | None, workspace: Path | None = None
) -> _Originals:
    """The originals of the places in `key`: the live sessions' ones, or a fresh copy."""
    held = runtime.current().trust
    with held.lock:
        shared = held.originals.get(key)
        if shared is None:
            if home is not None and protected.places:
                record = _Record(home, key)
                with contextlib.suppress(OSError):  # an unusable home: this process only
                    shared = record.join(protected, workspace)
                    shared.record = record
            if shared is None:
                shared = _originals(protected, workspace)
            held.originals[key] = shared
        shared.users += 1
        return shared


def let_go(key: Key, shared: _Originals) -> None:
    """One session is done with `shared`; the last one out lets it go."""
    held = runtime.current().trust
    with held.lock:
        shared.users -= 1
        if shared.users > 0:
            return
        if held.originals.get(key) is shared:
            del held.originals[key]
    if shared.record is not None:
        with contextlib.suppress(OSError):
            shared.record.leave()
