"""`Runtime`: the state this process gathers while it runs, owned in one place.

What a process learns (tokens to mask, variables it hid), holds (session locks it claimed
for a resume), counts (commits between two store checkpoints, children started on purpose,
sessions relying on the subreaper sweep), shares (the store's connection, the protected
places' originals) and probes once (the sandbox mechanisms) lives
here, not in module globals. The entry point (the CLI, serve's worker, batch's worker)
installs a fresh one; each test gets a fresh one (tests/conftest.py).

Why a process-wide accessor (`current()`) and not only a parameter: the readers are leaf
code with no session at hand — the masking every sink and log line runs, the process
hygiene every spawned child reports to, the sandbox probe a tool asks before its first
command — and several run on threads or in signal-time paths. Passing a session's
reference down to each would thread one more argument through every spawn and every
mask; the state is the process's, not a session's, so one installed value says it.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3

    from launcher.store.runlock import RunLock
    from launcher.trust.record import Key, _Originals


@dataclasses.dataclass(eq=False)
class Secrets:
    """Values masked beyond the environment's credential-named ones (secrets.py)."""

    hidden: dict[str, str] = dataclasses.field(default_factory=dict)
    """Variables this process took out of its initial environment (procs/hidden.py)."""
    learned: set[str] = dataclasses.field(default_factory=set)
    """Credentials learned while running (OAuth tokens): masked like env secrets."""
    generation: int = 0
    """Bumped by every learned value, so a LiveMask knows to rebuild."""
    in_block: set[str] | None = None
    """After a hand-over was restored: the names that stayed in the environment block
    (procs/hidden.py); None before."""
    refused: bool = False
    """A pulled hand-over that brought nothing: the parent found this process within
    another's reach when it asked (procs/hidden.py)."""
    handed: dict[str, tuple[str, float]] = dataclasses.field(default_factory=dict)
    """Tokens serve learned per request (callers' JWTs), handed down to workers started
    from now on: value -> (its variable, when it expires) (backend/callers.py)."""
    handed_generation: int = 0
    """Bumped when the secrets a new worker is handed change after start-up (a new caller
    token): a worker started before holds too few (backend/spare.py retires it)."""


@dataclasses.dataclass(eq=False)
class Store:
    """The store's per-process bookkeeping (store/runlock.py, store/checkpoint.py)."""

    claimed: dict[Path, RunLock] = dataclasses.field(default_factory=dict)
    """Locks taken for a session about to be continued, until its writer adopts them."""
    commits: dict[Path, int] = dataclasses.field(default_factory=dict)
    """Commits to each home's store since its last checkpoint."""
    checkpointing: set[Path] = dataclasses.field(default_factory=set)
    """Homes whose checkpoint is running now."""
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    connections: dict[Path, sqlite3.Connection] = dataclasses.field(default_factory=dict)
    """This process's connection to each home's store, shared by its sessions (store/sink.py)."""
    writing: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    """Sinks on two threads' event loops must not interleave their transactions."""


@dataclasses.dataclass(eq=False)
class Children:
    """Process hygiene's count (procs/strays.py): what was started on purpose, who sweeps."""

    started: dict[int, int] = dataclasses.field(default_factory=dict)
    """pid -> start time: children started on purpose (not orphans to sweep)."""
    subreaping: int = 0
    """Sessions of this process that made it a subreaper and have not ended."""
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


@dataclasses.dataclass(eq=False)
class Sandbox:
    """What the sandbox probed and said once per process (tools/sandbox/)."""

    probes: dict[str, str | None] = dataclasses.field(default_factory=dict)
    """Mechanism -> None when it works here, else why not."""
    said: set[str] = dataclasses.field(default_factory=set)
    """Problems already told to the user (each once)."""


@dataclasses.dataclass(eq=False)
class Trust:
    """The protected places' originals, shared by this process's sessions (trust/record.py)."""

    originals: dict[Key, _Originals] = dataclasses.field(default_factory=dict)
    """Per set of places: the originals the live sessions put back to; the last one out
    lets them go."""
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


@dataclasses.dataclass(eq=False)
class Runtime:
    """One process's run-time state; see the module docstring."""

    secrets: Secrets = dataclasses.field(default_factory=Secrets)
    store: Store = dataclasses.field(default_factory=Store)
    children: Children = dataclasses.field(default_factory=Children)
    sandbox: Sandbox = dataclasses.field(default_factory=Sandbox)
    trust: Trust = dataclasses.field(default_factory=Trust)


_installed = Runtime()


def current() -> Runtime:
    """The runtime installed in this process (a default one until an entry point installs)."""
    return _installed


def install(runtime: Runtime) -> Runtime:
    """Make `runtime` this process's; returns the one it replaces."""
    global _installed
    previous, _installed = _installed, runtime
    return previous
