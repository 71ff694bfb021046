"""Every third-party module the package imports directly is a declared dependency in
pyproject.toml, not merely something another dependency happens to pull in today."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _imported_top_level_modules() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "launcher").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m != "launcher"}


def _normalise(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def test_every_directly_imported_distribution_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    # An optional extra (`subagent[ray]`) declares what the code behind it imports.
    extras = [req for reqs in project.get("optional-dependencies", {}).values() for req in reqs]
    declared = {
        _normalise(re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0])
        for req in [*project["dependencies"], *extras]
    }
    providers = importlib.metadata.packages_distributions()

    undeclared = {
        module: providers.get(module, [module])
        for module in _imported_top_level_modules()
        if not any(_normalise(dist) in declared for dist in providers.get(module, [module]))
    }

    assert undeclared == {}
