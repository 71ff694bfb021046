"""The stdio line splitter: lines across chunks, many per chunk, and the line limit."""

from __future__ import annotations

import pytest

from launcher.bridge.lines import LineReader, line_too_long


def test_lines_split_across_chunks_are_joined() -> None:
    reader = LineReader(limit=100)
    assert reader.feed(b'{"a"') == []
    assert reader.feed(b": 1}\n{") == [b'{"a": 1}']
    assert reader.feed(b"}\n") == [b"{}"]


def test_many_lines_in_one_chunk_come_out_in_order() -> None:
    reader = LineReader(limit=100)
    assert reader.feed(b"a\nbb\n\nccc\nd") == [b"a", b"bb", b"", b"ccc"]
    assert reader.feed(b"\n") == [b"d"]


def test_line_at_the_limit_passes() -> None:
    reader = LineReader(limit=10)
    assert reader.feed(b"x" * 6) == []
    assert reader.feed(b"x" * 4 + b"\n") == [b"x" * 10]


def test_pending_bytes_over_the_limit_without_newline_fail() -> None:
    reader = LineReader(limit=10)
    reader.feed(b"x" * 10)
    with pytest.raises(ValueError, match=line_too_long(10)):
        reader.feed(b"x")


def test_complete_line_over_the_limit_fails_too() -> None:
    with pytest.raises(ValueError, match="over 10 bytes"):
        LineReader(limit=10).feed(b"x" * 11 + b"\nnext\n")
