"""Tools on demand: past a size, a turn offers `tool_search` and the tools it loaded.

When the definitions of the in-scope server tools (name, description, input schema as JSON)
exceed the agent's threshold, a turn offers the local tools (built-ins, memory, delegation),
`tool_search`, and the server tools the model loaded with it, instead of every schema. The
search reads only the active set (the admission gate's verdicts), so it can never find a
tool out of scope; a loaded tool joins the offer from the next turn and is called through
the same veto as any other; one that leaves scope leaves the offer with it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence

from launcher.toolset.registry import ToolRegistry
from launcher.toolset.types import Offer, ToolEntry

TOOL_SEARCH = "tool_search"
"""The search tool's exposed name (a server tool's name always holds `__`: no clash)."""


def definition_bytes(entry: ToolEntry) -> int:
    """What `entry`'s definition weighs in a request: its name, description and schema."""
    schema = json.dumps(entry.input_schema, ensure_ascii=False, separators=(",", ":"))
    return len(entry.name) + len(entry.description.encode()) + len(schema.encode())


Matcher = Callable[[Sequence[ToolEntry]], list[ToolEntry]]
"""Picks the entries a search finds among the candidates, best first."""


class OnDemand:
    """The offer of one session when its tools may be loaded on demand.

    `threshold` None: never (every tool offered); 0: whenever a server tool is in scope.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        threshold: int | None,
        make_entry: Callable[[OnDemand], ToolEntry],
    ) -> None:
        self.registry = registry
        self.threshold = threshold
        self._make_entry = make_entry
        self._entry: ToolEntry | None = None
        self._loaded: dict[str, None] = {}  # exposed names, in the order they were loaded
        self._key: tuple[int, int] | None = None  # (registry generation, loads) of `_offer`
        self._offer: Offer | None = None
        self._sizes: dict[int, tuple[ToolEntry, int]] = {}  # id(entry) -> (entry, bytes)

    def offer(self) -> Offer:
        """What the next turn offers; the same object while neither the registry nor the
        loaded set changed (a turn with no change does no work per tool)."""
        key = (self.registry.generation, len(self._loaded))
        if self._offer is None or key != self._key:
            self._offer, self._key = self._build(), key
        return self._offer

    @property
    def entry(self) -> ToolEntry:
        """The `tool_search` entry (its caller searches here; never in the registry), made
        when first offered: a session that never needs it never imports the tool."""
        if self._entry is None:
            self._entry = self._make_entry(self)
        return self._entry

    def admit(self, name: str) -> ToolEntry | str:
        """The call-time answer for an offered `name`: `tool_search` is this session's own
        (a server tool's exposed name always holds `__`), every other name the registry's."""
        return self.entry if name == TOOL_SEARCH else self.registry.admit(name)

    def search(self, match: Matcher) -> list[ToolEntry]:
        """The in-scope server tools `match` finds, best first; they are loaded: offered
        from the next turn on. Out-of-scope tools are never candidates."""
        found = match(self._candidates())
        for entry in found:
            self._loaded.setdefault(entry.name)
        return found

    @property
    def loaded(self) -> list[str]:
        """Names loaded so far, in load order (some may have left scope since)."""
        return list(self._loaded)

    def _candidates(self) -> list[ToolEntry]:
        return [e for e in self.registry.offer().entries if e.server is not None]

    def _build(self) -> Offer:
        full = self.registry.offer()
        servers = [e for e in full.entries if e.server is not None]
        if self.threshold is None or not servers or self._weight(servers) <= self.threshold:
            return full
        local = (e for e in full.entries if e.server is None)
        loaded = [e for e in servers if e.name in self._loaded]
        return Offer.of([*local, self.entry, *loaded], deferred=len(servers) - len(loaded))

    def _weight(self, entries: Iterable[ToolEntry]) -> int:
        # Entries are kept across changes (an unchanged tool keeps its entry object): each
        # definition is measured once, not at every change.
        sizes: dict[int, tuple[ToolEntry, int]] = {}
        total = 0
        for entry in entries:
            known = self._sizes.get(id(entry))
            size = known[1] if known is not None and known[0] is entry else definition_bytes(entry)
            sizes[id(entry)] = (entry, size)
            total += size
        self._sizes = sizes
        return total
