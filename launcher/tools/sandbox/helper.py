"""The confinement as a standalone helper: confine this process, then exec the command.

    python -I -S .../launcher/tools/sandbox/helper.py POLICY -- COMMAND [ARG]...

POLICY is `SandboxPolicy.to_json()` as a JSON string or a file holding it. Run by path
it imports nothing of the package but mounts.py, landlock.py and seccomp.py (tens of milliseconds,
not the package's start-up). Sessions use it only under `SUBAGENT_BASH_SANDBOX=1`, behind
`unshare` (namespaces.py), where the confined thread cannot be the parent; it is also the
way to run one command by hand as the model's shell runs, or as another user.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

USAGE = "usage: helper.py POLICY -- COMMAND [ARG]..."


def _sibling(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"_sandbox_{name}", Path(__file__).with_name(f"{name}.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _policy(raw: str) -> SimpleNamespace:
    data = json.loads(raw if raw.lstrip().startswith("{") else Path(raw).read_text())

    def paths(key: str) -> tuple[Path, ...]:
        return tuple(Path(str(p)) for p in data.get(key, []))

    return SimpleNamespace(
        protected=paths("protected"),
        deny_read=paths("deny_read"),
        writable=paths("writable"),
        writable_files=paths("writable_files"),
        network=bool(data.get("network")),
        readable=paths("readable"),
    )


def main(argv: list[str]) -> int:
    """Confine, then exec; 2 for bad usage, 1 when the kernel refuses the confinement."""
    if len(argv) < 3 or argv[1] != "--":
        print(USAGE, file=sys.stderr)
        return 2
    try:
        policy = _policy(argv[0])
    except (OSError, ValueError, AttributeError) as exc:
        print(f"sandbox helper: cannot read the policy: {exc}", file=sys.stderr)
        return 2
    try:
        # A mount namespace of its own first (run by hand as root, the binds must not
        # reach the caller's); inside `unshare --user` it is allowed unprivileged.
        _sibling("mounts").protect_read_only(policy.protected, policy.writable)
        # The process has one thread: confining it confines the process.
        _sibling("landlock").restrict_thread(policy)
        _sibling("seccomp").filter_thread(policy.network)
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
