"""docs/hooks.md shows the hook events' table exactly as the code holds it."""

from __future__ import annotations

import re
from pathlib import Path

from launcher.config.hooks_field import EVENTS, table_rows

PAGE = Path(__file__).resolve().parents[1] / "docs" / "hooks.md"


def documented() -> list[tuple[str, ...]]:
    text = PAGE.read_text(encoding="utf-8")
    found = re.search(r"<!-- table: hooks -->\n(.*?)<!-- /table -->", text, re.S)
    assert found is not None, "docs/hooks.md has no table of hook events"
    rows = []
    for line in found.group(1).splitlines()[2:]:
        cells = tuple(cell.strip() for cell in line.strip().strip("|").split(" | "))
        rows.append((cells[0].strip("`"), *cells[1:]))
    return rows


def test_docs_table_equals_the_event_table() -> None:
    assert documented() == table_rows()


def test_every_event_has_an_action_in_both_places() -> None:
    for name, rule in EVENTS.items():
        assert {str(rule.agent), str(rule.settings)} <= {
            "honoured",
            "mapped",
            "ignored",
            "refused",
        }, name
