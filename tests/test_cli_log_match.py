"""`subagent log -q WORD` shows the text that matched, on one line, under a MATCH heading."""

from __future__ import annotations

import io

from launcher.cli.render import print_log_table
from launcher.cli.views import log_table_rows, match_line

SESSION = {
    "id": "20261203T000000-abcdef",
    "agent": "triage",
    "status": "completed",
    "turns": 3,
    "input_tokens": 0,
    "output_tokens": 0,
    "started": 0.0,
    "prompt": "Triage the open issues",
}


def table(sessions: list[dict[str, object]]) -> str:
    out = io.StringIO()
    print_log_table(log_table_rows(sessions, now=1.0), out, empty="no stored session matches 'x'")
    return out.getvalue()


def test_a_search_shows_the_match_under_a_match_heading() -> None:
    snippet = '…1,\n    "title": "[Crash] when widget size is zero",\n    "state": "open"…'
    text = table([{**SESSION, "match": snippet}])
    header, row = text.splitlines()
    assert header.endswith("MATCH") and "PROMPT" not in header
    assert row.endswith('…1, "title": "[Crash] when widget size is zero", "state": "open"…')


def test_a_listing_without_search_keeps_the_prompt() -> None:
    header, row = table([SESSION]).splitlines()
    assert header.endswith("PROMPT")
    assert row.endswith("Triage the open issues")


def test_no_match_says_so() -> None:
    assert table([]) == "no stored session matches 'x'\n"


def test_a_long_snippet_keeps_the_match_in_view() -> None:
    snippet = "word " * 40 + "[needle] " + "tail " * 40
    line = match_line(snippet, width=60)
    assert "[needle]" in line and len(line) <= 60
    assert line.startswith("…") and line.endswith("…")
