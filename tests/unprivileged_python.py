"""A Python command line that runs as an ordinary user: these tests' attacker and victim
must be one unprivileged uid (no ptrace rule stops root)."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path

import pytest

NOBODY = 65534


def python_as_other_than_root() -> list[str]:
    """A Python command line as this user; as root, as uid 65534 with a system interpreter
    it may run and this tree on its path (skips the test where there is none)."""
    if os.geteuid() != 0:
        return [sys.executable]
    system = shutil.which("python3", path="/usr/bin:/bin")
    if shutil.which("setpriv") is None or system is None:
        pytest.skip("root without setpriv or a system python3: no unprivileged user to run as")
    paths = os.pathsep.join(
        [str(Path(__file__).resolve().parents[1]), sysconfig.get_paths()["purelib"]]
    )
    drop = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    return [*drop, "env", f"PYTHONPATH={paths}", system]
