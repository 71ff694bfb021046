"""ToolRegistry: the live tool maps of one session.

Plain data: built-in and memory tools, plus one map per server that is replaced
by diff whenever the server lists its tools. Every update returns its change (the one
change mechanism: the session turns it into a `tools_changed` event). The gate (the
session's admission decision, toolset/admission.py) is evaluated for every entry once
per change and its verdicts kept: `entries` is the active set, `offer` the same as a
turn offers it (made once per change, so a turn with no change does no work per tool),
`admit` the call-time answer in one lookup; refused entries stay registered for
reporting. The order is deterministic: built-ins, memory tools, then servers in config
order (not the order they answered), each server's tools in its own listing order. Where
names collide across servers, config order (not listing order) decides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from launcher.config.types import BUILTIN_TOOLS, MEMORY_TOOLS, OPT_IN_TOOLS
from launcher.toolset.admission import Gate
from launcher.toolset.naming import DEFAULT_NAMING, ToolNaming, exposed_name
from launcher.toolset.types import Offer, ToolCaller, ToolDef, ToolEntry

NOT_REGISTERED = "not registered"

LOCAL_SOURCES: tuple[str, ...] = ("builtin", "memory")
_BUILTIN_ORDER = BUILTIN_TOOLS + OPT_IN_TOOLS
_RESERVED: frozenset[str] = frozenset(_BUILTIN_ORDER) | frozenset(MEMORY_TOOLS)
_LOCAL_ORDER: dict[str, tuple[str, ...]] = {"builtin": _BUILTIN_ORDER, "memory": MEMORY_TOOLS}


@dataclass
class RegistryChange:
    """What one update did to a source's registered tools (exposed names)."""

    source: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


class _Taken:
    """Every name in use or reserved, plus names handed out during one update."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry
        self.extra: set[str] = set()

    def __contains__(self, name: object) -> bool:
        return (
            name in _RESERVED
            or name in self._registry._reserved
            or name in self.extra
            or name in self._registry._by_name
        )


class ToolRegistry:
    """Live maps of every registered tool, admitted or rejected by the gate."""

    def __init__(
        self,
        gate: Gate | None = None,
        order: Sequence[str] = (),
        naming: ToolNaming = DEFAULT_NAMING,
    ) -> None:
        """`order`: the configured servers in config (mcp.json) order; see `_new_name`.
        `naming`: the names the agent's model is offered (toolset/naming.py)."""
        self._gate = gate
        self._naming = naming
        self._reserved = frozenset(naming.local_name(name) for name in _RESERVED)
        self._order: dict[str, int] = {name: i for i, name in enumerate(dict.fromkeys(order))}
        self._local: dict[str, ToolEntry] = {}
        self._servers: dict[str, dict[str, ToolEntry]] = {}
        self._by_name: dict[str, ToolEntry] = {}
        # The gate's verdicts, kept until the next change: refused names and the active set.
        self._reasons: dict[str, str] = {}
        self._admitted: dict[str, ToolEntry] = {}
        self._offer: Offer | None = None  # made from `_admitted` when a turn first asks
        self.generation = 0
        """Counts changes: whatever is derived from the active set is fresh while it holds."""
        # Names handed out before, so a tool that goes and comes back keeps its name.
        self._remembered: dict[tuple[str, str], str] = {}

    # -- updates ---------------------------------------------------------------

    def add_local(self, entries: Iterable[ToolEntry]) -> RegistryChange:
        """Register built-in or memory tools under their own names.

        A server tool already holding such a name is renamed (a built-in is never
        shadowed). The change's source is `builtin`, `memory`, or `local` if mixed.
        """
        new = [replace(entry, name=self._naming.local_name(entry.tool)) for entry in entries]
        for entry in new:
            if entry.source not in LOCAL_SOURCES:
                raise ValueError(f"add_local takes builtin/memory tools, got {entry.source!r}")
        sources = {entry.source for entry in new}
        change = RegistryChange(sources.pop() if len(sources) == 1 else "local")
        for entry in new:
            holder = self._by_name.get(entry.name)
            if holder is not None and holder.server is not None:
                # Sessions register local tools first, so this is only for direct users.
                self._rename_server_entry(holder, reserve=entry.name)
            old = self._local.get(entry.name)
            if old is None:
                change.added.append(entry.name)
            elif old != entry:
                change.changed.append(entry.name)
            self._local[entry.name] = entry
            self._by_name[entry.name] = entry
        self._regate()
        return change

    def set_server_tools(
        self,
        server: str,
        tools: Sequence[ToolDef],
        make_caller: Callable[[str], ToolCaller],
    ) -> RegistryChange:
        """Replace `server`'s tool list with `tools` (its full new list) as a diff.

        Unchanged tools keep their entry, every listed tool keeps its exposed name;
        a new description or schema counts as changed. Duplicate names: first wins.
        """
        if server in LOCAL_SOURCES:
            raise ValueError(f"{server!r} is reserved for local tools")
        live = self._servers.setdefault(server, {})
        old = dict(live)
        listed: dict[str, ToolDef] = {}
        for tool in tools:
            listed.setdefault(tool.name, tool)
        change = RegistryChange(server)
        for name, entry in old.items():
            if name not in listed:
                change.removed.append(entry.name)
                del self._by_name[entry.name]
        taken = _Taken(self)
        new: dict[str, ToolEntry] = {}
        for name, tool in listed.items():
            previous = old.get(name)
            if previous is not None and _same(previous, tool):
                new[name] = previous
                continue
            if previous is not None:
                exposed = previous.name
                change.changed.append(exposed)
            else:
                exposed = self._new_name(server, name, taken)
                change.added.append(exposed)
            taken.extra.add(exposed)
            new[name] = ToolEntry(
                name=exposed,
                source=server,
                tool=name,
                description=tool.description,
                input_schema=tool.input_schema,
                call=make_caller(name),
                problem=tool.problem,
                check=tool.check,
            )
        if change.empty and list(new) == list(old):
            return change  # the same tools in the same order: every verdict still holds
        live.clear()
        live.update(new)
        for entry in new.values():
            self._by_name[entry.name] = entry
        self._regate()
        return change

    def remove_server(self, server: str) -> RegistryChange:
        """Forget `server` and every tool it registered."""
        live = self._servers.pop(server, None)
        change = RegistryChange(server)
        if live is None:
            return change
        for entry in live.values():
            change.removed.append(entry.name)
            del self._by_name[entry.name]
        live.clear()
        self._regate()
        return change

    # -- queries ---------------------------------------------------------------

    def get(self, name: str) -> ToolEntry | None:
        """The admitted entry with exposed name `name`, or None."""
        return self._admitted.get(name)

    def admit(self, name: str) -> ToolEntry | str:
        """The call-time answer in one lookup: the admitted entry to run, or why not."""
        entry = self._admitted.get(name)
        if entry is not None:
            return entry
        return self._reasons.get(name, NOT_REGISTERED)

    def entries(self) -> list[ToolEntry]:
        """Admitted entries (the active set): built-ins, memory tools, then servers in
        config order."""
        return list(self._admitted.values())

    def offer(self) -> Offer:
        """The active set as a turn offers it; the same object until the next change."""
        if self._offer is None:
            self._offer = Offer.of(self._admitted.values())
        return self._offer

    def rejected(self) -> list[tuple[ToolEntry, str]]:
        """Entries the gate rejected, with the reason, in `entries()` order."""
        return [
            (entry, self._reasons[entry.name])
            for entry in self._all_entries()
            if entry.name in self._reasons
        ]

    def muted(self) -> list[tuple[ToolEntry, str]]:
        """Every refused server tool with its reason, grouped by server (built-ins that
        were not requested are not listed)."""
        return [(entry, reason) for entry, reason in self.rejected() if entry.server is not None]

    def server_tools(self, server: str) -> Mapping[str, ToolEntry]:
        """A live read-only view of `server`'s tools: original name -> entry (all)."""
        return MappingProxyType(self._servers.get(server, {}))

    def servers(self) -> list[str]:
        """Servers with a tool list, in registration order."""
        return list(self._servers)

    def resolve(self, server: str, tool: str) -> str:
        """The exposed name of `server`'s `tool` if registered, else the one it would get."""
        entry = self._servers.get(server, {}).get(tool)
        if entry is not None:
            return entry.name
        return self._new_name(server, tool, _Taken(self))

    # -- internals -------------------------------------------------------------

    def _all_entries(self) -> list[ToolEntry]:
        local = sorted(self._local.values(), key=_local_sort_key)
        # Config order, not the order servers answered in: the same config offers the same
        # list in the same order every run (a provider's prompt cache keys on it).
        last = len(self._order)
        servers = sorted(self._servers, key=lambda name: (self._order.get(name, last), name))
        return local + [entry for name in servers for entry in self._servers[name].values()]

    def _new_name(self, server: str, tool: str, taken: _Taken) -> str:
        remembered = self._remembered.get((server, tool))
        if remembered is not None and remembered not in taken:
            return remembered
        # Plain names are reserved up front by config order: a plain name that a server
        # earlier in `order` could spell is never handed to a later one, even while the
        # earlier server has not listed (it may list late, or by list_changed). The
        # alternative, renaming the later holder when the earlier server arrives, would
        # rebind a name a running turn offered to a different server's tool, and needs a
        # change for a second source; reserving never renames, and the names depend only
        # on the config and each server's own list, not on which server answered first.
        # The price: a later server whose sanitized name aliases an earlier one (`a_b`
        # after `a.b`) gets hashed names even for tools the earlier server never lists.
        # A server outside `order` (direct users) comes after every server in it.
        name = exposed_name(server, tool, taken, earlier=self._earlier(server), naming=self._naming)
        self._remembered[(server, tool)] = name
        return name

    def _earlier(self, server: str) -> list[str]:
        rank = self._order.get(server, len(self._order))
        return [name for name, i in self._order.items() if i < rank]

    def _rename_server_entry(self, entry: ToolEntry, reserve: str) -> None:
        assert entry.server is not None
        taken = _Taken(self)
        taken.extra.add(reserve)
        self._remembered.pop((entry.server, entry.tool), None)
        renamed = replace(entry, name=self._new_name(entry.server, entry.tool, taken))
        del self._by_name[entry.name]
        self._by_name[renamed.name] = renamed
        self._servers[entry.server][entry.tool] = renamed

    def _regate(self) -> None:
        self.generation += 1
        self._offer = None
        self._reasons = {}
        self._admitted = {}
        for entry in self._all_entries():
            try:
                reason = self._gate(entry) if self._gate is not None else None
            except Exception as exc:
                # Fail closed: a gate that cannot decide must not admit the tool.
                reason = f"gate failed: {exc!r}"
            if reason is None:
                self._admitted[entry.name] = entry
            else:
                self._reasons[entry.name] = reason


def _same(entry: ToolEntry, tool: ToolDef) -> bool:
    return (
        entry.description == tool.description
        and entry.input_schema == tool.input_schema
        and entry.problem == tool.problem
    )


def _local_sort_key(entry: ToolEntry) -> tuple[int, int]:
    order = _LOCAL_ORDER[entry.source]
    group = LOCAL_SOURCES.index(entry.source)
    return (group, order.index(entry.tool) if entry.tool in order else len(order))
