"""Protected places read-only in the kernel, where a mount namespace can be had.

Landlock grants whole trees and cannot take a sub-path back, so inside the writable
workspace the protected places (launcher/trust) are held by the launcher putting them
back after each command. Where the confining thread may make a mount namespace of its own
(root, or the helper inside `unshare --user --mount`), each protected place that exists is
also bind-mounted read-only onto itself there, before Landlock: a write is then refused
outright (EROFS), and the place cannot be removed or renamed (EBUSY). Nothing changes for
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


def protect_read_only(paths: Iterable[object]) -> list[str]:
    """Move this thread to a mount namespace of its own and make each existing path
    read-only there, for it and all it starts; the paths so made ([] without the right to
    a mount namespace: nothing is done). Irreversible for the thread."""
    existing = [os.fsencode(str(p)) for p in paths if os.path.lexists(str(p))]
    if not existing:
        return []
    if _libc.unshare(CLONE_NEWNS) != 0:
        return []  # unprivileged: the launcher's putting back is the guard
    # Our mounts must not reach the launcher's namespace (nor anyone's).
    if _libc.mount(None, b"/", None, MS_REC | MS_SLAVE, None) != 0:
        return []
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
