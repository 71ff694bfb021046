"""grep and the find/grep globs run in RE2, in time linear in the text: a pattern that would
backtrack for hours in Python's `re` answers at once, one RE2 cannot take is a tool error
naming the reason, and per-line semantics (`^`, `$`, line numbers, CRLF) stay grep's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from launcher.tools.regex import compile_lines
from tests.tools_support import run_tool

BOUND_S = 60.0
"""Only bounds a hung child: each search here takes milliseconds in RE2, hours in `re`."""


def _in_child(code: str) -> subprocess.CompletedProcess[str]:
    # In a child: a backtracking search holds the GIL, so no in-process timeout could fire.
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=BOUND_S
    )


def test_nested_quantifier_pattern_answers_at_once(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a" * 40 + "!\n" + "aaa\n")
    child = _in_child(
        "from pathlib import Path; from tests.tools_support import run_tool; "
        f"r = run_tool(Path({str(tmp_path)!r}), 'grep', pattern='(a+)+$'); "
        "print(r.is_error, r.content)"
    )
    assert child.stdout.strip() == "False f.txt:2:aaa", child.stderr


def test_glob_with_many_stars_answers_at_once(tmp_path: Path) -> None:
    (tmp_path / ("a" * 60)).write_text("x\n")
    child = _in_child(
        "from pathlib import Path; from tests.tools_support import run_tool; "
        f"r = run_tool(Path({str(tmp_path)!r}), 'find', pattern='*a*a*a*a*a*a*a*a*a*a*b'); "
        "print(r.is_error, r.content)"
    )
    assert child.stdout.startswith("False No paths match"), child.stderr


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(a)\1", "invalid escape sequence"),
        ("(?=x)", "invalid perl operator"),
        ("(?<=x)y", "invalid perl operator"),
        ("a++", "bad repetition operator"),
        ("(unclosed", "missing )"),
    ],
)
def test_pattern_re2_cannot_take_is_a_tool_error(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], pattern: str, reason: str
) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    result = run_tool(tmp_path, "grep", pattern=pattern)
    assert result.is_error
    assert f"invalid regular expression '{pattern}'" in result.content
    assert reason in result.content and "RE2 syntax" in result.content
    assert "(?m)" not in result.content
    assert capfd.readouterr().err == ""  # RE2's own logging stays off our stderr


def test_bad_glob_range_is_a_tool_error(tmp_path: Path) -> None:
    result = run_tool(tmp_path, "find", pattern="[z-a]")
    assert result.is_error
    assert "invalid glob '[z-a]'" in result.content and "range" in result.content


def test_line_semantics(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"alpha\r\n\r\nbeta end\nx\xffy\nlast")
    assert run_tool(tmp_path, "grep", pattern="end$").content == "f.txt:3:beta end"
    assert run_tool(tmp_path, "grep", pattern="^$").content == "f.txt:2:"
    assert run_tool(tmp_path, "grep", pattern="a$").content == "f.txt:1:alpha"
    assert run_tool(tmp_path, "grep", pattern="^last").content == "f.txt:5:last"
    assert run_tool(tmp_path, "grep", pattern="x.y").content == "f.txt:4:x\ufffdy"
    assert "No matches" in run_tool(tmp_path, "grep", pattern=r"alpha\s+beta").content
    assert run_tool(tmp_path, "grep", pattern="BETA", ignore_case=True).content.startswith(
        "f.txt:3:"
    )


def test_lines_numbers_every_matching_line_once() -> None:
    regex = compile_lines("o")
    blob = b"one\ntwo\n\nfoo foo\n"
    assert [n for n, _, _ in regex.lines(blob)] == [1, 2, 4]
    assert list(compile_lines("x").lines(b"")) == []
