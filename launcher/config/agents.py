"""Agent files: Markdown with YAML frontmatter, parsed into an AgentSpec.

Warnings (unknown fields) are appended to the optional `warnings` list the caller
passes; errors raise ConfigError with the file, the 1-based line in the whole file
and the field. A null value (`tools:` with nothing after it) means "field omitted".
"""

from __future__ import annotations

import difflib
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import cast

import yaml

from launcher.config.expect import Expectations, parse_expectations
from launcher.config.selectors import parse_selectors
from launcher.config.types import (
    DEFAULT_MAX_DEPTH,
    ISOLATION_MODES,
    AgentSpec,
    MemoryScope,
    Selector,
)
from launcher.errors import ConfigError

_FENCE = "---"
# Frontmatter YAML starts on the line after the opening fence.
_FRONTMATTER_FIRST_LINE = 2
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_MEMORY_SCOPES: tuple[str, ...] = ("project", "local", "user")

KNOWN_FIELDS: tuple[str, ...] = (
    "name",
    "description",
    "model",
    "tools",
    "extensions",
    "disallowed_tools",
    "isolated",
    "memory",
    "max_turns",
    "allowed_subagents",
    "max_depth",
    "isolation",
    "expect",
)


def parse_agent_file(path: Path, warnings: list[str] | None = None) -> AgentSpec:
    """Read and parse one agent file; unknown-field warnings go to `warnings`."""
    try:
        # Checked before opening: a FIFO named `x.md` would block the read forever.
        if not stat.S_ISREG(path.stat().st_mode):
            raise ConfigError("cannot read agent file: not a regular file", path=path)
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read agent file: {exc}", path=path) from exc
    return parse_agent_text(text, path, warnings)


def parse_agent_text(text: str, path: Path | str, warnings: list[str] | None = None) -> AgentSpec:
    """Parse agent file text; `path` names the file in errors and gives the default name."""
    path = Path(path)
    frontmatter, body = _split_frontmatter(text.removeprefix("\ufeff"), path)
    fields: dict[str, object] = {}
    if frontmatter is not None:
        fields = _parse_frontmatter(frontmatter, path, warnings)
    return _build_spec(fields, body.strip(), path)


def _split_frontmatter(text: str, path: Path) -> tuple[str | None, str]:
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != _FENCE:
        return None, text
    for index in range(1, len(lines)):
        if lines[index].rstrip() == _FENCE:
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise ConfigError("frontmatter opened with '---' is never closed", path=path, line=1)


class _Field:
    """A frontmatter value with the file line of its key, for error messages."""

    def __init__(self, value: object, line: int, node: yaml.Node | None = None) -> None:
        self.value = value
        self.line = line
        self.node = node  # the value's node: nested blocks (`expect:`) name their own lines


def _parse_frontmatter(
    frontmatter: str, path: Path, warnings: list[str] | None
) -> dict[str, object]:
    try:
        # The reader checks characters on construction: a control byte raises here.
        loader = yaml.SafeLoader(frontmatter)
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, path) from exc
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, path) from exc
    except RecursionError as exc:
        # PyYAML composes and constructs recursively: a deep `[[[[...` exhausts the stack.
        raise ConfigError(
            "frontmatter is nested too deeply", path=path, line=_FRONTMATTER_FIRST_LINE
        ) from exc
    except ValueError as exc:
        # The constructor's own int()/date parsing: a 5000-digit number, a bad timestamp.
        raise ConfigError(
            f"invalid YAML value in frontmatter: {exc}", path=path, line=_FRONTMATTER_FIRST_LINE
        ) from exc
    finally:
        loader.dispose()
    if data is None:
        return {}
    if not isinstance(root, yaml.MappingNode) or not isinstance(data, dict):
        raise ConfigError(
            "frontmatter must be a mapping of field: value",
            path=path,
            line=_FRONTMATTER_FIRST_LINE,
        )
    fields: dict[str, object] = {}
    for key_node, value_node in root.value:
        line = key_node.start_mark.line + _FRONTMATTER_FIRST_LINE
        if not isinstance(key_node, yaml.ScalarNode):
            raise ConfigError("field names must be plain words", path=path, line=line)
        key = key_node.value
        if key in fields:
            raise ConfigError("duplicate field", path=path, line=line, field=key)
        if key not in KNOWN_FIELDS:
            if warnings is not None:
                warnings.append(f"{path}:{line}: unknown field '{key}' ignored{_hint(key)}")
            continue
        fields[key] = _Field(data[key], line, value_node)
    return fields


def _yaml_error(exc: yaml.YAMLError, path: Path) -> ConfigError:
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + _FRONTMATTER_FIRST_LINE if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc)
    message = f"invalid YAML in frontmatter: {problem}"
    if "alias" in f"{getattr(exc, 'context', '')} {problem}":
        # `tools: *` is the usual cause: a bare `*` is YAML alias syntax.
        message += ' (quote a bare *, e.g. tools: "*")'
    return ConfigError(message, path=path, line=line)


def _hint(key: str) -> str:
    normalized = re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower().replace("-", "_")
    if normalized in KNOWN_FIELDS:
        return f" (did you mean '{normalized}'?)"
    close = difflib.get_close_matches(normalized, KNOWN_FIELDS, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _build_spec(fields: dict[str, object], prompt: str, path: Path) -> AgentSpec:
    def get(key: str, convert: Callable[[object, str, int], object]) -> object:
        item = fields.get(key)
        if not isinstance(item, _Field) or item.value is None:
            return None
        return convert(item.value, key, item.line)

    def error(message: str, key: str, line: int) -> ConfigError:
        return ConfigError(message, path=path, line=line, field=key)

    def name(value: object, key: str, line: int) -> str:
        if not isinstance(value, str) or not _NAME.match(value):
            raise error("expected a name of letters, digits, '.', '_' or '-'", key, line)
        return value

    def text(value: object, key: str, line: int) -> str:
        if not isinstance(value, str):
            raise error(f"expected a string, got {type(value).__name__}", key, line)
        return value.strip()

    def model(value: object, key: str, line: int) -> str | None:
        spec = text(value, key, line)
        if spec == "inherit":  # Claude Code's spelling of "the default model"
            return None
        provider, colon, model_id = spec.partition(":")
        if not colon or not provider or not model_id:
            raise error(
                f"expected PROVIDER:MODEL (e.g. openai:gpt-4.1-mini), got '{spec}'", key, line
            )
        return spec

    def selectors(value: object, key: str, line: int) -> tuple[Selector, ...]:
        return parse_selectors(value, path=path, field=key, line=line)

    def extensions(value: object, key: str, line: int) -> bool | tuple[str, ...]:
        if isinstance(value, bool):
            return value
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise error("expected true, false or a list of server names", key, line)
        return tuple(s for s in (i.strip() for i in items) if s)

    def flag(value: object, key: str, line: int) -> bool:
        if not isinstance(value, bool):
            raise error(f"expected true or false, got '{value}'", key, line)
        return value

    def memory(value: object, key: str, line: int) -> str:
        if value not in _MEMORY_SCOPES:
            raise error(f"expected one of {', '.join(_MEMORY_SCOPES)}, got '{value}'", key, line)
        return value

    def isolation(value: object, key: str, line: int) -> str:
        if value not in ISOLATION_MODES:
            raise error(f"expected {' or '.join(ISOLATION_MODES)}, got '{value}'", key, line)
        return str(value)

    def names(value: object, key: str, line: int) -> tuple[str, ...]:
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise error("expected a list of agent names", key, line)
        return tuple(s for s in (i.strip() for i in items) if s)

    def depth(value: object, key: str, line: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise error(f"expected a non-negative integer, got '{value}'", key, line)
        return value

    def positive_int(value: object, key: str, line: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise error(f"expected a positive integer, got '{value}'", key, line)
        return value

    def expect() -> Expectations | None:
        item = fields.get("expect")
        if not isinstance(item, _Field) or item.value is None or item.node is None:
            return None
        return parse_expectations(
            item.node, item.value, path=path, line_offset=_FRONTMATTER_FIRST_LINE
        )[0]

    extensions_value = get("extensions", extensions)
    return AgentSpec(
        name=cast(str | None, get("name", name)) or path.stem,
        description=cast(str | None, get("description", text)) or "",
        model=cast(str | None, get("model", model)),
        tools=cast(tuple[Selector, ...] | None, get("tools", selectors)),
        extensions=True
        if extensions_value is None
        else cast(bool | tuple[str, ...], extensions_value),
        disallowed_tools=cast(tuple[Selector, ...] | None, get("disallowed_tools", selectors))
        or (),
        isolated=bool(get("isolated", flag)),
        memory=cast(MemoryScope | None, get("memory", memory)),
        max_turns=cast(int | None, get("max_turns", positive_int)),
        allowed_subagents=cast(tuple[str, ...], get("allowed_subagents", names) or ()),
        max_depth=cast(
            int, get("max_depth", depth) if "max_depth" in fields else DEFAULT_MAX_DEPTH
        ),
        isolation=cast(str | None, get("isolation", isolation)),
        prompt=prompt,
        source=path,
        expect=expect(),
    )
