"""Every git command the launcher runs goes through launcher/gitcmd.py (issue 28.5).

Read from the source, like tests/test_house_layout.py: outside gitcmd.py no module names
the git program in a string, and no call that starts a process is handed a `git ...`
command line. A new git call elsewhere would run unhardened: hooks, fsmonitor, drivers.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.test_house_layout import PACKAGE, modules

HELPER = PACKAGE / "gitcmd.py"
SPAWNERS = frozenset(
    {
        "run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput",
        "system", "popen", "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp",
        "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnlp", "posix_spawn",
        "posix_spawnp", "open_process", "run_process", "create_subprocess_exec",
        "create_subprocess_shell", "spawn_group", "popen_confined", "which",
    }
)  # fmt: skip
"""Names of calls that start (or look up) a program."""
GIT_PROGRAM = re.compile(r"^(\S*/)?git(\.exe)?$")
GIT_COMMAND_LINE = re.compile(r"^\s*(\S*/)?git(\.exe)?(\s|$)")


def _callee(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _strings(node: ast.AST) -> list[str]:
    """The string constants of an argument: itself, a list/tuple's items, an f-string's parts."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [s for item in node.elts[:1] for s in _strings(item)]
    if isinstance(node, ast.JoinedStr):
        return [v.value for v in node.values[:1] if isinstance(v, ast.Constant)]
    return []


def git_calls(path: Path) -> list[str]:
    """`file:line what` for each place `path` names git as a program."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if GIT_PROGRAM.match(node.value):
                found.append(f"{path.name}:{node.lineno} the string {node.value!r}")
        elif isinstance(node, ast.Call) and _callee(node) in SPAWNERS:
            args = [*node.args[:1], *(k.value for k in node.keywords if k.arg in ("args", "cmd"))]
            for arg in args:
                if any(GIT_COMMAND_LINE.match(s) for s in _strings(arg)):
                    found.append(f"{path.name}:{node.lineno} {_callee(node)}(git ...)")
    return found


def test_no_git_call_outside_the_hardened_helper() -> None:
    wrong = [hit for path in modules() if path != HELPER for hit in git_calls(path)]
    assert wrong == [], "git run outside launcher/gitcmd.py:\n" + "\n".join(wrong)


def test_the_helper_itself_is_seen(tmp_path: Path) -> None:
    # Without this, a checker that never finds anything would pass the test above.
    assert git_calls(HELPER) != []
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import os, subprocess, shutil\n"
        "GIT = 'git'\n"
        "subprocess.run(['/usr/bin/git', 'status'])\n"
        "subprocess.run(args='git add --all', shell=True)\n"
        "os.system(f'git -C {x} fetch')\n"
        "shutil.which('git')\n"
        "print('git is needed here')\n"
        "subprocess.run(['gitk'])\n"
    )
    hits = sorted({hit.split(" ", 1)[0] for hit in git_calls(probe)})
    assert hits == ["probe.py:2", "probe.py:3", "probe.py:4", "probe.py:5", "probe.py:6"]
