"""The fork server: one small process per session, inside the holder's namespaces, that
forks the model's commands there (an unprivileged launcher's; entry.py is its client).

    python -I -S .../launcher/tools/sandbox/forkserver.py SOCKET USERNS MNTNS NETWORK [PIDNS]

Started by the launcher's confined thread, so it already has that thread's Landlock
domain, seccomp filter, no_new_privs and empty capability sets. Being one thread, it then
enters the user and mount namespaces by the descriptors it was given (and the holder's PID
namespace, where its commands are born: pidns.py), empties the bounding
set that entering gave back, turns non-dumpable (its memory, descriptors and /proc entries
need CAP_SYS_PTRACE, which no command holds) and adds a filter refusing signals to itself
(its commands share its Landlock domain, which would let them through). Then it serves
the socket: `spawn` forks a command (its own session, the three descriptors passed, its
working directory resolved in the namespace, the cgroup join written first) and answers
its pid; `reap` answers the exit status of one the launcher saw end (its pidfd). Each
message: 4 bytes of length, then JSON; descriptors ride on `spawn`. Stdlib only, loaded
by path; it ends when the socket closes.
"""

from __future__ import annotations

import ctypes
import errno
import importlib.util
import json
import os
import signal
import socket
import struct
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
HEADER = struct.Struct("!I")
MAX_MESSAGE = 16 << 20
MAX_FDS = 4
ENTRY_FAILED = 1
"""A command that could not start in its working directory exits so (it never ran)."""
NOT_FOUND = 127


def _sibling(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"_forkserver_{name}", Path(__file__).with_name(f"{name}.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def send(sock: socket.socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    """One framed message, with `fds` (SCM_RIGHTS) on its first byte."""
    data = json.dumps(message).encode()
    frame = HEADER.pack(len(data)) + data
    if fds:
        sent = socket.send_fds(sock, [frame[:1]], fds)
        frame = frame[sent:]
    if frame:
        sock.sendall(frame)


def receive(sock: socket.socket) -> tuple[dict[str, Any], list[int]] | None:
    """One framed message and the descriptors it carried; None at EOF."""
    first, fds, _, _ = socket.recv_fds(sock, 1, MAX_FDS, socket.MSG_CMSG_CLOEXEC)
    if not first:
        for fd in fds:
            os.close(fd)
        return None
    head = first + _exactly(sock, HEADER.size - 1)
    (size,) = HEADER.unpack(head)
    if size > MAX_MESSAGE:
        raise OSError(f"message of {size} bytes")
    return json.loads(_exactly(sock, size)), fds


def _exactly(sock: socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    while size:
        chunk = sock.recv(size)
        if not chunk:
            raise EOFError("the other end closed mid-message")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _enter(user: int, mnt: int, network: bool, pid: int | None = None) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    spaces = [(user, CLONE_NEWUSER, "user"), (mnt, CLONE_NEWNS, "mount")]
    if pid is not None:  # this server stays outside; what it forks is born in there
        spaces.append((pid, CLONE_NEWPID, "pid"))
    for fd, kind, name in spaces:
        if libc.setns(fd, kind) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"setns {name}: {os.strerror(code)}")
        os.close(fd)
    os.chdir("/")
    try:
        last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):  # entering the user namespace gave the set back in full
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE)")
    seccomp = _sibling("seccomp")
    me = os.getpid()
    seccomp.filter_thread(network, seccomp.protected_ids(me, os.getpgid(0), (me,)))


def _spawn(request: dict[str, Any], fds: list[int]) -> int:
    """Start one command in its own session; its pid. An OSError names what failed."""
    argv, env, cwd = list(request["argv"]), dict(request["env"]), str(request["cwd"])
    if len(fds) > 3:
        pid = os.fork()  # the child joins the cgroup before it runs anything
        if pid:
            return pid
        try:
            _child(argv, env, cwd, fds)
        finally:
            os._exit(NOT_FOUND)
    try:
        os.chdir(cwd)  # resolved here, inside; the child inherits it
    except OSError as exc:
        raise OSError(exc.errno, f"cannot change directory to {cwd}: {exc.strerror}") from exc
    try:
        # vfork and exec (posix_spawn): no copy of this process per command.
        actions = [(os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(fds[:3])]
        return os.posix_spawn(
            _which(argv[0], env),
            argv,
            env,
            file_actions=actions,
            setsid=True,
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
        )
    except OSError as exc:
        raise OSError(exc.errno, f"{argv[0]}: {exc.strerror}") from exc
    finally:
        os.chdir("/")


def _which(name: str, env: dict[str, str]) -> str:
    """`name` found on the command's own PATH, as Popen would (posix_spawnp would search
    this server's)."""
    if "/" in name:
        return name
    for folder in os.get_exec_path(env):
        path = os.path.join(folder, name)
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))


def _child(argv: list[str], env: dict[str, str], cwd: str, fds: list[int]) -> None:
    os.setsid()
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores them; commands do not
        signal.signal(sig, signal.SIG_DFL)
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)  # the copies are inheritable
    if len(fds) > 3:  # the session's cgroup, opened by the launcher (the host's cgroupfs)
        try:
            os.write(fds[3], b"%d" % os.getpid())
        except OSError:
            pass  # as the join script: a cgroup that refuses is no reason not to run
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    try:
        os.chdir(cwd)
    except OSError as exc:
        _say(f"subagent: cannot change directory to {cwd}: {exc.strerror}")
        os._exit(ENTRY_FAILED)
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as exc:
        _say(f"subagent: {argv[0]}: {exc.strerror}")


def _say(line: str) -> None:
    try:
        os.write(2, (line + "\n").encode(errors="replace"))
    except OSError:
        pass


def _serve(sock: socket.socket) -> None:
    while (message := receive(sock)) is not None:
        request, fds = message
        try:
            if request.get("op") == "spawn":
                answer: dict[str, Any] = {"pid": _spawn(request, fds)}
            elif request.get("op") == "reap":
                _, status = os.waitpid(int(request["pid"]), 0)
                answer = {"status": os.waitstatus_to_exitcode(status)}
            else:
                answer = {"error": f"unknown request {request.get('op')!r}"}
        except OSError as exc:
            answer = {"error": exc.strerror or str(exc)}
        except (KeyError, ValueError, TypeError) as exc:
            answer = {"error": f"bad request: {exc}"}
        finally:
            for fd in fds:
                os.close(fd)
        send(sock, answer)


def main(argv: list[str]) -> int:
    """Enter, say ready (or the error), serve until the socket closes."""
    sock = socket.socket(fileno=int(argv[0]))
    sock.set_inheritable(False)  # no command gets it
    try:
        _enter(int(argv[1]), int(argv[2]), argv[3] == "1", int(argv[4]) if argv[4:] else None)
    except OSError as exc:
        send(sock, {"error": f"cannot enter the sandbox's namespaces: {exc}"})
        return 1
    send(sock, {"ready": os.getpid()})
    _serve(sock)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
