"""What every built-in tool shares: argument checking, the never-raise wrapper, caps."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio.to_thread

from launcher.errors import ToolError
from launcher.toolset.types import ToolCaller, ToolResult

_MISSING: Any = object()


def safe_caller(name: str, run: Callable[[dict[str, Any]], Awaitable[ToolResult]]) -> ToolCaller:
    """Wrap `run` so that every failure becomes an error result instead of an exception."""

    async def call(args: dict[str, Any]) -> ToolResult:
        if not isinstance(args, dict):
            return ToolResult(f"{name}: arguments must be a JSON object", is_error=True)
        try:
            return await run(args)
        except ToolError as exc:
            return ToolResult(f"{name}: {exc}", is_error=True)
        except OSError as exc:
            return ToolResult(f"{name}: {exc.strerror or exc}", is_error=True)
        except Exception as exc:
            # The model must get an answer for every call; a bug here is reported, not raised.
            return ToolResult(f"{name}: internal error: {type(exc).__name__}: {exc}", is_error=True)

    return call


def in_thread(name: str, run: Callable[[dict[str, Any]], ToolResult]) -> ToolCaller:
    """A never-raising caller that runs the blocking `run` in a worker thread.

    A cancelled call (SIGINT, SIGTERM, a stop) returns at once and leaves the thread behind:
    a thread cannot be interrupted, and the session must not wait for a CPU-bound search to
    end before it closes; the process exits soon after, and its result is thrown away.
    """

    async def run_async(args: dict[str, Any]) -> ToolResult:
        return await anyio.to_thread.run_sync(run, args, abandon_on_cancel=True)

    return safe_caller(name, run_async)


def get_str(args: dict[str, Any], key: str, default: str | None = _MISSING) -> str:
    """A string argument; missing and wrong-typed values are refused by name."""
    value = args.get(key, default)
    if value is _MISSING or (value is None and default is _MISSING):
        raise ToolError(f"missing required argument '{key}'")
    if not isinstance(value, str):
        raise ToolError(f"argument '{key}' must be a string, got {type(value).__name__}")
    return value


def get_opt_str(args: dict[str, Any], key: str) -> str | None:
    """An optional string argument (absent or null means None)."""
    if args.get(key) is None:
        return None
    return get_str(args, key)


def get_int(args: dict[str, Any], key: str, default: int, *, minimum: int = 0) -> int:
    """An integer argument at least `minimum`; digit strings are accepted (models send them)."""
    value = args.get(key)
    if value is None:
        return default
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"argument '{key}' must be an integer, got {value!r}")
    if value < minimum:
        raise ToolError(f"argument '{key}' must be at least {minimum}, got {value}")
    return value


def get_float(args: dict[str, Any], key: str) -> float | None:
    """An optional positive number argument."""
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ToolError(f"argument '{key}' must be a number, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolError(f"argument '{key}' must be a number, got {value!r}")
    if value <= 0:
        raise ToolError(f"argument '{key}' must be positive, got {value}")
    return float(value)


def get_bool(args: dict[str, Any], key: str, default: bool = False) -> bool:
    """A boolean argument; "true"/"false" strings are accepted."""
    value = args.get(key)
    if value is None:
        return default
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if not isinstance(value, bool):
        raise ToolError(f"argument '{key}' must be a boolean, got {value!r}")
    return value


def fit_lines(lines: list[str], cap: int) -> int:
    """How many leading `lines` fit, newline-joined, in `cap` characters."""
    size = 0
    for i, line in enumerate(lines):
        size += len(line) + 1
        if size > cap:
            return i
    return len(lines)
