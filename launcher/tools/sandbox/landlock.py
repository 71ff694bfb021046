"""Linux Landlock through ctypes: the calling thread may then read, write and connect only
where a `SandboxPolicy` says (kernel 5.13+; TCP rules 6.7+, scopes 6.12+).

Landlock grants, it never denies: "read everything but ~/.ssh" is built by granting reads
on every sibling along the path from / down to each denied path (`_grant_except`). Those
grants name the entries that exist when the rules are made. Directory listing is granted
everywhere, so a denied directory's file names show; their contents do not.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # at run time any object with the fields will do (the lean helper's)
    from launcher.tools.sandbox.policy import SandboxPolicy

SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
"""The same numbers on every architecture (they came after the syscall table unification)."""
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

READ = READ_FILE | EXECUTE
FILE_ACCESS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE
"""The rights a rule on a single file (not a directory) may carry."""
MIN_ABI = 3
"""Below ABI 3 truncating a file outside the workspace cannot be refused: not a sandbox."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 where Landlock is missing or disabled."""
    result = _syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), CREATE_RULESET_VERSION)
    return max(int(result), 0)


def _handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1  # EXECUTE .. MAKE_SYM (ABI 1)
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def _check(result: int, what: str) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"landlock {what}: {os.strerror(code)}")
    return result


def restrict_thread(policy: SandboxPolicy) -> None:
    """Confine the calling thread (and every process it starts) to `policy`.

    Irreversible. Raises OSError where the kernel refuses; the thread is then unchanged.
    """
    abi = abi_version()
    if abi < MIN_ABI:
        raise OSError(errno.ENOSYS, f"Landlock ABI {abi} < {MIN_ABI}")
    fs = _handled_fs(abi)
    attr = _RulesetAttr(fs, 0, 0)
    if abi >= 4 and not policy.network:
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP  # no rule: none allowed
    if abi >= 6:
        attr.scoped = SCOPE_SIGNAL | (0 if policy.network else SCOPE_ABSTRACT_UNIX)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = _check(_syscall(SYS_CREATE_RULESET, ctypes.byref(attr), size, 0), "create")
    try:
        everything = fs & ~(MAKE_CHAR | MAKE_BLOCK)  # no device nodes, even in the roots
        _add(ruleset, Path("/"), READ_DIR)
        _grant_except(ruleset, Path("/"), READ, policy.deny_read)
        for root in policy.writable:
            _grant_except(ruleset, root, everything, policy.deny_read)
        for tree in policy.readable:
            _add(ruleset, tree, READ | READ_DIR)
        for file in policy.writable_files:
            _add(ruleset, file, (READ_FILE | WRITE_FILE | TRUNCATE) & fs)
        _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(_syscall(SYS_RESTRICT_SELF, ruleset, 0), "restrict_self")
    finally:
        os.close(ruleset)


def _add(ruleset: int, path: Path, access: int) -> None:
    """One rule; a path that is gone, a symlink, unopenable or refused is skipped."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISLNK(mode):
            return  # a link's target is judged by its own place in the tree
        if not stat.S_ISDIR(mode):
            access &= FILE_ACCESS
        rule = _PathBeneath(access, fd)
        # A rule the kernel refuses grants nothing: the sandbox only gets narrower.
        _syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0)
    finally:
        os.close(fd)


def _grant_except(ruleset: int, top: Path, access: int, denied: Iterable[Path]) -> None:
    """Grant `access` on `top`'s tree except beneath each denied path."""
    _grant_tree(ruleset, str(top), access, [str(d) for d in denied])


def _beneath(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _grant_tree(ruleset: int, top: str, access: int, denied: list[str]) -> None:
    # Strings, not Paths: this walks every entry of each directory on the way to a denied
    # path once per session, and pathlib's `parents` made it ten times slower.
    # A denied path that does not exist has no inode to keep: carving around it would only
    # take rights from its parents.
    inside = [d for d in denied if _beneath(d, top) and os.path.lexists(d)]
    if top in inside:
        return
    if not inside:
        _add(ruleset, Path(top), access)
        return
    # Directories on the way to a denied path: grant on their other entries, one level down.
    try:
        entries = list(os.scandir(top))
    except OSError:
        return
    for entry in entries:
        if any(_beneath(d, entry.path) for d in inside):
            if entry.is_dir(follow_symlinks=False):
                _grant_tree(ruleset, entry.path, access, inside)
            continue
        _add(ruleset, Path(entry.path), access)
