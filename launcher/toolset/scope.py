"""ToolScope: which tools an agent may see and call, as a pure predicate.

Two layers, after DESIGN.md "Scope semantics". `gate` is the permanent exclusion
(isolation, built-ins not requested, `disallowed_tools`, orchestration tools,
servers outside `extensions`), meant as the registry's gate. `selects` is the
`ext:` selection, re-derived from the live registry whenever it is asked, so a
tool that registers late is in scope exactly when a selector picks it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Protocol

from launcher.config.types import (
    BUILTIN_TOOLS,
    MEMORY_TOOLS,
    OPT_IN_TOOLS,
    ORCHESTRATION_TOOLS,
    AgentSpec,
    Selector,
    ServerSpec,
)
from launcher.toolset.naming import NAME_SEPARATOR, plain_name, sanitize
from launcher.toolset.types import ToolEntry

ISOLATED = "isolated"
NOT_REQUESTED = "not requested"
DISALLOWED = "disallowed"
ORCHESTRATION = "orchestration"
EXTENSION_NOT_ALLOWED = "extension not allowed"
NOT_SELECTED = "not selected"


class RegistryView(Protocol):
    """The part of ToolRegistry that scope reads."""

    def get(self, name: str) -> ToolEntry | None: ...

    def entries(self) -> list[ToolEntry]: ...

    def rejected(self) -> list[tuple[ToolEntry, str]]: ...


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
            if self._disallowed(entry):
                return DISALLOWED
            return None if entry.name in self._builtins else NOT_REQUESTED
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
        if any(_selects(selector, entry) for selector in self._selectors):
            return None
        return NOT_SELECTED

    def reason(self, entry: ToolEntry) -> str | None:
        """Why `entry` is out of scope (gate first, then selection), or None."""
        return self.gate(entry) or self.selects(entry)

    def active(self, entries: Iterable[ToolEntry]) -> list[ToolEntry]:
        """The entries in scope, in the given order (pass `registry.entries()`)."""
        return [entry for entry in entries if self.reason(entry) is None]

    def muted(self, registry: RegistryView) -> list[tuple[ToolEntry, str]]:
        """Every server tool in `registry` that is not active, with its reason."""
        found = list(registry.rejected())
        for entry in registry.entries():
            reason = self.reason(entry)
            if reason is not None:
                found.append((entry, reason))
        found = [(entry, reason) for entry, reason in found if entry.server is not None]
        # Group by server in first-seen order; within a server, registry order holds.
        servers = list(dict.fromkeys(entry.server for entry, _ in found))
        return sorted(found, key=lambda pair: servers.index(pair[0].server))

    def admit(self, name: str, registry: RegistryView) -> ToolEntry | str:
        """The call-time veto in one step: the entry to call, or why `name` is refused."""
        entry = registry.get(name)
        if entry is None:
            return "not registered"
        reason = self.reason(entry)
        return entry if reason is None else reason

    def allows(self, name: str, registry: RegistryView) -> bool:
        """Whether the veto admits `name` in `registry` now."""
        return not isinstance(self.admit(name, registry), str)

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
            return self._disallowed_name(entry.name)
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
        return False


def _ext_matches(selector: Selector, entry: ToolEntry) -> bool:
    if selector.server != entry.server:
        return False
    return selector.tool is None or _matches(entry.tool, selector.tool)


def _selects(selector: Selector, entry: ToolEntry) -> bool:
    if selector.kind == "ext":
        return _ext_matches(selector, entry)
    return selector.kind == "name" and _name_matches(selector.name or "", entry)


def _matches(name: str, pattern: str) -> bool:
    """`pattern` as an fnmatch glob, where spelling `name` exactly always counts too: a
    tool may be called `x[1]`, which as a glob would match only `x1`."""
    return name == pattern or fnmatchcase(name, pattern)


def _name_matches(glob: str, entry: ToolEntry) -> bool:
    """A name selector means the tool's `SERVER__TOOL` (as configured or sanitized), even
    when collisions or length gave it a hashed exposed name; every form is matched."""
    if _matches(entry.name, glob):
        return True
    if entry.server is None:
        return False
    joined = f"{entry.server}{NAME_SEPARATOR}{entry.tool}"
    return _matches(joined, glob) or fnmatchcase(plain_name(entry.server, entry.tool), glob)


def _could_select(selector: Selector, server: str) -> bool:
    if selector.kind == "ext":
        return selector.server == server
    prefix = sanitize(server) + NAME_SEPARATOR
    return selector.kind == "name" and _glob_can_start_with(selector.name or "", prefix)


def _matches_everything(glob: str | None) -> bool:
    return glob is None or (glob != "" and set(glob) == {"*"})


def _glob_tokens(pattern: str) -> list[str]:
    """Split an fnmatch glob into `*`, `?`, `[...]` classes and literal characters."""
    tokens: list[str] = []
    i = 0
    while i < len(pattern):
        end = i + 1
        if pattern[i] == "[":
            j = i + 1
            if j < len(pattern) and pattern[j] == "!":
                j += 1
            if j < len(pattern) and pattern[j] == "]":
                j += 1
            j = pattern.find("]", j)
            # fnmatch reads an unclosed `[` as a literal.
            end = j + 1 if j != -1 else i + 1
        tokens.append(pattern[i:end])
        i = end
    return tokens


def _glob_can_start_with(pattern: str, prefix: str) -> bool:
    """Whether some string beginning with `prefix` matches `pattern` (a small NFA)."""
    tokens = _glob_tokens(pattern)

    def closure(states: set[int]) -> set[int]:
        result = set(states)
        for i in sorted(states):
            while i < len(tokens) and tokens[i] == "*":
                i += 1
                result.add(i)
        return result

    states = closure({0})
    for char in prefix:
        following: set[int] = set()
        for i in states:
            if i == len(tokens):
                continue
            token = tokens[i]
            if token == "*":
                following.add(i)
            elif token == "?" or (len(token) > 1 and fnmatchcase(char, token)):
                following.add(i + 1)
            elif token == char:
                following.add(i + 1)
        states = closure(following)
        if not states:
            return False
    return True
