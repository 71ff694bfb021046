"""Expectations (`expect:` in agent frontmatter, `checks/*.yaml` files): their types and parser.

Pure: YAML nodes in, frozen dataclasses out. Unknown keys and wrong types are ConfigErrors
naming the file, the line and the dotted field (`expect.run.calls`). `launcher/check/`
evaluates them against a live session.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from launcher.errors import ConfigError
from launcher.events import RunStatus

DEFAULT_SETTLE_S = 1.0
"""Seconds after the ready barrier before the tool surface is checked: late tools land."""

LIST_KINDS: tuple[str, ...] = (
    "tools_present",
    "tools_absent",
    "servers_connected",
    "servers_not_started",
    "prompt_contains",
    "prompt_absent",
)
"""Expectation kinds that take a string or a list of strings."""
EXPECT_KEYS: tuple[str, ...] = (*LIST_KINDS, "settle", "run")
RUN_KEYS: tuple[str, ...] = (
    "scripted",
    "prompt",
    "result_contains",
    "tool_errors",
    "calls",
    "status",
    "max_turns",
)
CHECK_FILE_KEYS: tuple[str, ...] = ("name", "agent", "ext", *EXPECT_KEYS)
RUN_STATUSES: tuple[RunStatus, ...] = tuple(s for s in RunStatus if s.final)


@dataclass(frozen=True)
class RunExpect:
    """A scripted run and what its event stream must show."""

    script: Path
    prompt: str
    result_contains: tuple[str, ...] = ()
    tool_errors: int | tuple[str, ...] | None = None  # None = not checked
    calls: tuple[str, ...] = ()
    status: RunStatus = RunStatus.COMPLETED
    max_turns: int | None = None


@dataclass(frozen=True)
class Expectations:
    """What one check asserts about a session (each tuple empty = not checked)."""

    settle: float = DEFAULT_SETTLE_S
    tools_present: tuple[str, ...] = ()
    tools_absent: tuple[str, ...] = ()
    servers_connected: tuple[str, ...] = ()
    servers_not_started: tuple[str, ...] = ()
    prompt_contains: tuple[str, ...] = ()
    prompt_absent: tuple[str, ...] = ()
    run: RunExpect | None = None


class _Walker:
    """Reads constructed YAML values beside their nodes, for lines in errors."""

    def __init__(self, path: Path, line_offset: int) -> None:
        self.path = path
        self.offset = line_offset

    def line(self, node: yaml.Node) -> int:
        return node.start_mark.line + self.offset

    def error(self, node: yaml.Node, where: str, message: str) -> ConfigError:
        return ConfigError(message, path=self.path, line=self.line(node), field=where)

    def mapping(
        self, node: yaml.Node, value: Any, where: str, known: tuple[str, ...]
    ) -> dict[str, tuple[yaml.Node, Any]]:
        if not isinstance(node, yaml.MappingNode) or not isinstance(value, dict):
            raise self.error(node, where, "expected a mapping of key: value")
        out: dict[str, tuple[yaml.Node, Any]] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            at = f"{where}.{key}" if where else str(key)
            if key not in known:
                raise self.error(
                    key_node, at, f"unknown key '{key}'; known keys: {', '.join(known)}"
                )
            if key in out:
                raise self.error(key_node, at, "duplicate key")
            out[key] = (value_node, value[key])
        return out

    def strings(self, node: yaml.Node, value: Any, where: str) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
            raise self.error(node, where, "expected a string or a list of strings")
        return tuple(items)

    def text(self, node: yaml.Node, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.error(node, where, "expected a non-empty string")
        return value

    def number(self, node: yaml.Node, value: Any, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise self.error(node, where, f"expected a number of seconds >= 0, got {value!r}")
        return float(value)

    def count(self, node: yaml.Node, value: Any, where: str, *, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.error(node, where, f"expected an integer >= {minimum}, got {value!r}")
        return value


def parse_expectations(
    node: yaml.Node,
    value: Any,
    *,
    path: Path,
    line_offset: int,
    where: str = "expect",
    extra_keys: tuple[str, ...] = (),
) -> tuple[Expectations, dict[str, tuple[yaml.Node, Any]]]:
    """Parse an expectations mapping; returns it and the `extra_keys` found (check files).

    `line_offset` turns a node's 0-based line into the file's 1-based line; relative
    `run.scripted` paths are resolved against `path`'s directory.
    """
    walk = _Walker(path, line_offset)
    fields = walk.mapping(node, value, where, (*extra_keys, *EXPECT_KEYS))
    lists: dict[str, tuple[str, ...]] = {}
    for kind in LIST_KINDS:
        if kind in fields:
            lists[kind] = walk.strings(*fields[kind], _at(where, kind))
    settle = DEFAULT_SETTLE_S
    if "settle" in fields:
        settle = walk.number(*fields["settle"], _at(where, "settle"))
    run = None
    if "run" in fields:
        run = _parse_run(walk, *fields["run"], _at(where, "run"))
    extras = {k: v for k, v in fields.items() if k in extra_keys}
    return Expectations(settle=settle, run=run, **lists), extras


def _parse_run(walk: _Walker, node: yaml.Node, value: Any, where: str) -> RunExpect:
    fields = walk.mapping(node, value, where, RUN_KEYS)
    for required in ("scripted", "prompt"):
        if required not in fields:
            raise walk.error(node, f"{where}.{required}", f"'{required}' is required in run")
    script = Path(walk.text(*fields["scripted"], f"{where}.scripted")).expanduser()
    if not script.is_absolute():
        script = walk.path.parent / script
    if not script.is_file():
        raise walk.error(fields["scripted"][0], f"{where}.scripted", f"no such script: {script}")
    tool_errors: int | tuple[str, ...] | None = None
    if "tool_errors" in fields:
        t_node, t_value = fields["tool_errors"]
        if isinstance(t_value, int) and not isinstance(t_value, bool):
            tool_errors = walk.count(t_node, t_value, f"{where}.tool_errors", minimum=0)
        elif t_value == []:
            tool_errors = ()
        else:
            tool_errors = walk.strings(t_node, t_value, f"{where}.tool_errors")
    status = RunStatus.COMPLETED
    if "status" in fields:
        s_node, s_value = fields["status"]
        if s_value not in RUN_STATUSES:
            raise walk.error(
                s_node, f"{where}.status", f"expected one of {', '.join(RUN_STATUSES)}"
            )
        status = RunStatus(s_value)
    max_turns = None
    if "max_turns" in fields:
        max_turns = walk.count(*fields["max_turns"], f"{where}.max_turns", minimum=1)
    optional = {
        key: walk.strings(*fields[key], f"{where}.{key}")
        for key in ("result_contains", "calls")
        if key in fields
    }
    return RunExpect(
        script=script.resolve(),
        prompt=walk.text(*fields["prompt"], f"{where}.prompt"),
        tool_errors=tool_errors,
        status=status,
        max_turns=max_turns,
        **optional,
    )


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key
