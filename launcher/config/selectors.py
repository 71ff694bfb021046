"""The selector grammar of `tools:` and `disallowed_tools:`."""

from __future__ import annotations

from pathlib import Path

from launcher.config.frontmatter import excerpt
from launcher.config.types import BUILTIN_TOOLS, MEMORY_TOOLS, OPT_IN_TOOLS, Selector
from launcher.errors import ConfigError
from launcher.toolset.naming import NAME_SEPARATOR

KNOWN_BUILTINS: tuple[str, ...] = BUILTIN_TOOLS + OPT_IN_TOOLS + MEMORY_TOOLS
"""Every name a `builtin` selector may carry."""

_EXT_PREFIX = "ext:"


def parse_selectors(
    value: object,
    *,
    path: Path | str | None,
    field: str,
    line: int | None = None,
    deny: bool = False,
) -> tuple[Selector, ...]:
    """Parse a CSV string or a list of strings into selectors; ConfigError on a bad entry.

    Built-in names match case-insensitively (`Read` is `read`, as in Claude Code files).
    `deny` (`disallowed_tools`): a bare name that is no built-in denies the server tool
    of that name on every server, as pi writes it (a deny may only narrow the agent).
    """
    if isinstance(value, str):
        entries = value.split(",")
    elif isinstance(value, list):
        entries = []
        for item in value:
            if not isinstance(item, str):
                raise ConfigError(
                    f"expected a list of strings, got an item of type {type(item).__name__}",
                    path=path,
                    line=line,
                    field=field,
                )
            entries.append(item)
    else:
        raise ConfigError(
            f"expected a comma-separated string or a list, got {type(value).__name__}",
            path=path,
            line=line,
            field=field,
        )
    selectors: list[Selector] = []
    for entry in entries:
        text = entry.strip()
        if text:
            if deny and _bare_tool_name(text):
                selectors.append(Selector(kind="name", name=f"*{NAME_SEPARATOR}{text}", raw=text))
                continue
            selectors.append(parse_selector(text, path=path, field=field, line=line))
    return tuple(selectors)


def parse_selector(
    text: str, *, path: Path | str | None, field: str, line: int | None = None
) -> Selector:
    """Parse one selector entry (already stripped).

    How TOOL globs and `SERVER__TOOL` names match is ToolScope's (toolset/scope.py): an
    exact spelling always counts besides the glob, and a `SERVER__TOOL` is split at a
    `__` into a server part and a tool part, never globbed as one string.
    """
    lowered = text.lower()
    if lowered in ("*", "all"):
        return Selector(kind="all", raw=text)
    if lowered == "none":
        return Selector(kind="none", raw=text)
    if lowered.startswith(_EXT_PREFIX):
        return _parse_ext(text, path=path, field=field, line=line)
    if "__" in text:
        return Selector(kind="name", name=text, raw=text)
    if lowered in KNOWN_BUILTINS:
        return Selector(kind="builtin", name=lowered, raw=text)
    raise ConfigError(
        f"unknown built-in tool '{excerpt(text)}'; valid built-ins: {', '.join(KNOWN_BUILTINS)} "
        "(or *, all, none, ext:SERVER, ext:SERVER/TOOL, SERVER__TOOL)",
        path=path,
        line=line,
        field=field,
    )


def _bare_tool_name(text: str) -> bool:
    lowered = text.lower()
    return not (
        lowered in KNOWN_BUILTINS
        or lowered in ("*", "all", "none")
        or lowered.startswith(_EXT_PREFIX)
        or NAME_SEPARATOR in text
    )


def _parse_ext(text: str, *, path: Path | str | None, field: str, line: int | None) -> Selector:
    rest = text[len(_EXT_PREFIX) :].strip()
    server, slash, tool = rest.partition("/")
    server, tool = server.strip(), tool.strip()
    if not server or (slash and not tool):
        raise ConfigError(
            f"bad selector '{excerpt(text)}': expected ext:SERVER or ext:SERVER/TOOL",
            path=path,
            line=line,
            field=field,
        )
    return Selector(kind="ext", server=server, tool=tool or None, raw=text)
