"""`"prices"` in a config's `mcp.json`: per-model prices for local and private models.

`{"prices": {"openai:my-model": {"input": 0.5, "output": 1.5, "cache_read": 0.05,
"cache_write": 0.6}}}`, USD per million tokens; a key is `PROVIDER:MODEL` as in `--model`,
or a bare model id that matches it under any provider.
"""

from __future__ import annotations

import json
from pathlib import Path

from launcher.config.types import ModelPrice
from launcher.errors import ConfigError

FIELD = "prices"
_KEYS = ("input", "output", "cache_read", "cache_write")


def parse_prices(value: object, *, path: Path, line: int) -> dict[str, ModelPrice]:
    """The field's value; anything else names the file, line and field (`prices.MODEL.KEY`)."""
    if not isinstance(value, dict):
        raise ConfigError(
            "expected an object of prices by model", path=path, line=line, field=FIELD
        )
    out: dict[str, ModelPrice] = {}
    for model, entry in value.items():
        where = f"{FIELD}.{model}"
        if not isinstance(entry, dict):
            raise ConfigError(
                "expected {input, output, cache_read, cache_write}",
                path=path,
                line=line,
                field=where,
            )
        unknown = sorted(set(entry) - set(_KEYS))
        if unknown:
            raise ConfigError(
                f"unknown key '{unknown[0]}' (expected {', '.join(_KEYS)})",
                path=path,
                line=line,
                field=where,
            )
        numbers: dict[str, float] = {}
        for key, number in entry.items():
            if isinstance(number, bool) or not isinstance(number, int | float) or number < 0:
                raise ConfigError(
                    f"expected USD per million tokens (0 or more), got '{number}'",
                    path=path,
                    line=line,
                    field=f"{where}.{key}",
                )
            numbers[key] = float(number)
        out[str(model)] = ModelPrice(**numbers)
    return out


def read_config_prices(path: Path) -> dict[str, ModelPrice]:
    """The `"prices"` entry of a config's `mcp.json` ({} without one); the file's syntax was
    already checked by the servers' reader."""
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or FIELD not in data:
        return {}
    line = next((n for n, ln in enumerate(text.splitlines(), 1) if f'"{FIELD}"' in ln), 1)
    return parse_prices(data[FIELD], path=path, line=line)
