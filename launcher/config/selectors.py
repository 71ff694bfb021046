"""The selector grammar of `tools:` and `disallowed_tools:`."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from pathlib import Path

from launcher.config.frontmatter import excerpt
from launcher.config.types import BUILTIN_TOOLS, MEMORY_TOOLS, OPT_IN_TOOLS, Selector
from launcher.errors import ConfigError
from launcher.toolset.naming import CLAUDE_BUILTIN_NAMES, CLAUDE_MCP_PREFIX, NAME_SEPARATOR

KNOWN_BUILTINS: tuple[str, ...] = BUILTIN_TOOLS + OPT_IN_TOOLS + MEMORY_TOOLS
"""Every name a `builtin` selector may carry."""
_DENY_BUILTINS: dict[str, str] = {
    **{name: name for name in KNOWN_BUILTINS},
    **{theirs.lower(): ours for ours, theirs in CLAUDE_BUILTIN_NAMES.items()},
    "multiedit": "edit",
}
"""A deny entry's built-in, any case, in our spelling or Claude Code's (`Glob` is `find`)."""

_EXT_PREFIX = "ext:"
_PERMISSION_RULE = re.compile(r"^([^()]+)\((.*)\)$", re.S)


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
    `deny` (`disallowed_tools`): each entry is read by `deny_selectors`, which never
    drops one: a bare name denies the server tool of that name on every server too.
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
        if text and deny:
            selectors += deny_selectors(text, path=path, field=field, line=line)
        elif text:
            selectors.append(parse_selector(text, path=path, field=field, line=line))
    return tuple(selectors)


def deny_selectors(
    text: str, *, path: Path | str | None, field: str, line: int | None = None
) -> list[Selector]:
    """One deny entry (stripped) as every selector it may mean: denying more is safe.

    Case never matters (`bash` denies `Read`'s sibling `Bash` and a server's `BASH`);
    Claude Code's names (`Glob`, `mcp__SERVER__TOOL`, `mcp__SERVER`) and ours (`find`,
    `ext:SERVER/TOOL`, `SERVER__TOOL`) are one spelling each; a server part matches the
    server as configured or as sanitized in exposed names (`gh.stub` is `gh_stub`); a
    bare name, a built-in's included, also denies a server's tool of that name; a rule
    (`Bash(rm:*)`) denies the whole tool.
    """
    rule = _PERMISSION_RULE.match(text)
    if rule:
        # `Bash(rm:*)`, `mcp__S__T(x)`: finer than a tool, so the whole tool is denied.
        text = rule.group(1).strip()
    lowered = text.lower()
    if lowered in ("*", "all", "none"):
        return [parse_selector(text, path=path, field=field, line=line)]
    if lowered.startswith(CLAUDE_MCP_PREFIX):
        server, _, tool = text[len(CLAUDE_MCP_PREFIX) :].partition(NAME_SEPARATOR)
        if not server.strip("_"):
            raise ConfigError(
                f"'{excerpt(text)}' names no server (mcp__SERVER or mcp__SERVER__TOOL)",
                path=path,
                line=line,
                field=field,
            )
        return _server_tool(text, server, tool or None)
    if lowered.startswith(_EXT_PREFIX):
        ext = _parse_ext(text, path=path, field=field, line=line)
        return [ext, *_server_tool(text, ext.server or "", ext.tool)[-1:]]
    if NAME_SEPARATOR in text:
        return [Selector(kind="name", name=caseless(text), raw=text)]
    every_server = Selector(kind="name", name=f"*{NAME_SEPARATOR}{caseless(text)}", raw=text)
    if any(char in lowered for char in "*?["):
        # `b*` denies the built-ins it matches too (`bash`), as a server's tools.
        matched = {ours for spelt, ours in _DENY_BUILTINS.items() if fnmatchcase(spelt, lowered)}
        builtins = [Selector(kind="builtin", name=name, raw=text) for name in sorted(matched)]
        return [*builtins, every_server]
    builtin = _DENY_BUILTINS.get(lowered)
    if builtin is None:
        return [every_server]
    return [Selector(kind="builtin", name=builtin, raw=text), every_server]


def _server_tool(raw: str, server: str, tool: str | None) -> list[Selector]:
    """A server's tool (or, tool None or `*`, every tool: then also `ext:SERVER`, so the
    server never starts) as deny selectors."""
    named = Selector(
        kind="name", name=f"{caseless(server)}{NAME_SEPARATOR}{caseless(tool or '*')}", raw=raw
    )
    if (tool is None or set(tool) == {"*"}) and not any(ch in server for ch in "*?["):
        return [Selector(kind="ext", server=server, raw=raw), named]
    return [named]


def caseless(pattern: str) -> str:
    """`pattern` as a glob matching any case of its ASCII letters (a pattern that has a
    `[` class of its own is left as written)."""
    if "[" in pattern or "]" in pattern:
        return pattern
    return "".join(
        f"[{ch.lower()}{ch.upper()}]" if ch.isascii() and ch.isalpha() else ch for ch in pattern
    )


def selector_servers(selector: Selector) -> list[str]:
    """The server patterns a selector could name (none for `*__TOOL` and built-ins)."""
    if selector.kind == "ext":
        return [selector.server or ""]
    if selector.kind != "name" or not selector.name:
        return []
    name, sep = selector.name, NAME_SEPARATOR
    parts = [name[:i] for i in range(len(name) - 1) if name.startswith(sep, i)]
    return [part for part in parts if part and set(part) != {"*"}]


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
