"""A seccomp filter for the calling thread and its children, hand-assembled BPF.

Always refused with EACCES: the calls with which root reaches past Landlock — `bpf()`,
`perf_event_open()`, kernel modules, `kexec`, `open_by_handle_at()` (opens a file by
handle, no path to judge) — and `io_uring_setup()` (its operations bypass the filter).
Without network, also refused: `socket()` of every family (IP, UNIX, netlink, packet...),
`socketpair()` other than a connected stream pair (a datagram pair could send to any
UNIX socket by path), `connect()` and `pidfd_getfd()`; a system call of another ABI
(32-bit, x32) is refused too.
A stream `socketpair()` stays: it reaches nothing outside the process tree.

The launcher is off limits too (EPERM), whatever the user, root included: `ptrace()` and
`process_vm_readv/writev()` always; `tkill()` (a bare thread id) and `pidfd_send_signal()`
(a pidfd may be a `/proc` directory) always; `kill()`, `tgkill()`, `rt_sigqueueinfo()`,
`rt_tgsigqueueinfo()` and `fcntl(F_SETOWN)` (SIGIO) aimed at a protected id — the
launcher's pid, its process group, the confined thread's id, and -1 (every process);
`fcntl(F_SETOWN_EX)` always. The shell's signals to its own children pass: their ids
are none of those.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
DENY = RET_ERRNO | errno.EACCES
DENY_PERM = RET_ERRNO | errno.EPERM
F_SETOWN = 8
F_SETOWN_EX = 15
AF_UNIX = 1
SOCK_STREAM = 1
SOCK_TYPE_MASK = 0xF
X32_BIT = 0x40000000

# BPF opcodes.
LD_W_ABS = 0x20
JEQ_K = 0x15
JGE_K = 0x35
AND_K = 0x54
RET_K = 0x06

ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        {
            "socket": 41,
            "connect": 42,
            "socketpair": 53,
            "io_uring_setup": 425,
            "pidfd_getfd": 438,
            "bpf": 321,
            "perf_event_open": 298,
            "init_module": 175,
            "finit_module": 313,
            "delete_module": 176,
            "kexec_load": 246,
            "kexec_file_load": 320,
            "open_by_handle_at": 304,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "kill": 62,
            "tkill": 200,
            "tgkill": 234,
            "rt_sigqueueinfo": 129,
            "rt_tgsigqueueinfo": 297,
            "pidfd_send_signal": 424,
            "fcntl": 72,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "socket": 198,
            "connect": 203,
            "socketpair": 199,
            "io_uring_setup": 425,
            "pidfd_getfd": 438,
            "bpf": 280,
            "perf_event_open": 241,
            "init_module": 105,
            "finit_module": 273,
            "delete_module": 106,
            "kexec_load": 104,
            "kexec_file_load": 294,
            "open_by_handle_at": 265,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "kill": 129,
            "tkill": 130,
            "tgkill": 131,
            "rt_sigqueueinfo": 138,
            "rt_tgsigqueueinfo": 240,
            "pidfd_send_signal": 424,
            "fcntl": 25,
        },
    ),
}
"""Audit architecture and system call numbers of the machines the filter knows."""
ALWAYS_DENIED = (
    "bpf",
    "perf_event_open",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "open_by_handle_at",
    "io_uring_setup",
)
NETWORK_DENIED = ("socket", "connect", "pidfd_getfd")
NEVER_AT_LAUNCHER = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "tkill",
    "pidfd_send_signal",
)
"""Refused always: the launcher's memory and threads are reachable through them, and the
target cannot be judged from the arguments."""
TARGETED = (("kill", 0), ("tgkill", 0), ("rt_sigqueueinfo", 0), ("rt_tgsigqueueinfo", 0))
"""(call, argument index): refused when that argument is a protected id."""

_OFF_NR, _OFF_ARCH, _OFF_ARG0, _OFF_ARG1 = 0, 4, 16, 24
# The low 32 bits of argument i (little-endian machines only: both known ones are).
_OFF_ARGS = (16, 24, 32, 40, 48, 56)


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def supported() -> str | None:
    """None where the filter can be built for this machine, else why not."""
    if platform.machine() not in ARCHES:
        return f"no seccomp filter for the {platform.machine()} architecture"
    return None


def protected_ids(pid: int, pgid: int, tids: tuple[int, ...]) -> tuple[int, ...]:
    """The signal targets that reach the launcher: its pid and threads, its group (as a
    negative target), and -1 (every process the caller may signal)."""
    ids = (pid, -pid, -pgid, -1, *tids)
    return tuple(dict.fromkeys(i & 0xFFFFFFFF for i in ids))


def _program(
    machine: str, network: bool, protect: tuple[int, ...] = ()
) -> list[tuple[int, int, int, int]]:
    arch, nr = ARCHES[machine]
    ins: list[tuple[int, int, int, int]] = []

    def op(code: int, k: int, jt: int = 0, jf: int = 0) -> None:
        ins.append((code, jt, jf, k))

    def deny_if_arg(arg: int, values: tuple[int, ...]) -> None:
        # The accumulator holds the call number; leaves it there.
        op(LD_W_ABS, _OFF_ARGS[arg])
        for i, value in enumerate(values):
            last = i == len(values) - 1
            op(JEQ_K, value, len(values) - 1 - i, 1 if last else 0)
        op(RET_K, DENY_PERM)
        op(LD_W_ABS, _OFF_NR)

    op(LD_W_ABS, _OFF_ARCH)
    op(JEQ_K, arch, 1, 0)
    op(RET_K, DENY)
    op(LD_W_ABS, _OFF_NR)
    op(JGE_K, X32_BIT, 0, 1)
    op(RET_K, DENY)
    for name in ALWAYS_DENIED + (() if network else NETWORK_DENIED):
        op(JEQ_K, nr[name], 0, 1)
        op(RET_K, DENY)
    for name in NEVER_AT_LAUNCHER:
        op(JEQ_K, nr[name], 0, 1)
        op(RET_K, DENY_PERM)
    if protect:
        for name, arg in TARGETED:
            op(JEQ_K, nr[name], 0, len(protect) + 3)
            deny_if_arg(arg, protect)
        # fcntl: F_SETOWN_EX always, F_SETOWN when its owner (SIGIO's target) is protected.
        n = len(protect)
        op(JEQ_K, nr["fcntl"], 0, n + 7)  # another call: past this block
        op(LD_W_ABS, _OFF_ARGS[1])
        op(JEQ_K, F_SETOWN_EX, 0, 1)
        op(RET_K, DENY_PERM)
        op(JEQ_K, F_SETOWN, 0, n + 2)  # another command: to the block's last reload
        deny_if_arg(2, protect)
    if network:
        op(RET_K, RET_ALLOW)
        return ins
    op(JEQ_K, nr["socketpair"], 0, 6)
    op(LD_W_ABS, _OFF_ARG0)
    op(JEQ_K, AF_UNIX, 0, 3)
    op(LD_W_ABS, _OFF_ARG1)
    op(AND_K, SOCK_TYPE_MASK)
    op(JEQ_K, SOCK_STREAM, 1, 0)
    op(RET_K, DENY)
    op(RET_K, RET_ALLOW)
    return ins


def filter_thread(network: bool, protect: tuple[int, ...] = ()) -> None:
    """Install the filter on the calling thread (inherited by every process it starts);
    `protect`: signal targets refused (`protected_ids`)."""
    problem = supported()
    if problem is not None:
        raise OSError(errno.ENOSYS, problem)
    program = _program(platform.machine(), network, protect)
    code = b"".join(struct.pack("=HBBI", *i) for i in program)
    buf = ctypes.create_string_buffer(code, len(code))
    prog = _Fprog(len(code) // 8, ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    for args in (
        (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0),
        (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0),
    ):
        if libc.prctl(*(ctypes.c_ulong(a) for a in args)) != 0:
            code_ = ctypes.get_errno()
            raise OSError(code_, f"seccomp: {os.strerror(code_)}")
