"""Where a Python the launcher starts may read code from: never a directory the model writes.

Python puts PYTHONPATH's entries before the standard library, an empty or relative entry
made absolute against the directory the interpreter starts in; the dynamic loader reads
LD_LIBRARY_PATH the same way (a CUDA-style `export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/dir`
leaves an empty entry). A worker starts in the workspace, which the model writes: a
`sitecustomize.py`, a module or a `libm.so.6` left there would run, unconfined and as the
launcher's user, in every worker started after it. So the launcher's own interpreters
(workers, the watchdog and what it starts) get those lists' entries made absolute against
this process's directory, less any inside a directory the model writes (the one they start
in, the session's workspace) or holding it (from `~/code` on the path, a workspace
`~/code/mcp` would be imported as the `mcp` package); LD_PRELOAD's paths likewise;
PYTHONUSERBASE's site-packages likewise, and no user site-packages at all when the
workspace holds them (a workspace that is the home directory); and no PYTHONPYCACHEPREFIX
(the sandbox lets the model write places such as /dev/shm: compiled files are read from
beside their sources instead).
"""

from __future__ import annotations

import os
import site
from collections.abc import Iterable, Mapping
from pathlib import Path

from launcher.exec_path import path_visits

PATH_LISTS = ("PYTHONPATH", "LD_LIBRARY_PATH")
LOADED = ("LD_PRELOAD", "LD_AUDIT")
"""Libraries the loader loads into every process, named by path or bare name."""
DROPPED = ("PYTHONPYCACHEPREFIX",)
NO_USER_SITE = "PYTHONNOUSERSITE"
PACKAGE_HOME = Path(__file__).resolve().parents[2]
"""The directory this package is imported from: kept wherever it is (a checkout run with
`PYTHONPATH=.`, a venv inside the workspace: its code is the model's to change already)."""


def interpreter_env(
    env: Mapping[str, str], cwd: str | Path, *, also: Iterable[str | Path] = ()
) -> dict[str, str]:
    """`env` for one of the launcher's own interpreters, started in `cwd`; `also`: other
    directories the model writes (the session's workspace, when it starts elsewhere)."""
    out = {k: v for k, v in env.items() if k not in DROPPED}
    written = [Path(cwd).resolve(), *(Path(p).resolve() for p in also)]
    for name in PATH_LISTS:
        if name in out:
            # The loader splits on ";" too: "/x;" is an empty entry as "/x:" is.
            _keep(out, name, out[name].replace(";", os.pathsep).split(os.pathsep), written,
                  os.pathsep)  # fmt: skip
    for name in LOADED:
        if name in out:
            items = out[name].replace(":", " ").split()
            # A bare name is looked up in the loader's own directories; a path is a file.
            named = [i for i in items if "/" not in i]
            _keep(out, name, [i for i in items if "/" in i], written, " ", named)
    if "PYTHONUSERBASE" in out:
        _keep(out, "PYTHONUSERBASE", [out["PYTHONUSERBASE"]], written, os.pathsep)
    user_base = Path(out.get("PYTHONUSERBASE") or site.getuserbase()).resolve()
    # Unless this package is imported from there (`pip install --user`): then it is the
    # model's to change already.
    if not _safe(str(user_base), written) and user_base not in PACKAGE_HOME.parents:
        out[NO_USER_SITE] = "1"
    return out


def _keep(
    out: dict[str, str],
    name: str,
    entries: list[str],
    written: list[Path],
    sep: str,
    more: list[str] | None = None,
) -> None:
    kept = [*(more or []), *(p for p in map(_absolute, entries) if _safe(p, written))]
    if kept:
        out[name] = sep.join(kept)
    else:
        del out[name]


def _absolute(entry: str) -> str:
    # Empty: "the directory I start in", here never meant for the launcher's own processes.
    return os.path.abspath(entry) if entry else ""


def _safe(path: str, written: list[Path]) -> bool:
    if not path:
        return False
    real = Path(path).resolve()
    if real == PACKAGE_HOME or PACKAGE_HOME in real.parents:
        return True
    # Judged as written, after each link and resolved: a link the model re-points still
    # names the directory it lies in.
    visits = [Path(v) for v in path_visits(path)]
    return not any(v == w or w in v.parents or v in w.parents for v in visits for w in written)


def drop_written_paths(workspace: str | Path) -> None:
    """Take what lies in `workspace` (where a session's model writes) off this process's own
    import path, and PYTHONPATH's entries holding it: serve, long-lived, imports modules after
    the model wrote. (`python -m` put the directory it started in first; a user site inside a
    workspace that is the home directory is there too.) The package's own directory stays."""
    import sys

    start = os.getcwd()  # where Python resolved the entries: this process never moves
    written = [Path(workspace).resolve()]
    here = written[0]
    raw = os.environ.get("PYTHONPATH", "")
    from_env = {_absolute(e) or start for e in raw.split(os.pathsep)} if raw else set()
    kept = []
    for entry in sys.path:
        path = os.path.abspath(entry or start)
        real = Path(path).resolve()
        inside = real == here or here in real.parents
        if (inside or path in from_env) and not _safe(path, written):
            continue
        kept.append(entry)
    sys.path[:] = kept
