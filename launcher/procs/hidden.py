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
not root cannot read its memory. Root (or CAP_SYS_PTRACE) still can.

A launcher child (a serve or batch worker) *pulls* its hand-over: the socket it inherits
is empty. Between `execve` and `restore()` the child is dumpable, and a same-user process
may duplicate that socket with pidfd_getfd(); it finds nothing there. Once non-dumpable,
the child makes a socket pair of its own and passes one end over the inherited socket;
the parent sends the secrets into it only if the kernel says the child made that pair
(SO_PEERCRED: the child's pid), so a socket slipped in by whoever holds a duplicate gets
nothing. The same answer may carry the child's channel (`PulledHandover(channel=...)`): the
sockets it then takes as its stdin and stdout, started with /dev/null there. A same-user
process that took the child's descriptors in its dumpable moment holds /dev/null: the
channel's ends exist only in processes that are non-dumpable.
A self re-exec (`reexec_early`, `reexec_hiding`) has no parent left to answer:
its socket is filled beforehand, and the moment stays open to a same-user pidfd_getfd()
where Yama does not restrict ptrace.
"""

from __future__ import annotations

import array
import contextlib
import errno
import json
import os
import socket
import sys
import threading
from collections.abc import Iterable, Mapping

from launcher import runtime, settings
from launcher.secrets import SECRET_NAME, is_secret_name, note_hidden, public_environment

HANDOVER_VAR = settings.SECRETS_FD.name
"""Names the inherited descriptor that carries the hidden variables (a JSON object);
`pull:N`: the descriptor the child asks its parent over (`PulledHandover`)."""
PULL_PREFIX = "pull:"
ANSWER_LIMIT_S = 600.0
"""How long a parent waits for its child to ask for its hand-over (a start-up on a loaded
machine takes seconds; a child that never asks is gone or broken)."""
SO_PEERPIDFD = 77
ASKS_LIMIT = 64
"""Sockets offered on one hand-over before the parent gives up (only the child's count)."""
PLAIN_NAMES = frozenset(
    ("HOME", "LOGNAME", "PATH", "PWD", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR")
)
"""Never hidden, even when the config references them: every process needs them."""
KEEP_PREFIXES = ("PYTHON", "LD_", "DYLD_", settings.PREFIX, "LC_", "VIRTUAL_ENV", "CONDA_")
"""Kept in the block by the early re-exec: what the interpreter needs before `restore()`."""
PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
SOCKET_BUFFER = 1 << 22
"""Asked of the hand-over socket (the kernel may give less): room for a whole environment."""
READ_CHUNK = 1 << 16
CHANNEL_FDS = 2
"""A child's channel, passed with its hand-over: its stdin's and its stdout's ends."""


def set_not_dumpable() -> bool:
    """Linux: no core dumps, and /proc/PID/{mem,environ} only for root (ptrace rules);
    whether this process is non-dumpable now (elsewhere: True, nothing to do)."""
    if not sys.platform.startswith("linux"):
        return True
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        # Checked, not assumed: a tracer may have turned the call into something else.
        return int(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def out_of_reach(pid: int, *, one_thread: bool = False) -> bool:
    """Whether the process `pid` (our child, not yet reaped) is out of another same-user
    process's reach: no thread traced, and (for a launcher that is not root) non-dumpable — its
    /proc/PID files then belong to root, not to its user. A process that attached to it
    in its first moments, or made its prctl a no-op, shows here. `one_thread`: it must
    have no thread but its main one (a worker asking for its hand-over has none)."""
    if not sys.platform.startswith("linux"):
        return True
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8", errors="replace") as status:
            fields = dict(line.split(":", 1) for line in status if ":" in line)
        # The kernel's own count, read at once: a tracer that keeps a thread of its own in
        # there, however it hops from thread to thread, makes it two or more.
        if one_thread and int(fields["Threads"]) != 1:
            return False
        if int(fields["TracerPid"]) != 0:
            return False
        # Every thread: a tracer may keep one the process made in its first moments and
        # let the others go.
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/status", encoding="utf-8", errors="replace") as st:
                tracer = next(int(line.split()[1]) for line in st if line.startswith("TracerPid:"))
            if tracer != 0:
                return False
        euid = os.geteuid()
        return euid == 0 or os.stat(f"/proc/{pid}/mem").st_uid != euid
    except (OSError, StopIteration, ValueError, IndexError, KeyError):
        return False


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
    held = runtime.current().secrets
    if held.in_block is not None:
        return True
    value = settings.SECRETS_FD.take()
    if value is None:
        return False
    held.in_block = set(os.environ)
    sealed_off = set_not_dumpable()  # before the secrets are in this process's memory
    pulled = value.startswith(PULL_PREFIX)
    raw, channel = b"", list[int]()
    try:
        if pulled:
            if not sealed_off:
                return True  # still dumpable: ask for nothing (the parent would refuse)
            fd = _ask(int(value[len(PULL_PREFIX) :]))
        else:
            fd = int(value)
        raw, channel = _receive(fd)
        _take_channel(channel)
        payload = json.loads(raw or b"{}")
    except (OSError, ValueError):
        return True  # a broken hand-over: run without the secrets rather than leak them
    finally:
        # An answer is never empty: a pulled hand-over that brought nothing was refused
        # (not asked for, refused, or its asks drowned by another process's writes).
        held.refused = pulled and not raw and not channel
    if isinstance(payload, dict):
        for group in ("plain", "secret"):
            values = {str(k): str(v) for k, v in dict(payload.get(group) or {}).items()}
            os.environ.update(values)
            if group == "secret":
                note_hidden(values)
    return True


def refused() -> bool:
    """Whether this process's pulled hand-over was refused: it holds no secrets, no channel."""
    return runtime.current().secrets.refused


def _receive(fd: int) -> tuple[bytes, list[int]]:
    """Everything the hand-over socket holds, and the descriptors passed with it (close-on-
    exec); the socket is closed whatever happens."""
    chunks: list[bytes] = []
    fds: list[int] = []
    with socket.socket(fileno=fd) as sock:
        while True:
            chunk, ancillary, _, _ = sock.recvmsg(
                READ_CHUNK, socket.CMSG_SPACE(CHANNEL_FDS * 4), socket.MSG_CMSG_CLOEXEC
            )
            fds.extend(_passed_fds(ancillary))
            if not chunk:
                return b"".join(chunks), fds
            chunks.append(chunk)


def _passed_fds(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    """The descriptors of a message's SCM_RIGHTS."""
    return [
        int.from_bytes(raw[i : i + 4], sys.byteorder, signed=True)
        for level, kind, raw in ancillary
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS
        for i in range(0, len(raw) - len(raw) % 4, 4)
    ]


def _take_channel(fds: list[int]) -> None:
    """The channel the parent passed (its stdin and stdout ends) made this process's fds
    0 and 1; anything else passed is closed."""
    if len(fds) == CHANNEL_FDS:
        os.dup2(fds[0], 0)
        os.dup2(fds[1], 1)
    for fd in fds:
        os.close(fd)


def _ask(fd: int) -> int:
    """Pass one end of a new socket pair over the inherited socket `fd` (then closed); the
    other end, from which the parent's answer reads to EOF."""
    ours, theirs = socket.socketpair()
    try:
        with socket.socket(fileno=fd) as parent:
            rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, _fds_bytes([theirs.fileno()]))]
            parent.sendmsg([b"?"], rights)
    except OSError:
        ours.close()
        raise
    finally:
        theirs.close()
    return ours.detach()


def _fds_bytes(fds: list[int]) -> bytes:
    return array.array("i", fds).tobytes()


class PulledHandover:
    """A child's hand-over it pulls once non-dumpable: `env` for its start (`fd` passed to
    it), then `answer(pid)` once it runs; `close()` if it never started."""

    def __init__(
        self,
        values: Mapping[str, object],
        env: dict[str, str],
        channel: tuple[int, int] | None = None,
    ) -> None:
        self._payload = json.dumps(dict(values)).encode()
        # Our own copies: the caller closes its ends once the child is spawned.
        self._channel = [os.dup(fd) for fd in channel] if channel is not None else []
        ours, theirs = socket.socketpair()
        self._ours: socket.socket | None = ours
        self.refused = threading.Event()
        """Set when the child was found within another process's reach: it got nothing."""
        self.fd = theirs.detach()
        os.set_inheritable(self.fd, True)
        self.env = {**env, HANDOVER_VAR: f"{PULL_PREFIX}{self.fd}"}

    def answer(self, pid: int) -> None:
        """The child `pid` started: close our copy of its end, answer it from a thread."""
        os.close(self.fd)
        ours, self._ours = self._ours, None
        channel, self._channel = self._channel, []
        if ours is not None:
            args = (ours, self._payload, pid, channel, self.refused)
            threading.Thread(target=_answer, args=args, name="handover", daemon=True).start()
        else:  # answered before: nothing more goes out
            for fd in channel:
                os.close(fd)

    def close(self) -> None:
        """The child never started: nothing to answer."""
        with contextlib.suppress(OSError):
            os.close(self.fd)
        if self._ours is not None:
            self._ours.close()
            self._ours = None
        for fd in self._channel:
            os.close(fd)
        self._channel = []


def _answer(
    ours: socket.socket, payload: bytes, pid: int, channel: list[int], refused: threading.Event
) -> None:
    """Send `payload` (and the `channel` descriptors with it) into the first socket offered
    that the child `pid` made itself, if out of reach (else `refused` is set, before the
    child sees its EOF); our copies of the channel are closed at the end."""
    import struct

    try:
        child: int | None = os.pidfd_open(pid)
    except (OSError, AttributeError):
        child = None
    with ours, contextlib.ExitStack() as cleanup:
        for fd in channel:
            cleanup.callback(os.close, fd)
        if child is not None:
            cleanup.callback(os.close, child)
        ours.settimeout(ANSWER_LIMIT_S)
        for _ in range(ASKS_LIMIT):
            try:
                data, ancillary, _, _ = ours.recvmsg(1, socket.CMSG_SPACE(4))
            except OSError:
                break  # no ask in all that time
            if not data and not ancillary:
                return  # the child is gone (EOF)
            fds = _passed_fds(ancillary)
            for fd in fds[1:]:
                os.close(fd)
            if not fds:
                continue
            try:
                offered = socket.socket(fileno=fds[0])
            except OSError:
                os.close(fds[0])
                continue
            with offered:
                try:
                    cred = offered.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
                except OSError:
                    continue
                if struct.unpack("3i", cred)[0] != pid or not _same_process(offered, child):
                    continue  # made by another process: it gets nothing
                if not out_of_reach(pid, one_thread=True):
                    refused.set()
                    import logging

                    logging.getLogger(__name__).warning(
                        "hand-over: the child %d is traced, threaded or dumpable: it gets nothing",
                        pid,
                    )
                    return
                with contextlib.suppress(OSError):
                    offered.settimeout(ANSWER_LIMIT_S)
                    rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, _fds_bytes(channel))]
                    sent = offered.sendmsg([payload], rights if channel else [])
                    offered.sendall(payload[sent:])
                return
        # Asks used up by bytes another process wrote into a copy of the child's socket:
        # the child's own ask is never read, and it gets nothing.
        refused.set()


def _same_process(sock: socket.socket, child: int | None) -> bool:
    """Whether `sock`'s peer was made by the process of the pidfd `child` itself, not by
    a process that died and whose pid the child got (pidfs: one inode per process,
    Linux 6.9+; elsewhere, or without SO_PEERPIDFD, the pid alone decides)."""
    if child is None:
        return True
    try:
        pidfd = sock.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD)
    except OSError as exc:
        return exc.errno == errno.ENOPROTOOPT
    try:
        return os.fstat(pidfd).st_ino == os.fstat(child).st_ino
    finally:
        os.close(pidfd)


def hide_referenced(names: Iterable[str]) -> set[str]:
    """After an early re-exec: mark config-referenced variables secret; returns those still
    in the environment block (kept for the interpreter), which need a full re-exec."""
    wanted = {n for n in set(names) - PLAIN_NAMES if n in os.environ}
    note_hidden({n: os.environ[n] for n in wanted})
    return wanted & (runtime.current().secrets.in_block or set())


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


def handed_secrets() -> dict[str, str]:
    """The variables a launcher child gets as secrets, never in its block: this process's
    secret-named and hidden ones."""
    return {k: v for k, v in os.environ.items() if is_secret_name(k)}


def child_handover(channel: tuple[int, int] | None = None) -> PulledHandover:
    """For a launcher child (a serve or batch worker): its scrubbed `env`, the `fd` to pass
    it (`pass_fds`), and `answer(pid)` to call once it started (`close()` if it did not);
    `channel`: its stdin's and stdout's ends, handed over with the secrets."""
    return PulledHandover({"secret": handed_secrets()}, public_environment(), channel=channel)
