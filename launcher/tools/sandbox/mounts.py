"""Protected places read-only in the kernel, where a mount namespace can be had.

Landlock grants whole trees and cannot take a sub-path back, so inside the writable
workspace the protected places (launcher/trust) are held by the launcher putting them
back after each command. Where the confining thread may make a mount namespace of its own
(root, or the helper inside `unshare --user --mount`), each protected place that exists is
also bind-mounted read-only onto itself there, before Landlock: a write is then refused
outright (EROFS), and the place cannot be removed or renamed (EBUSY). Renaming a place's
parent (`mv .git .gitold`) would carry the binds away with it and leave a writable copy in
its stead, so every directory between a writable root and a place is bound onto itself
first (still writable): a mount point, it cannot be renamed either. Nothing changes for
the rest of the launcher, whose namespace stays the one it had. Stdlib only: the
standalone helper loads this file by path.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterable

CLONE_NEWNS = 0x00020000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_SLAVE = 1 << 19

_libc = ctypes.CDLL(None, use_errno=True)


def pinned_parents(paths: Iterable[bytes], roots: Iterable[object]) -> list[bytes]:
    """The directories strictly between a writable root and each of `paths`, shallowest
    first: renaming any of them would move a protected place away."""
    bases = [os.fsencode(os.path.abspath(str(r))).rstrip(b"/") for r in roots]
    out: list[bytes] = []
    for path in paths:
        for base in bases:
            if not path.startswith(base + b"/"):
                continue
            parts = path[len(base) + 1 :].split(b"/")[:-1]
            for depth in range(1, len(parts) + 1):
                parent = b"/".join([base, *parts[:depth]])
                if parent not in out and os.path.isdir(parent) and not os.path.islink(parent):
                    out.append(parent)
    return sorted(out, key=lambda p: p.count(b"/"))


def protect_read_only(paths: Iterable[object], roots: Iterable[object] = ()) -> list[str]:
    """Move this thread to a mount namespace of its own and make each existing path
    read-only there, for it and all it starts, with the directories between a writable
    root in `roots` and each path made mount points (not renamed away); the paths so made
    read-only ([] without the right to a mount namespace: nothing is done). Irreversible
    for the thread."""
    existing = [os.fsencode(str(p)) for p in paths if os.path.lexists(str(p))]
    if not existing:
        return []
    if _libc.unshare(CLONE_NEWNS) != 0:
        return []  # unprivileged: the launcher's putting back is the guard
    # Our mounts must not reach the launcher's namespace (nor anyone's).
    if _libc.mount(None, b"/", None, MS_REC | MS_SLAVE, None) != 0:
        return []
    for parent in pinned_parents(existing, roots):
        # Recursive: a bind already below (a writable file) must stay where it is.
        _libc.mount(parent, parent, None, MS_BIND | MS_REC, None)
    done: list[str] = []
    for path in existing:
        if _libc.mount(path, path, None, MS_BIND | MS_REC, None) != 0:
            continue
        flags = MS_BIND | MS_REMOUNT | MS_RDONLY
        if _libc.mount(None, path, None, flags, None) != 0:
            # A mount locked nosuid/nodev (as in a user namespace) keeps those flags.
            flags |= MS_NOSUID | MS_NODEV
            if _libc.mount(None, path, None, flags, None) != 0:
                continue
        done.append(os.fsdecode(path))
    return done
