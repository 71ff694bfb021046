"""One HTTP client stack: the MCP SDK's streamable HTTP client is built on `httpx2`, so the
models, the OAuth code and the tests' stubs use `httpx2` too, and `httpx` is no dependency."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("launcher", "mcp_servers", "tests", "bench")


def test_nothing_imports_httpx() -> None:
    found = []
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                if any(n == "httpx" or n.startswith("httpx.") for n in names):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert found == []


def test_httpx_is_no_dependency() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    requirements = [*project["dependencies"]]
    for extra in project.get("optional-dependencies", {}).values():
        requirements.extend(extra)
    names = [r.split(";")[0].split("[")[0].split("=")[0].split("<")[0].split(">")[0].strip()
             for r in requirements]  # fmt: skip
    assert "httpx" not in names
    assert "httpx2" in names
