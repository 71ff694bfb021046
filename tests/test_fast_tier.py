"""The fast tier (`pytest -m "not e2e"`) holds no test from tests/e2e/, and the suite has a
per-test timeout, so a hang fails naming its test."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).parent


def test_every_test_under_e2e_carries_the_marker(pytestconfig: pytest.Config) -> None:
    # Collect tests/e2e without running anything and check the marker on every item.
    items: list[pytest.Item] = []

    class Grab:
        def pytest_collection_finish(self, session: pytest.Session) -> None:
            items.extend(session.items)

    code = pytest.main(
        ["--collect-only", "-q", "-p", "no:cacheprovider", str(TESTS / "e2e")],
        plugins=[Grab()],
    )
    assert code == 0
    assert items, "nothing collected under tests/e2e"
    unmarked = [i.nodeid for i in items if i.get_closest_marker("e2e") is None]
    assert unmarked == []


def test_the_suite_has_a_per_test_timeout(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.pluginmanager.hasplugin("timeout"), "pytest-timeout is not installed"
    assert float(pytestconfig.getini("timeout")) >= 300
