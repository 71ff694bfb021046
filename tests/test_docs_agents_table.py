"""docs/agents.md shows each dialect's table exactly as the code holds it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from launcher.config.dialect import Dialect, table_rows
from launcher.config.dialect_claude import CLAUDE
from launcher.config.dialect_codex import CODEX
from launcher.config.dialect_gemini import GEMINI
from launcher.config.dialect_opencode import OPENCODE
from launcher.config.dialect_pi import PI

DIALECTS = [CLAUDE, PI, CODEX, GEMINI, OPENCODE]

PAGE = Path(__file__).resolve().parents[1] / "docs" / "agents.md"


def documented(dialect: Dialect) -> list[tuple[str, str, str]]:
    text = PAGE.read_text(encoding="utf-8")
    found = re.search(rf"<!-- table: {dialect.name} -->\n(.*?)<!-- /table -->", text, re.S)
    assert found is not None, f"docs/agents.md has no table for {dialect.name}"
    rows = []
    for line in found.group(1).splitlines()[2:]:
        field, action, note = (cell.strip() for cell in line.strip().strip("|").split(" | "))
        rows.append((field.strip("`"), action, note))
    return rows


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_docs_table_equals_the_dialect_table(dialect: Dialect) -> None:
    assert documented(dialect) == table_rows(dialect)


def test_every_field_has_an_action_and_a_reason() -> None:
    for dialect in DIALECTS:
        for field, action, note in table_rows(dialect):
            assert action in ("honoured", "mapped", "ignored", "refused"), field
            assert note, f"{dialect.name} field {field} says nothing about why"
