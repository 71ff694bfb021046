"""Agent files: Markdown with YAML frontmatter, parsed into an AgentSpec.

The file's dialect (ours, pi's or Claude Code's: config/dialect*.py) turns its fields
into ours first. Warnings (unknown and ignored fields) are appended to the optional
`warnings` list the caller passes; errors raise ConfigError with the file, the 1-based
line in the whole file and the field. A null value (`tools:` with nothing after it)
means "field omitted".
"""

from __future__ import annotations

import re
import stat
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import cast

import yaml

from launcher.config.dialect import Dialect, RawField, translate
from launcher.config.dialect_pi import PI_FIELDS, SUBAGENT
from launcher.config.expect import Expectations, parse_expectations
from launcher.config.frontmatter import (
    FRONTMATTER_FIRST_LINE,
    excerpt,
    read_fields,
    split_frontmatter,
)
from launcher.config.hooks_field import HookSpec
from launcher.config.sandbox_field import parse_sandbox
from launcher.config.selectors import parse_selectors
from launcher.config.tool_search_field import ToolSearch, parse_tool_search
from launcher.config.types import (
    DEFAULT_MAX_DEPTH,
    ISOLATION_MODES,
    AgentSpec,
    MemoryScope,
    SandboxSettings,
    Selector,
    ServerSpec,
)
from launcher.errors import ConfigError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_MEMORY_SCOPES: tuple[str, ...] = ("project", "local", "user")

KNOWN_FIELDS: tuple[str, ...] = tuple(PI_FIELDS)
"""Every field of our own format (pi-subagents' frontmatter): config/dialect_pi.py."""


def parse_agent_file(
    path: Path, warnings: list[str] | None = None, dialect: Dialect = SUBAGENT
) -> AgentSpec:
    """Read and parse one agent file of `dialect`; unknown-field warnings go to `warnings`."""
    try:
        # Checked before opening: a FIFO named `x.md` would block the read forever.
        if not stat.S_ISREG(path.stat().st_mode):
            raise ConfigError("cannot read agent file: not a regular file", path=path)
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read agent file: {exc}", path=path) from exc
    return parse_agent_text(text, path, warnings, dialect)


def parse_agent_text(
    text: str,
    path: Path | str,
    warnings: list[str] | None = None,
    dialect: Dialect = SUBAGENT,
) -> AgentSpec:
    """Parse agent file text; `path` names the file in errors and gives the default name."""
    path = Path(path)
    try:
        frontmatter, body, _ = split_frontmatter(text, path)
        fields: dict[str, RawField] = {}
        if frontmatter is not None:
            fields = translate(dialect, _parse_frontmatter(frontmatter, path), path, warnings)
        return _build_spec(fields, body.strip(), path, dialect)
    except ConfigError:
        raise
    except Exception as exc:
        # Fail closed: input the readers did not foresee refuses this file (a warning in
        # discovery), never a traceback that stops every command and `serve`.
        raise ConfigError(
            f"cannot be read ({type(exc).__name__}: {excerpt(str(exc), 80)})", path=path
        ) from exc


def _parse_frontmatter(frontmatter: str, path: Path) -> dict[str, RawField]:
    """Every frontmatter entry with the file line of its key (nested blocks such as
    `expect:` keep their node, to name their own lines)."""
    return {
        entry.key: RawField(entry.value, entry.line, entry.node)
        for entry in read_fields(frontmatter, path)
    }


def _nothing(tools: tuple[Selector, ...] | None) -> bool:
    """Whether a `tools` field that was given names no tool at all (`[]`, `""`, `none`)."""
    return tools is not None and all(selector.kind == "none" for selector in tools)


def _build_spec(
    fields: dict[str, RawField], prompt: str, path: Path, dialect: Dialect
) -> AgentSpec:
    def get(key: str, convert: Callable[[object, str, int], object]) -> object:
        item = fields.get(key)
        if item is None or item.value is None:
            return None
        # Errors name the field as the file spells it (`maxTurns`, not `max_turns`).
        return convert(item.value, item.key or key, item.line)

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
                f"expected PROVIDER:MODEL (e.g. openai:gpt-4.1-mini), got '{excerpt(spec)}'",
                key,
                line,
            )
        if provider == "scripted":
            # Relative to the agent file, as check files' scripts are: the same agent
            # then runs from any directory, under spawn and serve alike.
            script = Path(model_id).expanduser()
            if not script.is_absolute():
                return f"scripted:{(path.parent / script).absolute()}"
        return spec

    def selectors(value: object, key: str, line: int) -> tuple[Selector, ...]:
        return parse_selectors(value, path=path, field=key, line=line)

    def denials(value: object, key: str, line: int) -> tuple[Selector, ...]:
        return parse_selectors(value, path=path, field=key, line=line, deny=True)

    def extensions(value: object, key: str, line: int) -> bool | tuple[str, ...]:
        if isinstance(value, bool):
            return value
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
            raise error("expected true, false or a list of server names", key, line)
        return tuple(s for s in (i.strip() for i in items) if s)

    def flag(value: object, key: str, line: int) -> bool:
        if not isinstance(value, bool):
            raise error(f"expected true or false, got '{excerpt(value)}'", key, line)
        return value

    def memory(value: object, key: str, line: int) -> str:
        if value not in _MEMORY_SCOPES:
            raise error(
                f"expected one of {', '.join(_MEMORY_SCOPES)}, got '{excerpt(value)}'", key, line
            )
        return value

    def isolation(value: object, key: str, line: int) -> str:
        # An isolation we cannot provide would run the agent in the user's checkout.
        if value not in ISOLATION_MODES:
            raise error(
                f"expected {' or '.join(ISOLATION_MODES)}, got '{excerpt(value)}'", key, line
            )
        return str(value)

    def subagents(value: object, key: str, line: int) -> tuple[str, ...]:
        # pi's spellings of "no nesting"; its "any agent" (`all`, `*`, true) would need
        # every agent found, which a file cannot name here: list them instead.
        if value is False or value in ("none", "false", ""):
            return ()
        if value is True or value in ("all", "*", "true"):
            raise error("'all' is not supported here: list the agents it may run", key, line)
        return names(value, key, line)

    def names(value: object, key: str, line: int) -> tuple[str, ...]:
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise error("expected a list of names", key, line)
        return tuple(s for s in (i.strip() for i in items) if s)

    def depth(value: object, key: str, line: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise error(f"expected a non-negative integer, got '{excerpt(value)}'", key, line)
        return value

    def positive_int(value: object, key: str, line: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise error(f"expected a positive integer, got '{excerpt(value)}'", key, line)
        return value

    def positive_number(value: object, key: str, line: int) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise error(f"expected a positive number, got '{value}'", key, line)
        if value == float("inf"):
            raise error("expected a finite number", key, line)
        return float(value)

    def servers(value: object, key: str, line: int) -> tuple[ServerSpec, ...]:
        return tuple(cast(ServerSpec, spec) for spec in cast(tuple[object, ...], value))

    def hooks(value: object, key: str, line: int) -> tuple[HookSpec, ...]:
        # Read by the dialect (config/hooks_field.py); the line is the field's.
        return tuple(replace(spec, line=line) for spec in cast(tuple[HookSpec, ...], value))

    def expect() -> Expectations | None:
        item = fields.get("expect")
        if item is None or item.value is None or not isinstance(item.node, yaml.Node):
            return None
        return parse_expectations(
            item.node, item.value, path=path, line_offset=FRONTMATTER_FIRST_LINE
        )[0]

    def sandbox(value: object, key: str, line: int) -> SandboxSettings:
        return parse_sandbox(value, path=path, line=line)

    def tool_search(value: object, key: str, line: int) -> ToolSearch:
        return parse_tool_search(value, path=path, line=line)

    extensions_value = get("extensions", extensions)
    tools_value = cast(tuple[Selector, ...] | None, get("tools", selectors))
    if extensions_value is None and _nothing(tools_value):
        # `tools: []`, `""` or `none` with no `extensions` list: nothing, in every dialect
        # (Claude Code's meaning), never "every server's tools".
        extensions_value = False
    excluded = cast(tuple[str, ...], get("exclude_extensions", names) or ())
    enabled = get("enabled", flag)
    return AgentSpec(
        name=cast(str | None, get("name", name)) or path.stem,
        description=cast(str | None, get("description", text)) or "",
        model=cast(str | None, get("model", model)),
        tools=tools_value,
        extensions=True
        if extensions_value is None
        else cast(bool | tuple[str, ...], extensions_value),
        # An excluded server is a disallowed `ext:SERVER`: it never starts, whatever selects it.
        disallowed_tools=cast(tuple[Selector, ...], get("disallowed_tools", denials) or ())
        + tuple(Selector(kind="ext", server=server, raw=f"ext:{server}") for server in excluded),
        isolated=bool(get("isolated", flag)),
        memory=cast(MemoryScope | None, get("memory", memory)),
        max_turns=cast(int | None, get("max_turns", positive_int)),
        max_tokens=cast(int | None, get("max_tokens", positive_int)),
        max_cost_usd=cast(float | None, get("max_cost_usd", positive_number)),
        timeout=cast(float | None, get("timeout", positive_number)),
        idle_timeout=cast(float | None, get("idle_timeout", positive_number)),
        allowed_subagents=cast(tuple[str, ...], get("allowed_subagents", subagents) or ()),
        max_depth=cast(
            int, get("max_depth", depth) if "max_depth" in fields else DEFAULT_MAX_DEPTH
        ),
        isolation=cast(str | None, get("isolation", isolation)),
        prompt=prompt,
        source=path,
        expect=expect(),
        dialect=dialect.name,
        display_name=cast(str | None, get("display_name", text)),
        background=bool(get("background", flag)),
        enabled=enabled is not False,
        servers=cast(tuple[ServerSpec, ...], get("inline_servers", servers) or ()),
        sandbox=cast(SandboxSettings | None, get("sandbox", sandbox)),
        hooks=cast(tuple[HookSpec, ...], get("hooks", hooks) or ()),
        tool_search=cast(ToolSearch | None, get("tool_search", tool_search)),
    )
