"""Where subagent keeps what outlives a process: `SUBAGENT_HOME`."""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

from launcher import settings
from launcher.errors import StateHomeError

DEFAULT_HOME = Path("~/.local/state/subagent")


def state_home(env: dict[str, str] | None = None) -> Path:
    """`SUBAGENT_HOME`, else ~/.local/state/subagent."""
    env = dict(os.environ) if env is None else env
    value = settings.HOME.raw(env)
    return Path(value).expanduser() if value else DEFAULT_HOME.expanduser()


def new_session_id() -> str:
    """Sortable and unique: UTC time plus random hex."""
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


PRIVATE_DIR_MODE = 0o700
"""SUBAGENT_HOME and every directory under it: logs and events may quote secrets."""
PRIVATE_FILE_MODE = 0o600
"""Every file under SUBAGENT_HOME."""


def private_dir(path: Path, base: Path | None = None) -> Path:
    """Make `path` (and missing parents) with mode 0700; also tighten `base` down to `path`.

    Path.mkdir gives missing parents the default mode, so each level is made here.
    """
    try:
        _make_private(path, base)
    except OSError as exc:
        home = base if base is not None else path
        raise StateHomeError(
            f"SUBAGENT_HOME is not usable: cannot make or tighten {exc.filename or path} "
            f"({exc.strerror}); set SUBAGENT_HOME to a directory you can write",
            path=home,
        ) from None
    return path


def _make_private(path: Path, base: Path | None) -> None:
    missing = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for level in reversed(missing):
        level.mkdir(mode=PRIVATE_DIR_MODE, exist_ok=True)
    tighten = [path]
    if base is not None and path.is_relative_to(base):
        tighten += [p for p in path.parents if p.is_relative_to(base)]
    for level in tighten:
        if level.stat().st_mode & 0o777 != PRIVATE_DIR_MODE:
            level.chmod(PRIVATE_DIR_MODE)


def private_opener(path: str, flags: int) -> int:
    """An `open(..., opener=)` that creates files 0600 (and tightens an older, looser one)."""
    fd = os.open(path, flags, PRIVATE_FILE_MODE)
    if os.fstat(fd).st_mode & 0o777 != PRIVATE_FILE_MODE:
        os.fchmod(fd, PRIVATE_FILE_MODE)
    return fd


def append_private(path: Path, data: bytes) -> None:
    """Append `data` to `path` (made 0600) in one write, so concurrent lines stay whole."""
    fd = private_opener(str(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
