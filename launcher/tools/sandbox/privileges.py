"""Root in the sandbox is not root: no capabilities, and a read-only world outside the roots.

Landlock judges opens, creations and renames, never a change of a file's attributes
(`chmod`, `chown`, `utime`, `setxattr`): those follow ownership alone, and root owns
root's files. Run as root, the confined thread therefore first enters a mount namespace
of its own (no user namespace: a thread of a process with threads cannot make one) in
which every mount is read-only but the writable roots and files, bind-mounted back over
themselves read-write; a read-only mount refuses those changes (EROFS) whoever asks.
Then the thread drops every capability its children could get back at `execve`: the
bounding set emptied, the inheritable and ambient sets cleared, so a root shell holds
none (no CAP_SYS_ADMIN to remount, no CAP_SYS_PTRACE for the launcher's memory).
"""

from __future__ import annotations

import ctypes
import errno
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CAP_LAST_CAP_FILE = "/proc/sys/kernel/cap_last_cap"
LINUX_CAPABILITY_VERSION_3 = 0x20080522
SYS_CAPGET = {"x86_64": 125, "aarch64": 90}
SYS_CAPSET = {"x86_64": 126, "aarch64": 91}
SYS_OPEN_TREE = 428
SYS_MOVE_MOUNT = 429
SYS_MOUNT_SETATTR = 442
"""The same numbers on every architecture (after the syscall table unification)."""
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
OPEN_TREE_CLONE = 1
AT_RECURSIVE = 0x8000
AT_FDCWD = -100
MOVE_MOUNT_F_EMPTY_PATH = 0x4
MOUNT_ATTR_RDONLY = 0x1

_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _fail(what: str) -> OSError:
    code = ctypes.get_errno()
    return OSError(code, f"{what}: {os.strerror(code)}")


def _last_cap() -> int:
    try:
        return int(Path(CAP_LAST_CAP_FILE).read_text())
    except (OSError, ValueError):
        return 40  # CAP_CHECKPOINT_RESTORE, the last one of Linux 5.9+


def drop_capabilities() -> None:
    """Empty the calling thread's bounding, inheritable and ambient sets: what it starts
    holds no capability after `execve`, root included. Nothing to drop is not an error."""
    import platform

    machine = platform.machine()
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if machine in SYS_CAPGET:
        if _syscall(SYS_CAPGET[machine], ctypes.byref(header), data) < 0:
            raise _fail("capget")
        if any(d.inheritable for d in data):
            for d in data:
                d.inheritable = 0
            if _syscall(SYS_CAPSET[machine], ctypes.byref(header), data) < 0:
                raise _fail("capset")
    for cap in range(_last_cap() + 1):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            code = ctypes.get_errno()
            if code == errno.EPERM and not _holds_setpcap():
                return  # an unprivileged thread: nothing in its bounding set can be used
            if code != errno.EINVAL:  # a capability this kernel does not know
                raise OSError(code, f"drop capability {cap}: {os.strerror(code)}")


def _holds(cap: int) -> bool:
    """Whether this thread's effective set holds capability number `cap`."""
    try:
        status = Path("/proc/thread-self/status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) & (1 << cap))
    return False


def _holds_setpcap() -> bool:
    return _holds(8)  # CAP_SETPCAP


def can_remount() -> bool:
    """Whether this thread may make a mount namespace (root: CAP_SYS_ADMIN)."""
    return _holds(21)  # CAP_SYS_ADMIN


def read_only_outside(writable: Iterable[Path], writable_files: Iterable[Path]) -> None:
    """Move the calling thread into a mount namespace where every mount is read-only but
    `writable` (trees) and `writable_files`. Needs CAP_SYS_ADMIN; OSError if refused."""
    if _libc.unshare(CLONE_NEWNS) != 0:
        raise _fail("unshare(CLONE_NEWNS)")
    _read_only_but(writable, writable_files)


def hold(writable: Iterable[Path], writable_files: Iterable[Path]) -> None:
    """In a process of one thread, no privilege needed: enter a user namespace (this uid
    and gid mapped to themselves, nothing else) and a mount namespace, read-only but
    `writable` and `writable_files`; readonly.py's holder. OSError if refused."""
    uid, gid = os.getuid(), os.getgid()
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        raise _fail("unshare(CLONE_NEWUSER | CLONE_NEWNS)")
    for name, line in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1")):
        Path(f"/proc/self/{name}").write_text(line)
    Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    _read_only_but(writable, writable_files)


def _read_only_but(writable: Iterable[Path], writable_files: Iterable[Path]) -> None:
    # Private first: nothing done here may reach the host's mounts.
    if _libc.mount(None, b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None) != 0:
        raise _fail("mount --make-rprivate /")
    clones: list[tuple[int, bytes]] = []
    try:
        for path in [*writable, *writable_files]:
            target = os.fsencode(path)
            if not os.path.exists(target):
                continue
            # A detached read-write copy, taken before the world turns read-only.
            flags = OPEN_TREE_CLONE | AT_RECURSIVE | os.O_CLOEXEC
            fd = _syscall(SYS_OPEN_TREE, AT_FDCWD, target, ctypes.c_uint(flags))
            if fd < 0:
                raise _fail(f"open_tree {path}")
            clones.append((int(fd), target))
        attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
        args = (AT_FDCWD, b"/", ctypes.c_uint(AT_RECURSIVE), ctypes.byref(attr))
        if _syscall(SYS_MOUNT_SETATTR, *args, ctypes.sizeof(attr)) < 0:
            raise _fail("mount_setattr / read-only")
        for fd, target in clones:
            moved = _syscall(
                SYS_MOVE_MOUNT, fd, b"", AT_FDCWD, target, ctypes.c_uint(MOVE_MOUNT_F_EMPTY_PATH)
            )
            if moved < 0:
                raise _fail(f"move_mount {os.fsdecode(target)}")
    finally:
        for fd, _ in clones:
            os.close(fd)


def _sibling(name: str) -> Any:
    """A sibling module, loaded by path: the holder runs as `python -I -S` with no package."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _hold_main(argv: list[str]) -> int:
    """`python -I -S privileges.py '{"writable": [...], "writable_files": [...]}'`: hold
    the namespaces, make the commands' PID namespace (pidns.py), say `ready {"init": PID,
    "problem": ...}`, and stay until stdin closes (the launcher is gone)."""
    import json
    import sys

    data = json.loads(argv[0])
    # Loaded before the namespaces: inside them the interpreter's own files may not be found.
    mounts = _sibling("mounts") if data.get("protected") else None
    pidns = _sibling("pidns")
    try:
        hold(
            [Path(p) for p in data.get("writable", [])],
            [Path(p) for p in data.get("writable_files", [])],
        )
        if mounts is not None:
            mounts.protect_read_only(data["protected"], data.get("writable", []))
    except OSError as exc:
        print(f"error {exc}", flush=True)
        return 1
    ask, answer = int(data["ask"]), int(data["answer"])
    try:
        init, problem = pidns.start(ask, answer)
    except OSError as exc:  # as a refused namespace: the commands run as before
        init, problem = None, f"no PID namespace ({exc})"
    os.close(ask)  # the init's now
    os.close(answer)
    print("ready", json.dumps({"init": init, "problem": problem}), flush=True)
    sys.stdin.buffer.read()
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(_hold_main(sys.argv[1:]))
