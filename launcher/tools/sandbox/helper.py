"""The confinement as a standalone helper: confine this process, then exec the command.

    python -m launcher.tools.sandbox.helper POLICY.json -- COMMAND [ARG]...

POLICY.json holds `SandboxPolicy.to_json()`. The session does not use it (a confined
thread is cheaper per command, see spawner.py); it is here for running one command by
hand the way the model's shell runs, and for checking the confinement as another user.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from launcher.tools.sandbox.apply import confine_current_thread
from launcher.tools.sandbox.policy import SandboxPolicy

USAGE = "usage: python -m launcher.tools.sandbox.helper POLICY.json -- COMMAND [ARG]..."


def main(argv: list[str]) -> int:
    """Confine, then exec; 2 for bad usage, 1 when the kernel refuses the confinement."""
    if len(argv) < 3 or argv[1] != "--":
        print(USAGE, file=sys.stderr)
        return 2
    try:
        policy = SandboxPolicy.from_json(json.loads(Path(argv[0]).read_text()))
    except (OSError, ValueError, AssertionError) as exc:
        print(f"sandbox helper: cannot read policy {argv[0]}: {exc}", file=sys.stderr)
        return 2
    try:
        confine_current_thread(policy)  # the only thread: the whole process
    except OSError as exc:
        print(f"sandbox: unavailable ({exc})", file=sys.stderr)
        return 1
    try:
        os.execvp(argv[2], argv[2:])
    except OSError as exc:
        print(f"sandbox helper: {argv[2]}: {exc.strerror}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
