"""A loaded config frozen as plain JSON, for a child that must use it, never discover its own.

A nested sub-agent (and a serve worker) runs in another process. Discovering the config
there would read the workspace and config directories mid-run, where the run's model may
have written an MCP server or an agent of its own. So the process that started the run
freezes what it loaded (agents, servers, the sandbox default, the lock file as it was),
and the child thaws exactly that.

No expanded secret is in the JSON: a server travels as its unexpanded entry (`raw`) and is
parsed again in the child, against the environment it was handed (the same variables); a
value written literally in a file travels as written, as the child would have read it.
Hooks (an agent's, a Claude Code settings file's) travel with their agent: a settings file
the run wrote is not read either.
Everything else is the dataclasses' own fields, rebuilt from their type hints; a value of a
type this module does not know is a TypeError when freezing, not a silent loss.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import os
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from launcher.config.hooks_field import HookSpec
from launcher.config.lockfile import Lock, load_lock
from launcher.config.servers import parse_server_entry
from launcher.config.types import Config, ServerSpec

VERSION = 1
"""The snapshot's format; a child of the same installation reads what its parent wrote."""


@dataclass(frozen=True)
class Snapshot:
    """A thawed snapshot: the config, and the lock file as it was (None: there was none)."""

    config: Config
    lock: Lock | None


def freeze(config: Config, lock: Lock | None) -> dict[str, Any]:
    """`config` and `lock` as JSON-ready data (servers unexpanded: no secret in it)."""
    return {"version": VERSION, "config": _encode(config), "lock": _encode(lock)}


def snapshot_of(config: Config, *, lock: bool = True) -> dict[str, Any]:
    """`freeze` of `config` with its lock file as it is now (what the run was started with);
    without `lock` (`--no-lock`) the file is not read, and the children have no pins."""
    pins = load_lock(config.lock_path) if lock and config.lock_path is not None else None
    return freeze(config, pins)


def thaw(data: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Snapshot:
    """The Snapshot `freeze` wrote; servers expanded against `env` (default: os.environ)."""
    if data.get("version") != VERSION:
        raise ValueError(f"config snapshot version {data.get('version')!r}, expected {VERSION}")
    env = os.environ if env is None else env
    config = _decode(Config, data["config"], env)
    lock = _decode(Lock | None, data.get("lock"), env)
    return Snapshot(config=config, lock=lock)


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, ServerSpec):
        source = str(value.source) if value.source is not None else None
        return {"name": value.name, "raw": value.raw, "source": source}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = (f.name for f in dataclasses.fields(value) if f.init)
        return {name: _encode(getattr(value, name)) for name in fields}
    if isinstance(value, tuple | list | frozenset | set):
        return [_encode(item) for item in value]
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    raise TypeError(f"a config snapshot cannot hold a {type(value).__name__}")


RUNTIME_NAMES: dict[str, Any] = {"HookSpec": HookSpec}
"""Types the config's dataclasses name only for type checkers (`if TYPE_CHECKING:`)."""


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls, localns=RUNTIME_NAMES)
    except NameError as exc:  # a new TYPE_CHECKING-only name: add it to RUNTIME_NAMES
        raise TypeError(f"config snapshot: a type of {cls.__name__} is unknown: {exc}") from exc


def _decode(hint: Any, value: Any, env: Mapping[str, str]) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        arm = next((a for a in args if a is not type(None) and _fits(a, value)), None)
        if arm is None:
            raise ValueError(f"config snapshot: {value!r} is none of {hint}")
        return _decode(arm, value, env)
    if origin is typing.Literal:
        return value
    if origin in (tuple, frozenset, list):
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return tuple(_decode(a, v, env) for a, v in zip(args, value, strict=True))
        items = [_decode(args[0] if args else Any, v, env) for v in value]
        return origin(items)
    if origin is dict:
        return {k: _decode(args[1], v, env) for k, v in value.items()}
    if hint is ServerSpec:
        source = Path(value["source"]) if value.get("source") else Path("<config snapshot>")
        return parse_server_entry(value["name"], value["raw"], source, env)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        hints = _hints(hint)
        fields = {f.name for f in dataclasses.fields(hint) if f.init}
        return hint(**{k: _decode(hints[k], v, env) for k, v in value.items() if k in fields})
    if isinstance(hint, type) and issubclass(hint, enum.Enum | Path):
        return hint(value)
    return value


def _fits(arm: Any, value: Any) -> bool:
    """Whether `value` (JSON) has the shape of union arm `arm`."""
    shape = typing.get_origin(arm) or arm
    if shape is typing.Literal:
        return value in typing.get_args(arm)
    if shape is bool:
        return isinstance(value, bool)
    if shape in (int, float):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if shape in (tuple, list, frozenset, set):
        return isinstance(value, list)
    if shape is dict or (isinstance(shape, type) and dataclasses.is_dataclass(shape)):
        return isinstance(value, dict)
    return isinstance(value, str)
