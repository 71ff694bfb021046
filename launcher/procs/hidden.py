"""Secrets out of the process's environment block: a scrubbed re-exec and an fd hand-over.

`/proc/PID/environ` shows a process's *initial* environment, whatever it later deletes
from `os.environ`, and any process of the same user (the model's `bash` included) may
read it. So a command that runs sessions re-executes itself with every secret variable
removed from its exec environment; the values travel over an anonymous file descriptor
and are put back into `os.environ` in-process, where model providers and `${VAR}`
expansion find them. The serve worker is started the same way. The descriptor is a
socket, which no other process can open through /proc/PID/fd (a memfd could be, in the
moment between `execve` and `restore()` when the new process is dumpable again). The
process is made non-dumpable before it reads the secrets, so a same-user process that is
not root cannot read its memory. Root (or CAP_SYS_PTRACE), and where Yama does not
restrict ptrace a same-user process that duplicates the socket with pidfd_getfd() in that
moment, still can: that needs the bash sandbox (tools/sandbox.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from collections.abc import Iterable, Mapping

from launcher.secrets import SECRET_NAME, is_secret_name, note_hidden, public_environment

HANDOVER_VAR = "SUBAGENT_SECRETS_FD"
"""Names the inherited descriptor that carries the hidden variables (a JSON object)."""
PLAIN_NAMES = frozenset(
    ("HOME", "LOGNAME", "PATH", "PWD", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR")
)
"""Never hidden, even when the config references them: every process needs them."""
KEEP_PREFIXES = ("PYTHON", "LD_", "DYLD_", "SUBAGENT_", "LC_", "VIRTUAL_ENV", "CONDA_")
"""Kept in the block by the early re-exec: what the interpreter needs before `restore()`."""
PR_SET_DUMPABLE = 4
SOCKET_BUFFER = 1 << 22
"""Asked of the hand-over socket (the kernel may give less): room for a whole environment."""
READ_CHUNK = 1 << 16

_restored: set[str] | None = None
"""After `restore()`: the names that stayed in this process's environment block."""


def set_not_dumpable() -> None:
    """Linux: no core dumps, and /proc/PID/{mem,environ} only for root (ptrace rules)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def secret_names(env: Mapping[str, str], referenced: Iterable[str] = ()) -> set[str]:
    """The variables of `env` to hide: credential-named ones and those the config references."""
    wanted = set(referenced) - PLAIN_NAMES
    return {k for k in env if SECRET_NAME.search(k) or k in wanted} - {HANDOVER_VAR}


def handover_fd(values: Mapping[str, object]) -> int:
    """An inheritable descriptor from which `values` (JSON) read to EOF: one end of a socket
    pair, already filled and with the other end closed.

    Not a memfd, a file or a pipe: between `execve` and `restore()` the new process is
    dumpable again, and any process of the same user could open those through
    /proc/PID/fd/N and read the secrets; a socket cannot be opened that way.
    """
    data = json.dumps(dict(values)).encode()
    ours, theirs = socket.socketpair()
    with contextlib.suppress(OSError):
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER)
    ours.setblocking(False)
    sent = 0
    with contextlib.suppress(BlockingIOError):
        while sent < len(data):
            sent += ours.send(data[sent:])
    if sent < len(data):
        _write_rest_in_child(ours, data[sent:], close=theirs.fileno())
    ours.close()
    fd = theirs.detach()
    os.set_inheritable(fd, True)
    return fd


def _write_rest_in_child(ours: socket.socket, rest: bytes, *, close: int) -> None:
    """More than the socket buffers: a forked grandchild writes the rest while the reader
    reads (non-dumpable like this process, and nobody's zombie: its parent is reaped here)."""
    set_not_dumpable()
    child = os.fork()
    if child != 0:
        os.waitpid(child, 0)
        return
    try:  # raw writes only, no locks (the parent may have had threads)
        if os.fork() != 0:
            os._exit(0)
        os.close(close)
        os.set_blocking(ours.fileno(), True)
        view = memoryview(rest)
        while view:
            view = view[os.write(ours.fileno(), view) :]
    finally:
        os._exit(0)


def restore() -> bool:
    """In a process started with a hand-over: put the hidden variables back into os.environ.

    Returns whether there was a hand-over (now or earlier in this process). Called before
    anything reads the environment. The hand-over holds `secret` variables (never for the
    shell) and `plain` ones (moved out of the block only to keep it small and clean).
    """
    global _restored
    if _restored is not None:
        return True
    value = os.environ.pop(HANDOVER_VAR, None)
    if value is None:
        return False
    _restored = set(os.environ)
    set_not_dumpable()  # before the secrets are in this process's memory
    try:
        payload = json.loads(_read_to_end(int(value)) or b"{}")
    except (OSError, ValueError):
        return True  # a broken hand-over: run without the secrets rather than leak them
    if isinstance(payload, dict):
        for group in ("plain", "secret"):
            values = {str(k): str(v) for k, v in dict(payload.get(group) or {}).items()}
            os.environ.update(values)
            if group == "secret":
                note_hidden(values)
    return True


def _read_to_end(fd: int) -> bytes:
    """Everything the hand-over holds; the descriptor is closed whatever happens."""
    chunks = []
    try:
        while chunk := os.read(fd, READ_CHUNK):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def hide_referenced(names: Iterable[str]) -> set[str]:
    """After an early re-exec: mark config-referenced variables secret; returns those still
    in the environment block (kept for the interpreter), which need a full re-exec."""
    wanted = {n for n in set(names) - PLAIN_NAMES if n in os.environ}
    note_hidden({n: os.environ[n] for n in wanted})
    return wanted & (_restored or set())


def reexec_early(argv: list[str]) -> None:
    """Before anything heavy is imported: if credential-named variables are set, re-exec
    with a block of only what the interpreter needs; everything else is handed over.

    Returns when there is nothing to hide; the config's `${VAR}`s are checked later
    (`hide_referenced`, or `reexec_hiding` when this did not run).
    """
    env = dict(os.environ)
    if not any(SECRET_NAME.search(k) for k in env) or not sys.executable:
        return
    secret = {k: v for k, v in env.items() if SECRET_NAME.search(k)}
    plain = {
        k: v
        for k, v in env.items()
        if k not in secret and k not in PLAIN_NAMES and not k.startswith(KEEP_PREFIXES)
    }
    block = {k: v for k, v in env.items() if k not in secret and k not in plain}
    block[HANDOVER_VAR] = str(handover_fd({"secret": secret, "plain": plain}))
    set_not_dumpable()
    os.execve(sys.executable, argv, block)


def reexec_hiding(names: Iterable[str]) -> None:
    """Replace this process by itself with `names` out of its environment block.

    Returns only when there is nothing to hide (or no way to re-exec): then the process
    is just made non-dumpable. The new process must call `restore()` first.
    """
    set_not_dumpable()
    env = dict(os.environ)
    hidden = {name: env.pop(name) for name in set(names) if name in env}
    argv = getattr(sys, "orig_argv", None)
    if not hidden or not sys.executable or not argv:
        return
    env[HANDOVER_VAR] = str(handover_fd({"secret": hidden}))
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, argv, env)


def child_handover() -> tuple[dict[str, str], int]:
    """For a launcher child (the serve worker): a scrubbed env and the fd it restores from.

    The caller passes the fd to the child (`pass_fds`) and closes its copy after the spawn.
    """
    hidden = {k: v for k, v in os.environ.items() if is_secret_name(k)}
    env = public_environment()
    fd = handover_fd({"secret": hidden})
    env[HANDOVER_VAR] = str(fd)
    return env, fd
