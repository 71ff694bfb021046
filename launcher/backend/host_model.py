"""Which `model` a host may name in `spawn_subagent`: a `scripted:` file only from serve's
own directories, read once, and no error that shows what a file holds.

A `scripted:PATH` model reads PATH, and its parse errors would tell the host about that
file: so a host's spec is refused unless the file serve opened lies inside serve's config
dir, its workspace or a directory the operator allowed (`serve --scripted-dir`), and a
script there that does not parse is reported by line only. The file is opened once, the
opened file itself is checked (never the path again: a symlink swapped in between would
point elsewhere), and its text goes to the worker, which never opens the path.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

from launcher.errors import ConfigError, UsageError

SCRIPTED = "scripted:"
OWN_WORDS = ("cannot read script", "empty script")
"""Script errors worded wholly by us (an OS reason at most): safe to pass on."""
MAX_HOST_SCRIPT_BYTES = 1024 * 1024
"""The largest `scripted:` file serve reads for a host. A script is a test fixture (ten
thousand steps are ~600 KB), and PyYAML's pure-Python composer takes ~10 s a MiB on 2
busy cores: a bound on the memory and the thread time one call may cost."""
F_GETPATH = 50
"""macOS fcntl: the path of an open file (the kernel's, symlinks resolved)."""


def scripted_path(spec: str, workspace: Path) -> Path:
    """The file a `scripted:` spec names (relative to the workspace), symlinks resolved."""
    path = Path(spec[len(SCRIPTED) :]).expanduser()
    return (path if path.is_absolute() else workspace / path).resolve()


def read_host_script(spec: str | None, *, roots: Sequence[Path], workspace: Path) -> str | None:
    """The text of a host's `scripted:` spec, read once from inside `roots`; None for any
    other spec. UsageError if the file is outside, unreadable, too big or no script.

    Every message names the spec and the rule, never a byte of the file. Blocking (it
    reads and parses): serve calls it on a thread.
    """
    if not spec or not spec.startswith(SCRIPTED):
        return None
    homes = [root.resolve() for root in roots]
    try:
        path = scripted_path(spec, workspace)
    except (OSError, RuntimeError) as exc:  # a symlink loop (RuntimeError before 3.13)
        raise UsageError(f"model '{spec}': cannot read script: {_reason(exc)}") from None
    if not _inside(path, homes):
        raise _outside(spec, roots)
    data = _read_inside(spec, path, homes, roots)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"model '{spec}': cannot read script: not UTF-8 text") from None
    _check_parses(spec, text, path)
    return text


def _read_inside(spec: str, path: Path, homes: list[Path], roots: Sequence[Path]) -> bytes:
    """The bytes of the regular file at `path`, if the file opened is inside `homes`."""
    # No following a last component swapped for a symlink since `path` was resolved, and
    # no blocking on a FIFO put there: what was opened is then checked on its descriptor.
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise UsageError(f"model '{spec}': cannot read script: {_reason(exc)}") from None
    try:
        real = _opened_path(fd, path)
        if real is None or not _inside(real, homes):
            raise _outside(spec, roots)  # a directory on the way was swapped
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(f"model '{spec}': cannot read script: not a regular file")
        if info.st_size > MAX_HOST_SCRIPT_BYTES:
            raise _too_big(spec)
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_HOST_SCRIPT_BYTES and (chunk := os.read(fd, 65536)):
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_HOST_SCRIPT_BYTES:
            raise _too_big(spec)  # it grew after fstat
        return b"".join(chunks)
    except OSError as exc:
        raise UsageError(f"model '{spec}': cannot read script: {_reason(exc)}") from None
    finally:
        os.close(fd)


def _opened_path(fd: int, opened: Path) -> Path | None:
    """Where the open file `fd` is: the kernel's name for it (Linux /proc, macOS
    F_GETPATH), else `opened` if that path still names the same file; None if not."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        pass
    if sys.platform == "darwin":
        import fcntl

        try:
            raw = fcntl.fcntl(fd, F_GETPATH, bytes(1024))
            return Path(os.fsdecode(raw.split(b"\0", 1)[0]))
        except OSError:
            pass
    try:
        here, there = os.fstat(fd), os.stat(opened, follow_symlinks=False)
    except OSError:
        return None
    return opened if (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino) else None


def _check_parses(spec: str, text: str, path: Path) -> None:
    from launcher.models.scripted import parse_script

    try:
        parse_script(text, path)
    except ConfigError as exc:
        if exc.message.startswith(OWN_WORDS):
            raise UsageError(f"model '{spec}': {exc.message}") from None
        # The parser's field names and values come from the file: say where, not what.
        line = f" (line {exc.line})" if exc.line else ""
        raise UsageError(
            f"model '{spec}': not a usable script{line}: run `subagent spawn --model {spec}` "
            "on this machine for the details"
        ) from None


def _inside(path: Path, homes: Sequence[Path]) -> bool:
    return any(path.is_relative_to(home) for home in homes)


def _outside(spec: str, roots: Sequence[Path]) -> UsageError:
    where = ", ".join(dict.fromkeys(str(r) for r in roots))
    return UsageError(
        f"model '{spec}': a scripted model from the host must be a file inside {where} "
        "(start serve with --scripted-dir DIR to allow another directory)"
    )


def _too_big(spec: str) -> UsageError:
    return UsageError(
        f"model '{spec}': the script is larger than {MAX_HOST_SCRIPT_BYTES // 1024} KiB, "
        "the most serve reads for a host"
    )


def _reason(exc: BaseException) -> str:
    """An OS error's reason in the OS's words, never the path or content around it."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return "a symlink loop" if isinstance(exc, RuntimeError) else type(exc).__name__


def scripted_roots(
    config_dir: Path | None, workspace: Path, extra: Sequence[Path] = ()
) -> list[Path]:
    """The directories a host's `scripted:` file may come from: the config dir (or, when
    discovered, the user config dir), the workspace, and what the operator added."""
    config = config_dir or Path("~/.config/subagent").expanduser()
    return [config, workspace, *extra]
