"""The sandbox as data: what the model's shell may not read, where it may write, the network.

A `SandboxPolicy` says nothing about how it is enforced (apply.py and its helpers do
that); the rest of the program builds one from the agent's `sandbox:` settings and hands
it over.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from launcher.config.types import SandboxSettings
from launcher.secret_files import HOME_CREDENTIALS, credential_paths, secret_files
from launcher.tools.sandbox.gitdirs import worktree_git_dirs

HOME_SECRETS = HOME_CREDENTIALS
"""Paths under the user's home the shell never reads, whatever the agent says."""

DEVICE_FILES: tuple[str, ...] = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
)
"""The devices a shell uses; the rest of /dev (raw disks: root could read a denied file's
blocks there) is denied."""
SHARED_MEMORY = Path("/dev/shm")
"""POSIX semaphores and shared memory live here: without it Python's multiprocessing (and
so ProcessPoolExecutor) cannot start. Shared with the user's other processes."""


@dataclass(frozen=True)
class SandboxPolicy:
    """What a confined command may do: read all but `deny_read`, write only `writable`."""

    deny_read: tuple[Path, ...]
    writable: tuple[Path, ...]
    network: bool = False
    writable_files: tuple[Path, ...] = field(default=tuple(Path(p) for p in DEVICE_FILES))
    """Single files (devices, the session cgroup's `cgroup.procs`) the command may write."""
    protected: tuple[Path, ...] = ()
    """Paths in the writable roots the command may not change (launcher/trust)."""
    readable: tuple[Path, ...] = ()
    """Trees mounted after the policy was made, readable too: the /proc of the commands'
    PID namespace, reached through its holder (`/proc/PID/root/proc`)."""

    def with_writable_file(self, path: Path) -> SandboxPolicy:
        """The same policy, also allowed to write the one file `path`."""
        return replace(self, writable_files=(*self.writable_files, path))

    def with_readable(self, tree: Path) -> SandboxPolicy:
        """The same policy, also allowed to read the tree `tree`."""
        return replace(self, readable=(*self.readable, tree))

    def to_json(self) -> dict[str, object]:
        """The policy as plain JSON data (the standalone helper reads it back)."""
        return {
            "deny_read": [str(p) for p in self.deny_read],
            "writable": [str(p) for p in self.writable],
            "network": self.network,
            "writable_files": [str(p) for p in self.writable_files],
            "protected": [str(p) for p in self.protected],
            "readable": [str(p) for p in self.readable],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> SandboxPolicy:
        """Inverse of `to_json`."""

        def paths(key: str) -> tuple[Path, ...]:
            value = data.get(key, [])
            assert isinstance(value, list)
            return tuple(Path(str(p)) for p in value)

        return cls(
            paths("deny_read"),
            paths("writable"),
            bool(data.get("network")),
            paths("writable_files"),
            paths("protected"),
            paths("readable"),
        )


def expand_user_path(raw: str, home: Path) -> Path:
    """`~` and `~/x` against `home` (not the process's own HOME); other paths as given."""
    if raw == "~" or raw.startswith("~/"):
        return home / raw[2:]
    return Path(raw)


def denied_paths(state_home: Path, home: Path, extra: Iterable[str] = ()) -> tuple[Path, ...]:
    """The read deny list: SUBAGENT_HOME, the home's credential files (Ray's token too),
    the files serve reads as secrets (its token file), and `extra`."""
    found: list[Path] = [state_home, Path("/dev"), *secret_files()]
    found += credential_paths(home)
    found += [expand_user_path(raw, home) for raw in extra]
    # Resolved, so a symlinked home or a `..` in a path denies the real file.
    return tuple(dict.fromkeys(Path(os.path.realpath(p)) for p in found))


def build_policy(
    settings: SandboxSettings,
    *,
    workspace: Path,
    state_home: Path,
    home: Path,
    tmp: Path,
    protected: tuple[Path, ...] = (),
) -> SandboxPolicy:
    """The policy for one session: its workspace and private `tmp` writable but the
    `protected` paths in them (launcher/trust), secrets denied."""
    return SandboxPolicy(
        deny_read=denied_paths(state_home, home, settings.deny_read),
        writable=(
            Path(os.path.realpath(workspace)),
            Path(os.path.realpath(tmp)),
            *([SHARED_MEMORY] if SHARED_MEMORY.is_dir() else []),
            *worktree_git_dirs(Path(os.path.realpath(workspace))),
        ),
        network=settings.network,
        protected=protected,
    )
