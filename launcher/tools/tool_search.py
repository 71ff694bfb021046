"""`tool_search`: the model finds in-scope tools by words or an RE2 pattern, and loads them.

Offered when the agent's tools are loaded on demand (toolset/ondemand.py). A search looks
at each tool's exposed name, its own name and its description; what it finds is loaded and
offered from the next turn. Words rank tools by how many of them they hold (a hit in the
name counts more); a pattern (RE2: linear time, whatever the model writes) keeps the order
the tools are offered in.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from launcher.errors import ToolError
from launcher.events import Event, ToolsLoaded
from launcher.tools.common import get_int, get_opt_str, safe_caller
from launcher.toolset.types import CALL_ID, Offer, ToolEntry, ToolResult

DEFAULT_LIMIT = 5
MAX_LIMIT = 20
NAME_WEIGHT = 3
"""A word found in a tool's name counts this many times one found in its description."""
DESCRIPTION_CHARS = 200
"""How much of each found tool's description the answer repeats."""

DESCRIPTION = (
    "Find tools that are available but not offered yet, and load them: the tools found "
    "can be called from your next turn. Search by words (`query`: matched in tool names "
    "and descriptions, any case) or by an RE2 regular expression (`pattern`)."
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "Words to look for, e.g. 'github issue'."},
        "pattern": {
            "type": "string",
            "description": "Instead of query: an RE2 regular expression, e.g. '^github__.*issue'.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "description": f"At most this many tools (default {DEFAULT_LIMIT}).",
        },
    },
    "additionalProperties": False,
}


class Searchable(Protocol):
    """What the tool needs of the session's on-demand offer (toolset/ondemand.py)."""

    def search(
        self, match: Callable[[Sequence[ToolEntry]], list[ToolEntry]]
    ) -> list[ToolEntry]: ...

    def offer(self) -> Offer: ...


def by_words(query: str, limit: int) -> Callable[[Sequence[ToolEntry]], list[ToolEntry]]:
    """Tools holding any of `query`'s words, most words first (name hits weigh more)."""
    words = [w for w in query.lower().split() if w]
    if not words:
        raise ToolError("'query' holds no word to look for")

    def match(entries: Sequence[ToolEntry]) -> list[ToolEntry]:
        scored: list[tuple[int, int, ToolEntry]] = []
        for index, entry in enumerate(entries):
            name = f"{entry.name} {entry.tool}".lower()
            text = entry.description.lower()
            score = sum(NAME_WEIGHT if w in name else 1 if w in text else 0 for w in words)
            if entry.name.lower() in words:
                score += NAME_WEIGHT * len(words)  # asked for by its exact name
            if score:
                scored.append((-score, index, entry))
        return [entry for _, _, entry in sorted(scored, key=lambda s: s[:2])[:limit]]

    return match


def by_pattern(pattern: str, limit: int) -> Callable[[Sequence[ToolEntry]], list[ToolEntry]]:
    """Tools whose `name tool description` line the RE2 `pattern` matches (any case)."""
    from launcher.tools.regex import compile_lines  # RE2: only for a search by pattern

    regex = compile_lines(pattern, ignore_case=True)  # a bad pattern: ToolError, said as such

    def match(entries: Sequence[ToolEntry]) -> list[ToolEntry]:
        lines = (f"{e.name} {e.tool} {' '.join(e.description.split())}" for e in entries)
        blob = "\n".join(lines).encode()
        found: list[ToolEntry] = []
        for number, _, _ in regex.lines(blob):
            found.append(entries[number - 1])
            if len(found) == limit:
                break
        return found

    return match


def tool_search_entry(
    host: Searchable, emit: Callable[[Event], Awaitable[None]], *, name: str
) -> ToolEntry:
    """The `tool_search` registry entry (it is never in the registry: the session offers it)."""

    async def run(args: dict[str, Any]) -> ToolResult:
        query, pattern = get_opt_str(args, "query"), get_opt_str(args, "pattern")
        if (query is None) == (pattern is None):
            raise ToolError("give exactly one of 'query' (words) or 'pattern' (RE2)")
        limit = min(get_int(args, "limit", DEFAULT_LIMIT, minimum=1), MAX_LIMIT)
        asked = query if query is not None else pattern
        assert asked is not None
        before = set(host.offer().names)
        match = by_words(asked, limit) if query is not None else by_pattern(asked, limit)
        found = host.search(match)
        new = [entry.name for entry in found if entry.name not in before]
        if new:
            await emit(ToolsLoaded(id=CALL_ID.get(), query=asked, loaded=new))
        return ToolResult(_answer(asked, found), structured={"loaded": [e.name for e in found]})

    return ToolEntry(
        name=name,
        source="builtin",
        tool=name,
        description=DESCRIPTION,
        input_schema=SCHEMA,
        call=safe_caller(name, run),
    )


def _answer(asked: str, found: list[ToolEntry]) -> str:
    if not found:
        return f"No tool matches '{asked}'. Try other words, or fewer."
    lines = [f"Found {len(found)} tool(s); call them from your next turn:"]
    for entry in found:
        text = " ".join(entry.description.split())[:DESCRIPTION_CHARS]
        lines.append(f"- {entry.name}: {text}" if text else f"- {entry.name}")
    return "\n".join(lines)
