"""builtin_entries: which entries, their shape, and callers that never raise."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from launcher.config.types import BUILTIN_TOOLS
from launcher.tools import builtin_entries


def test_entries_follow_builtin_order_and_are_deduplicated(tmp_path: Path) -> None:
    entries = builtin_entries(tmp_path, ["ls", "read", "ls", "bash"])
    assert [e.name for e in entries] == ["read", "bash", "ls"]


def test_every_builtin_has_description_and_object_schema(tmp_path: Path) -> None:
    for entry in builtin_entries(tmp_path, BUILTIN_TOOLS):
        assert entry.source == "builtin" and entry.tool == entry.name and entry.server is None
        assert len(entry.description) > 20
        assert entry.input_schema["type"] == "object"
        assert set(entry.input_schema["required"]) <= set(entry.input_schema["properties"])


def test_unknown_builtin_name_raises(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="nope"):
        builtin_entries(tmp_path, ["read", "nope"])


@pytest.mark.parametrize("name", BUILTIN_TOOLS)
def test_callers_turn_garbage_arguments_into_error_results(tmp_path: Path, name: str) -> None:
    (entry,) = builtin_entries(tmp_path, [name])
    for args in ({"path": 7, "pattern": 7, "command": 7}, ["not", "a", "dict"]):
        result = anyio.run(entry.call, args)
        assert result.is_error
        assert result.content.startswith(f"{name}: ")
