"""ToolScope: which tools an agent may see and call, as a pure predicate.

Two layers, after docs/architecture.md and docs/scope.md. `gate` is the permanent exclusion
(isolation, built-ins not requested, `disallowed_tools`, orchestration tools,
servers outside `extensions`). `selects` is the `ext:` selection, a function of the
entry alone, so a tool that registers late is in scope exactly when a selector picks
it. Both are gates of the one admission decision (toolset/admission.py).
`selector_matches` is the one selector matcher (`check`'s tool patterns use it too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase

from launcher.config.types import (
    BUILTIN_TOOLS,
    MEMORY_TOOLS,
    OPT_IN_TOOLS,
    ORCHESTRATION_TOOLS,
    AgentSpec,
    Selector,
    ServerSpec,
)
from launcher.toolset.naming import NAME_SEPARATOR, sanitize
from launcher.toolset.types import ToolEntry

ISOLATED = "isolated"
NOT_REQUESTED = "not requested"
DISALLOWED = "disallowed"
ORCHESTRATION = "orchestration"
EXTENSION_NOT_ALLOWED = "extension not allowed"
NOT_SELECTED = "not selected"


class ToolScope:
    """An agent's scope: `spec` plus CLI `--ext NAME` values (each adds `ext:NAME`).

    `--ext` only selects servers' tools: it never changes the built-in set, never
    widens `extensions: [list]`, and does nothing for an isolated agent.
    """

    def __init__(self, spec: AgentSpec, ext: Sequence[str] = ()) -> None:
        self.spec = spec
        cli = tuple(Selector(kind="ext", server=name, raw=f"ext:{name}") for name in ext)
        agent = tuple(s for s in spec.tools or () if s.kind in ("ext", "name"))
        self._selectors: tuple[Selector, ...] = agent + cli
        self._builtins = self._derive_builtins()

    @property
    def static(self) -> bool:
        """True when nothing from a server can ever be in scope."""
        return self.spec.isolated or self.spec.extensions is False

    def builtin_names(self) -> tuple[str, ...]:
        """Built-in (and memory) tools the agent gets, in offering order."""
        return self._builtins

    def gate(self, entry: ToolEntry) -> str | None:
        """The permanent exclusion: None to admit `entry`, else the reason."""
        if entry.server is None:
            # By original name: a Claude Code agent's `Read` is our `read`.
            if self._disallowed(entry):
                return DISALLOWED
            return None if entry.tool in self._builtins else NOT_REQUESTED
        if self.static:
            return ISOLATED
        if self._disallowed(entry):
            return DISALLOWED
        if not self._extension_allowed(entry.server):
            return EXTENSION_NOT_ALLOWED
        # A server can dodge an exact match with `Spawn_Subagent ` (models read it the same).
        if (entry.tool or "").strip().lower() in ORCHESTRATION_TOOLS:
            return ORCHESTRATION
        return None

    def selects(self, entry: ToolEntry) -> str | None:
        """The `ext:` selection: None if `entry` is selected, else `not selected`."""
        if entry.server is None or not self._selectors:
            return None
        if any(selector_matches(selector, entry) for selector in self._selectors):
            return None
        return NOT_SELECTED

    def servers_to_start(self, servers: Mapping[str, ServerSpec]) -> list[str]:
        """Configured servers whose tools could ever be in scope, in config order."""
        if self.static:
            return []
        return [
            name
            for name in servers
            if self._extension_allowed(name)
            and not self._server_disallowed(name)
            and (not self._selectors or any(_could_select(s, name) for s in self._selectors))
        ]

    # -- internals -------------------------------------------------------------

    def _derive_builtins(self) -> tuple[str, ...]:
        tools = self.spec.tools
        named = {s.name for s in tools or () if s.kind == "builtin"}
        if tools is None or any(s.kind == "all" for s in tools):
            requested = BUILTIN_TOOLS
        else:
            requested = tuple(name for name in BUILTIN_TOOLS if name in named)
        # Delegation is opt-in: only an explicit name turns it on, never `*` or no `tools`.
        requested += tuple(name for name in OPT_IN_TOOLS if name in named)
        if self.spec.memory is not None:
            requested += MEMORY_TOOLS
        return tuple(name for name in requested if not self._disallowed_name(name))

    def _disallowed_name(self, name: str) -> bool:
        return any(
            s.kind == "all" or (s.kind in ("builtin", "name") and _matches(name, s.name or ""))
            for s in self.spec.disallowed_tools
        )

    def _disallowed(self, entry: ToolEntry) -> bool:
        if entry.server is None:
            return self._disallowed_name(entry.tool)
        return any(
            s.kind == "all"
            or (s.kind == "name" and _name_matches(s.name or "", entry))
            or (s.kind == "ext" and _ext_matches(s, entry))
            for s in self.spec.disallowed_tools
        )

    def _extension_allowed(self, server: str) -> bool:
        allowed = self.spec.extensions
        return allowed is True or (isinstance(allowed, tuple) and server in allowed)

    def _server_disallowed(self, server: str) -> bool:
        """True when `disallowed_tools` excludes every tool `server` could announce."""
        for s in self.spec.disallowed_tools:
            if s.kind == "all":
                return True
            if s.kind == "ext" and s.server == server and _matches_everything(s.tool):
                return True
            if s.kind == "name" and _matches_everything(s.name):
                return True
            # `gh_stub__*` (Claude's `mcp__gh_stub`): every tool of `gh.stub`, as exposed.
            if s.kind == "name" and any(
                _matches_everything(tool) and _part_matches(server, part)
                for part, tool in _name_parts(s.name or "")
            ):
                return True
        return False


def _ext_matches(selector: Selector, entry: ToolEntry) -> bool:
    if selector.server != entry.server:
        return False
    return selector.tool is None or _matches(entry.tool, selector.tool)


def selector_matches(selector: Selector, entry: ToolEntry) -> bool:
    """Whether `ext:SERVER[/TOOL]` or a name selector names `entry` (see `_name_matches`).

    Every glob also matches the name it spells exactly: a tool may be called `x[1]`.
    """
    if selector.kind == "ext":
        return _ext_matches(selector, entry)
    return selector.kind == "name" and _name_matches(selector.name or "", entry)


def _matches(name: str, pattern: str) -> bool:
    """`pattern` as an fnmatch glob, where spelling `name` exactly always counts too: a
    tool may be called `x[1]`, which as a glob would match only `x1`."""
    return name == pattern or fnmatchcase(name, pattern)


def _part_matches(name: str, pattern: str) -> bool:
    """A server or tool name against its part of a name selector, as configured or
    as it reads in exposed names (sanitized: `my.srv` is also `my_srv`)."""
    return _matches(name, pattern) or _matches(sanitize(name), pattern)


def _name_parts(pattern: str) -> list[tuple[str, str]]:
    """Every (server part, tool part) of a name selector: split at each `__` in it."""
    sep = NAME_SEPARATOR
    return [
        (pattern[:i], pattern[i + len(sep) :])
        for i in range(len(pattern) - len(sep) + 1)
        if pattern.startswith(sep, i)
    ]


def _name_matches(pattern: str, entry: ToolEntry) -> bool:
    """Whether the name selector `pattern` (`SERVER__TOOL`, either part a glob) names `entry`.

    It names a server tool when it is the tool's exposed name exactly, or when for some
    `__` in `pattern` the text before it matches the server and the text after it the
    tool (each raw or sanitized, exactly or as a glob). Never a glob over the joined
    string: `s__*` is every tool of `s`, never `s_`'s tool `x` (exposed `s___x`). A
    tool with a hashed exposed name is still named by its `SERVER__TOOL`. Where two
    pairs spell the same text (`s___x`: `s`'s `_x` and `s_`'s `x`) it names both;
    `ext:SERVER/TOOL` names one.
    """
    if entry.name == pattern:
        return True
    if NAME_SEPARATOR not in pattern:
        # No server part to split off: an exposed-name glob (`check`'s `read`, `memory_*`).
        return fnmatchcase(entry.name, pattern)
    if entry.server is None:
        return False
    return any(
        _part_matches(entry.server, server) and _part_matches(entry.tool, tool)
        for server, tool in _name_parts(pattern)
    )


def _could_select(selector: Selector, server: str) -> bool:
    if selector.kind == "ext":
        return selector.server == server
    parts = _name_parts(selector.name or "")
    return selector.kind == "name" and any(_part_matches(server, part) for part, _ in parts)


def _matches_everything(glob: str | None) -> bool:
    return glob is None or (glob != "" and set(glob) == {"*"})
