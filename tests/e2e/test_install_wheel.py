"""A newcomer's install: a wheel built from this tree, installed in a fresh venv outside the
repository, runs the quick start — `--version`, `init`, `check --junit`, `spawn` (here and
from another directory with `--config-dir`) and `log` — with no file of the clone in reach.

Offline: the wheel is built without build isolation, and the fresh venv sees this test
venv's installed dependencies through a path entry (their .pth hooks, the editable
install of this tree among them, are not run), so `launcher` comes from the wheel only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.e2e.conftest import assert_all_gone, run_process

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "launcher", "mcp_servers")
"""What a wheel is built from (a copy: the build writes build/ and egg-info beside it)."""


def sh(argv: list[str | Path], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_process(argv, cwd=cwd, env=env)


def ok(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert proc.returncode == 0, f"{proc.args}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv (outside the repo) with subagent installed from a wheel built here."""
    root = tmp_path_factory.mktemp("install")
    src = root / "src"
    src.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            # Without __pycache__: other test processes rename .pyc files in it as we copy.
            shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(REPO / name, src / name)
    env = clean_env(root / "state")
    wheels = root / "wheels"
    ok(sh([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
           "-w", wheels, src], root, env))  # fmt: skip
    (wheel,) = wheels.glob("subagent-*.whl")
    check_metadata(wheel)
    venv = root / "venv"
    ok(sh([sys.executable, "-m", "venv", "--without-pip", venv], root, env))
    site = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    site.mkdir(parents=True, exist_ok=True)
    (site / "zz_test_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    ok(sh([sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q",
           "--no-deps", "--no-index", wheel], root, env))  # fmt: skip
    return venv


def check_metadata(wheel: Path) -> None:
    """The package says what it is: license, classifiers, the Python it needs."""
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        meta = zf.read(name).decode()
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in zf.namelist())
    assert "License-Expression: MIT" in meta
    # No placeholder address stands in for a repository that has no public one yet.
    assert "Classifier: " in meta and "your-" + "org" not in meta
    assert "Requires-Python: >=3.11" in meta


def clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUBAGENT_", "PYTHON"))}
    env["SUBAGENT_HOME"] = str(home)
    return env


def test_the_wheel_runs_the_quick_start_outside_the_clone(installed: Path, tmp_path: Path) -> None:
    subagent = installed / "bin" / "subagent"
    env = clean_env(tmp_path / "state")
    project = tmp_path / "project"
    project.mkdir()

    where = ok(sh([installed / "bin" / "python", "-c", "import launcher; print(launcher.__file__)"],
                  project, env))  # fmt: skip
    assert where.stdout.startswith(str(installed)), where.stdout
    version = ok(sh([subagent, "--version"], project, env)).stdout
    assert version.startswith("subagent ") and str(installed) in version

    ok(sh([subagent, "init"], project, env))
    check = ok(sh([subagent, "check", "--junit", "report.xml"], project, env))
    assert "2 passed, 0 failed" in check.stdout
    suite = ET.parse(project / "report.xml").getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("2", "0")

    first = ok(sh([subagent, "spawn", "triage", "Triage the open issues"], project, env))
    assert "acme/widgets#1" in first.stdout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    second = ok(sh([subagent, "spawn", "--config-dir", project / ".subagent", "triage",
                    "Triage again from elsewhere"], elsewhere, env))  # fmt: skip
    assert "acme/widgets#1" in second.stdout

    log = ok(sh([subagent, "log"], elsewhere, env)).stdout
    assert "Triage the open issues" in log and "Triage again from elsewhere" in log
    assert_all_gone([], tmp_path)
