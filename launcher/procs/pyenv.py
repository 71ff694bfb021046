"""Where a Python the launcher starts may read code from: never the directory it starts in.

Python puts PYTHONPATH's entries before the standard library, an empty or relative entry
made absolute against the directory the interpreter starts in. A worker starts in the
workspace, which the model writes: a `sitecustomize.py` (or a module named like one the
launcher imports) left there would run, unconfined and as the launcher's user, in every
worker started after it — and `export PYTHONPATH=$PYTHONPATH:/dir` with the variable unset
leaves just such an empty entry. So the launcher's own interpreters (workers, the watchdog)
get PYTHONPATH's entries made absolute against this process's directory, less any inside the
directory they start in or holding it (from `~/code` on the path, a workspace `~/code/mcp`
would be imported as the `mcp` package); the variables naming one directory Python reads
code from (PYTHONPYCACHEPREFIX's compiled files, PYTHONUSERBASE's site-packages) likewise.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

PATH_LIST = "PYTHONPATH"
ONE_DIR = ("PYTHONPYCACHEPREFIX", "PYTHONUSERBASE")
PACKAGE_HOME = Path(__file__).resolve().parents[2]
"""The directory this package is imported from: an entry naming it is kept wherever it is
(a checkout run with `PYTHONPATH=.`: its code is the model's to change already)."""


def interpreter_env(env: Mapping[str, str], cwd: str | Path) -> dict[str, str]:
    """`env` for one of the launcher's own interpreters, started in `cwd`."""
    out = dict(env)
    start = Path(cwd).resolve()
    if PATH_LIST in out:
        kept = [p for p in map(_absolute, out[PATH_LIST].split(os.pathsep)) if _safe(p, start)]
        if kept:
            out[PATH_LIST] = os.pathsep.join(kept)
        else:
            del out[PATH_LIST]
    for name in ONE_DIR:
        if name in out:
            path = _absolute(out[name])
            if path and _safe(path, start):
                out[name] = path
            else:
                del out[name]
    return out


def _absolute(entry: str) -> str:
    # Empty: Python's "the directory I start in", here never meant for a worker.
    return os.path.abspath(entry) if entry else ""


def _safe(path: str, start: Path) -> bool:
    if not path:
        return False
    real = Path(path).resolve()
    if real == PACKAGE_HOME:
        return True
    return real != start and start not in real.parents and real not in start.parents
