"""The lock's data: pins of tool entries, diffs, the run-time reason, and the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.check.pins import (
    CHANGED_SINCE_LOCK,
    NOT_IN_LOCK,
    AgentPin,
    Drift,
    Lock,
    ServerPin,
    diff,
    format_drift,
    load_lock,
    write_lock,
)
from launcher.config.lockfile import lock_path, lock_reason, pin_entry, schema_hash
from launcher.errors import ConfigError
from launcher.toolset.types import ToolEntry, ToolResult

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}}


async def _never(arguments: dict) -> ToolResult:
    raise AssertionError("not called")


def entry(name: str, description: str = "d", schema: dict | None = None) -> ToolEntry:
    return ToolEntry(
        name=f"lazy__{name}",
        source="lazy",
        tool=name,
        description=description,
        input_schema=schema if schema is not None else SCHEMA,
        call=_never,
    )


def pin_of(*entries: ToolEntry) -> AgentPin:
    return AgentPin(tools={e.name: pin_entry(e) for e in entries})


def test_an_unchanged_surface_has_no_drift() -> None:
    assert diff(pin_of(entry("echo"), entry("sleep")), pin_of(entry("echo"), entry("sleep"))) == []


def test_schema_hash_is_canonical_json() -> None:
    assert schema_hash({"b": 1, "a": [1, 2]}) == schema_hash({"a": [1, 2], "b": 1})
    assert schema_hash({"a": 1}) != schema_hash({"a": 2})


def test_each_kind_of_drift_is_named() -> None:
    locked = pin_of(entry("echo"), entry("gone"), entry("both"))
    current = pin_of(
        entry("echo", description="d (changed: also send secrets)"),
        entry("both", description="x", schema={"type": "object"}),
        entry("late"),
    )
    assert diff(locked, current) == [
        Drift("lazy__both", "description", "description changed"),
        Drift("lazy__both", "schema", "input schema changed"),
        Drift("lazy__echo", "description", "description changed"),
        Drift("lazy__gone", "removed", "no longer announced by 'lazy'"),
        Drift("lazy__late", "added", "new tool from server 'lazy'"),
    ]
    lines = [format_drift(d) for d in diff(locked, current)]
    assert "+ lazy__late" in lines
    assert "- lazy__gone" in lines
    assert "~ lazy__echo (description changed)" in lines


def test_lock_reason_mutes_unpinned_and_changed_tools_only() -> None:
    pin = pin_of(entry("echo"))
    assert lock_reason(pin, entry("echo")) is None
    assert lock_reason(pin, entry("late")) == NOT_IN_LOCK
    assert lock_reason(pin, entry("echo", description="new prompt")) == CHANGED_SINCE_LOCK
    assert lock_reason(pin, entry("echo", schema={"type": "object"})) == CHANGED_SINCE_LOCK
    builtin = ToolEntry("read", "builtin", "read", "Read a file.", {}, _never)
    assert lock_reason(pin, builtin) is None


def test_write_then_load_round_trips_sorted_with_a_version(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "subagent.lock.json"
    pin = pin_of(entry("zeta"), entry("alpha"))
    pin.servers["lazy"] = ServerPin("lazy", "1.2.3")
    write_lock(path, Lock({"b-agent": pin, "a-agent": AgentPin()}))
    text = path.read_text()
    data = json.loads(text)
    assert data["version"] == 1
    assert list(data["agents"]) == ["a-agent", "b-agent"]
    assert list(data["agents"]["b-agent"]["tools"]) == ["lazy__alpha", "lazy__zeta"]
    loaded = load_lock(path)
    assert loaded is not None
    assert loaded.agents["b-agent"] == pin
    write_lock(path, loaded)
    assert path.read_text() == text  # stable: rewriting the same lock changes no byte
    assert [p.name for p in path.parent.iterdir()] == ["subagent.lock.json"]  # no temp left


def test_a_missing_lock_is_none(tmp_path: Path) -> None:
    assert load_lock(tmp_path / "subagent.lock.json") is None


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("{not json", "not valid JSON"),
        ('{"version": 7, "agents": {}}', "field 'version'"),
        ('{"version": 1, "agents": []}', "field 'agents'"),
        (
            '{"version": 1, "agents": {"a": {"tools": {"t": {"server": "s", "tool": 3}}}}}',
            "field 'agents.a.tools.t.tool'",
        ),
    ],
)
def test_a_malformed_lock_names_file_and_field(tmp_path: Path, body: str, needle: str) -> None:
    path = tmp_path / "subagent.lock.json"
    path.write_text(body)
    with pytest.raises(ConfigError) as err:
        load_lock(path)
    assert str(path) in str(err.value)
    assert needle in str(err.value)


def test_the_lock_lives_in_the_first_config_dir_that_exists(tmp_path: Path) -> None:
    cwd, home = tmp_path / "proj", tmp_path / "home"
    cwd.mkdir()
    assert lock_path(None, cwd=cwd, home=home) == cwd / ".subagent" / "subagent.lock.json"
    (home / ".config" / "subagent").mkdir(parents=True)
    assert lock_path(None, cwd=cwd, home=home) == home / ".config/subagent/subagent.lock.json"
    (cwd / ".subagent").mkdir()
    assert lock_path(None, cwd=cwd, home=home) == cwd / ".subagent" / "subagent.lock.json"
    assert lock_path(Path("cfg"), cwd=cwd, home=home) == cwd / "cfg" / "subagent.lock.json"
