"""One session's registry entries: built-in tools and each server's listed tools.

Every entry's caller is finished once, when the entry is made, not at each call: its
results never carry a known secret (not to the model, the events, stdout or a spilled
file), and a server's result over its `max_result_bytes` is kept whole in
`results/CALL.txt` rather than dropped. The registry entry the veto admits is what runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from launcher.config.tool_search_field import threshold
from launcher.config.types import DELEGATE_TOOL, AgentSpec, ServerSpec
from launcher.events import ToolsChanged
from launcher.secrets import LiveMask, SecretMask
from launcher.store.spill import fit_result, results_dir
from launcher.toolset.ondemand import TOOL_SEARCH, OnDemand
from launcher.toolset.registry import ToolRegistry
from launcher.toolset.types import CALL_ID, ToolCaller, ToolDef, ToolEntry, ToolResult

if TYPE_CHECKING:
    from launcher.events import Event
    from launcher.tools.bash import GroupGuard
    from launcher.tools.delegate import Delegate
    from launcher.tools.sandbox import ShellSandbox


def finished(call: ToolCaller, mask: SecretMask, limit: int | None, results: Path) -> ToolCaller:
    """`call` with its results masked and, over `limit` bytes, spilled to `results`."""
    if not mask and limit is None and not isinstance(mask, LiveMask):
        return call  # nothing to mask, now or later (a LiveMask learns tokens as it runs)

    async def finish(arguments: dict[str, Any]) -> ToolResult:
        result = await call(arguments)
        # text() is a no-op without a secret: no separate test of the (live) mask first.
        result.content = mask.text(result.content)
        if result.structured is not None and mask:
            result.structured = mask.value(result.structured)
        # Most results fit at a glance (no character is over 4 bytes): only a large one pays
        # for the thread hop that writing its spill file needs.
        if limit is not None and len(result.content) * 4 > limit:
            result.content = await anyio.to_thread.run_sync(
                fit_result, result.content, limit, results, CALL_ID.get() or "result"
            )
        return result

    return finish


class ToolServer(Protocol):
    """What a server's tools are called through (McpConnection)."""

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult: ...


def local_entries(
    agent: AgentSpec,
    wanted: Iterable[str],
    *,
    workspace: Path,
    home: Path,
    state_home: Path,
    session_dir: Path,
    mask: SecretMask,
    guard: GroupGuard | None,
    delegate: Delegate | None,
) -> tuple[list[ToolEntry], ShellSandbox]:
    """The built-in, delegation and memory entries `agent` gets, callers finished, and
    the sandbox its built-in tools' processes run in (the session closes it)."""
    from launcher.tools import builtin_entries, memory_entries
    from launcher.tools.delegate import delegate_entry
    from launcher.tools.sandbox import ShellSandbox

    sandbox = ShellSandbox(
        agent.sandbox,
        workspace=workspace,
        state_home=state_home,
        home=home,
        on_tmp=guard.remove_on_death if guard is not None else None,
        on_record=guard.restore_on_death if guard is not None else None,
        on_init=guard.end_on_death if guard is not None else None,
    )

    wanted = tuple(wanted)
    results = results_dir(session_dir)
    names = [n for n in wanted if not n.startswith("memory_") and n != DELEGATE_TOOL]
    entries = builtin_entries(workspace, names, group_guard=guard, results=results, sandbox=sandbox)
    if DELEGATE_TOOL in wanted:
        entries.append(delegate_entry(agent.allowed_subagents, delegate))
    if agent.memory is not None:
        entries += memory_entries(agent.name, agent.memory, workspace, home)
    finishing = [
        dataclasses.replace(entry, call=finished(entry.call, mask, None, results))
        for entry in entries
    ]
    return finishing, sandbox


def server_tools_sink(
    registry: ToolRegistry,
    spec: ServerSpec,
    connections: Mapping[str, ToolServer],
    *,
    mask: SecretMask,
    session_dir: Path,
    emit: Callable[[Event], Awaitable[None]],
) -> Callable[[list[ToolDef]], Awaitable[None]]:
    """Where a server's complete listings go: into `registry` as a diff, out as
    `tools_changed`. The server's connection is looked up in `connections` at each call
    (a listing can arrive before the session has filed the connection)."""
    results = results_dir(session_dir)

    def make_caller(tool: str) -> ToolCaller:
        def one(arguments: dict[str, Any]) -> Awaitable[ToolResult]:
            # Hands back the connection's own coroutine: no extra frame on every call's path.
            return connections[spec.name].call(tool, arguments)

        return finished(one, mask, spec.max_result_bytes, results)

    async def sink(defs: list[ToolDef]) -> None:
        if defs:
            change = registry.set_server_tools(spec.name, defs, make_caller)
        else:
            change = registry.remove_server(spec.name)
        if not change.empty:
            await emit(
                ToolsChanged(
                    source=spec.name,
                    added=list(change.added),
                    removed=list(change.removed),
                    changed=list(change.changed),
                )
            )

    return sink


def on_demand(
    registry: ToolRegistry,
    agent: AgentSpec,
    mask: SecretMask,
    session_dir: Path,
    emit: Callable[[Event], Awaitable[None]],
) -> OnDemand:
    """The session's offer, with tools on demand past the agent's `tool_search` threshold,
    and its `tool_search` entry, whose answers are finished like every local tool's."""

    def make_entry(host: OnDemand) -> ToolEntry:
        from launcher.tools.tool_search import tool_search_entry

        entry = tool_search_entry(host, emit, name=TOOL_SEARCH)
        return dataclasses.replace(
            entry, call=finished(entry.call, mask, None, results_dir(session_dir))
        )

    return OnDemand(registry, threshold(agent.tool_search), make_entry)
