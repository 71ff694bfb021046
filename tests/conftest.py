"""Suite-wide fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from launcher.runtime import Runtime

E2E_DIR = Path(__file__).with_name("e2e")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/e2e/ is `e2e`, marked or not: `-m "not e2e"` is the fast tier."""
    for item in items:
        if E2E_DIR in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture
def anyio_backend() -> str:
    """subagent runs on asyncio (the CLI uses anyio.run's default); test on what ships."""
    return "asyncio"


@pytest.fixture(autouse=True)
def runtime() -> Iterator[Runtime]:
    """Each test runs in a fresh Runtime: what one test's process learned (tokens to mask,
    hidden variables, claimed locks, started children, probes) never reaches another's."""
    from launcher import runtime as runtimes

    fresh = runtimes.Runtime()
    previous = runtimes.install(fresh)
    yield fresh
    runtimes.install(previous)


def _no_traces_unless_asked() -> None:
    """The suite's own process never exports spans, whatever the developer's shell sets;
    a test that traces installs its own Tracing (launcher.telemetry.installed)."""
    from launcher import telemetry

    telemetry.install(telemetry.OFF)


_no_traces_unless_asked()

GIT_REPOSITORY_VARIABLES = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_IMPLICIT_WORK_TREE", "GIT_PREFIX",
    "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_GRAFT_FILE",
    "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_SHALLOW_FILE",
    "GIT_INTERNAL_SUPER_PREFIX",
)  # fmt: skip
"""git's own `rev-parse --local-env-vars`: what names the repository a git call acts on."""


def _no_repository_of_the_callers() -> None:
    """The tests' git calls act on the repositories they make: a suite started by a git
    hook or `rebase --exec` inherits GIT_DIR or GIT_INDEX_FILE, and `git add` in a test's
    repository would rewrite the checkout's own index."""
    import os

    for name in GIT_REPOSITORY_VARIABLES:
        os.environ.pop(name, None)


_no_repository_of_the_callers()


def _register_hypothesis_profiles() -> None:
    """`ci` (default): fixed seed, few examples; `long` by hand: HYPOTHESIS_PROFILE=long."""
    import os

    try:
        from hypothesis import HealthCheck, settings
    except ImportError:  # hypothesis is in the `test` extra; other suites run without it
        return
    common = {"deadline": 10_000, "suppress_health_check": [HealthCheck.too_slow]}
    settings.register_profile("ci", max_examples=60, derandomize=True, **common)
    settings.register_profile("long", max_examples=2000, **common)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


_register_hypothesis_profiles()
