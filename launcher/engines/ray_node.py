"""A worker on a Ray node, as batch's and serve's Ray tasks start it.

It gets what a local worker gets. Its environment block: this node's variables that are
not secret (Ray's own left out), and the driver's that a worker reads (`handed_env`:
`SUBAGENT_*` — the sandbox mode, the deny rules, to which the node's Ray token file is
added —, `OTEL_*`, the trace context). It makes itself non-dumpable before it holds
anything, talks over sockets, and offers a key: its Job and secrets come sealed to it
(procs/sealed.py), never as a task argument or a variable Ray sets.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO, NamedTuple

from launcher import settings
from launcher.procs.hidden import HANDOVER_VAR, PulledHandover, out_of_reach, set_not_dumpable
from launcher.procs.pyenv import interpreter_env
from launcher.procs.sealed import OFFER_NONCE_VAR, SEAL_KEY_OP, SENDER_VAR
from launcher.secret_files import DENY_READ_VAR, secret_files
from launcher.secrets import public_environment

PASSED_ENV = (settings.HOME.name, settings.MODEL.name, "PATH", "HOME")
"""Driver variables a task's worker needs on its node (model keys travel the same way, and
so do the OTEL_* variables: a traced batch's tasks export their spans too)."""
RAY_TOKEN_PATH_ENV = "RAY_AUTH_TOKEN_PATH"
RAY_PREFIX = "RAY_"
RAY_DEFAULT_TOKEN = Path(".ray") / "auth_token"
"""Under the home: where Ray keeps a cluster's token when RAY_AUTH_TOKEN_PATH is unset."""
HANDED_NAMES = (*PASSED_ENV, "TRACEPARENT", "TRACESTATE")
HANDED_PREFIXES = (settings.PREFIX, "OTEL_")
"""serve's variables a worker on a node gets in its block, as a local worker inherits them."""
SEALED_ARGV = (sys.executable, "-P", "-m", "launcher.backend.worker", "--sealed")
"""The worker, told its secrets come sealed before its Job (backend/worker.py)."""


def ray_token_files(environ: Mapping[str, str]) -> list[Path]:
    """This node's Ray token files (the cluster's key: whoever reads one may run code on
    every node): where RAY_AUTH_TOKEN_PATH says, and Ray's default."""
    named = [environ.get(RAY_TOKEN_PATH_ENV, ""), str(Path.home() / RAY_DEFAULT_TOKEN)]
    return [Path(os.path.realpath(p)) for p in named if p and os.path.isfile(p)]


def worker_env(env: Mapping[str, str]) -> dict[str, str]:
    """On the node: the worker's environment block. This node's variables that are not
    secret, then serve's (`env`); the files denied to it are serve's and this node's
    (its token file, the Ray token)."""
    # Ray's own variables (its address, its processes' ids) tell a sub-agent's shell where
    # the cluster is: a local worker has none of them either.
    node = {k: v for k, v in public_environment().items() if not k.startswith(RAY_PREFIX)}
    denied = [*secret_files(node), *secret_files(env), *ray_token_files(os.environ)]
    block = {**node, **env}
    if denied:
        block[DENY_READ_VAR] = os.pathsep.join(dict.fromkeys(str(p) for p in denied))
    return block


def handed_env() -> dict[str, str]:
    """serve's variables for a worker's environment block on a Ray node: the not-secret
    ones a worker reads (a secret-named one never: secrets travel sealed)."""
    return {
        k: v
        for k, v in public_environment().items()
        if (k in HANDED_NAMES or k.startswith(HANDED_PREFIXES)) and k != HANDOVER_VAR
    }


class SealedStart(NamedTuple):
    """A started `--sealed` worker: the process, its stdin and stdout, and its key offer
    (the first line it wrote, checked to be its own)."""

    proc: subprocess.Popen[bytes]
    stdin: BinaryIO
    stdout: BinaryIO
    offer: bytes


def start_sealed_worker(
    workspace: str, env: Mapping[str, str], log_path: str, sender: str
) -> SealedStart:
    """On a node: a `--sealed` worker in `workspace` (`env`: the host's variables for its
    block, `handed_env`; `sender`: the driver's public key, the only one whose boxes it
    opens), and its key offer. ValueError (the worker killed) if the first line is not
    an offer from that worker."""
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    # This Ray worker turns non-dumpable before it makes a socket: another process of
    # the user may then neither open /proc/PID/fd nor take a descriptor with
    # pidfd_getfd, so it cannot write a key offer of its own into the worker's channel
    # nor read what goes down it. (It stays so for the later tasks Ray gives it.) A
    # process that is traced, or whose prctl was made a no-op, runs nothing of ours.
    if not set_not_dumpable() or not out_of_reach(os.getpid()):
        raise ValueError("sealed hand-over: this Ray worker process is traced or dumpable")
    # The nonce and the driver's key reach the worker over the pulled hand-over, which
    # it takes once non-dumpable and which answers only a socket the worker made: an
    # offer without the nonce (written into the channel in the moment before the worker
    # turns non-dumpable) is not its own.
    nonce = secrets.token_urlsafe(24)
    values = {"secret": {SENDER_VAR: sender, OFFER_NONCE_VAR: nonce}}
    # Its stdin and stdout are sockets, not pipes: a socket cannot be opened through
    # /proc/PID/fd. And they are not its fds 0 and 1 from the start: a fresh execve is
    # dumpable until restore(), and a process of the user could take them with
    # pidfd_getfd in that moment and keep them, to read every line down the channel and
    # write lines of its own up it. The worker starts on /dev/null and gets the
    # channel's ends with its pulled hand-over, once non-dumpable. Our copies of its
    # ends are closed right after the spawn.
    down, worker_in = socket.socketpair()
    up, worker_out = socket.socketpair()
    channel = (worker_in.fileno(), worker_out.fileno())
    handover = PulledHandover(values, worker_env(env), channel=channel)
    with open(log_path, "ab") as errlog, down, up:
        try:
            proc = subprocess.Popen(
                SEALED_ARGV,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errlog,
                cwd=workspace,
                env=interpreter_env(handover.env, workspace),
                pass_fds=(handover.fd,),
                start_new_session=True,
            )
        except BaseException:
            handover.close()
            raise
        finally:
            worker_in.close()
            worker_out.close()
        # The files keep the sockets open; closing `stdin` is the worker's EOF.
        stdin, stdout = down.makefile("wb"), up.makefile("rb")
        _end_at_exit(proc, up.dup())
    handover.answer(proc.pid)
    first = stdout.readline()
    if not _is_own_offer(first, nonce):
        proc.kill()
        proc.wait()
        stdin.close()
        stdout.close()
        if handover.refused.is_set():
            raise ValueError(
                "sealed hand-over refused: when the worker asked, another process could reach"
                " it (traced, an extra thread, or still dumpable); it was given nothing"
            )
        raise ValueError("sealed hand-over: the first line is not the started worker's key offer")
    return SealedStart(proc, stdin, stdout, first)


def _end_at_exit(proc: subprocess.Popen[bytes], up: socket.socket) -> None:
    """Once the worker has exited, all it wrote is queued: reading its channel ends there
    (SHUT_RD: what is queued is still read, then EOF), even while another process holds a
    copy of the worker's end and would keep the run waiting for an EOF."""

    def watch() -> None:
        with up:
            proc.wait()
            with contextlib.suppress(OSError):
                up.shutdown(socket.SHUT_RD)

    threading.Thread(target=watch, name="worker-exit", daemon=True).start()


def _is_own_offer(line: bytes, nonce: str) -> bool:
    """Whether `line` is a key offer that echoes `nonce`."""
    try:
        offer = json.loads(line)
    except ValueError:
        return False
    if not isinstance(offer, dict) or offer.get("op") != SEAL_KEY_OP:
        return False
    echoed = offer.get("nonce")
    return isinstance(echoed, str) and hmac.compare_digest(echoed.encode(), nonce.encode())
