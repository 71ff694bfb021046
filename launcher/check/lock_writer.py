"""`subagent lock`: start a session per agent, pin its surface, merge into the lock file.

Each session runs through `assemble_session` with the lock ignored (the point is to see
what the servers announce now), waits for the ready barrier plus `settle` seconds, and
pins the active set. The file is written once, after every named agent was pinned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from launcher.bridge.phase import ServerPhase
from launcher.check.pins import AgentPin, Drift, Lock, diff, load_lock, pin_session, write_lock
from launcher.config.discovery import DEFAULT_AGENT
from launcher.config.types import AgentSpec, Config
from launcher.errors import ConfigError, ServerError

if TYPE_CHECKING:
    from launcher.session import Session


@dataclass
class Pinned:
    """One agent's outcome: its previous pin (None if new) and its pin now."""

    agent: str
    previous: AgentPin | None
    current: AgentPin

    @property
    def drift(self) -> list[Drift]:
        return diff(self.previous or AgentPin(), self.current)


def lock_targets(config: Config, named: Sequence[str], lock: Lock | None) -> list[str]:
    """The agents to pin: those named; else every agent already locked or with an
    `expect:` block (that still exists); else `general-purpose`."""
    if named:
        return list(dict.fromkeys(named))
    locked = set(lock.agents) if lock is not None else set()
    # `expect` is the check room's AgentSpec field; read softly so either lands first.
    found = [
        name
        for name, spec in config.agents.items()
        if name in locked or getattr(spec, "expect", None)
    ]
    return sorted(found) or [DEFAULT_AGENT]


async def pin_agent(
    config: Config, agent: AgentSpec, *, settle: float, workspace: Path, name: str
) -> AgentPin:
    """Run one unlocked session for `agent` (resolved, as `name`) and pin what it would offer."""
    import anyio

    from launcher.assemble import assemble_session, plan_run

    session = assemble_session(plan_run(config, agent, workspace=workspace, lock=False))

    async def body(s: Session) -> AgentPin:
        if settle > 0:
            await anyio.sleep(settle)
        for server, status in s.status().items():
            # A lock taken while a server is down would later mute every tool it has.
            if status.state is ServerPhase.FAILED:
                raise ServerError(
                    server, f"failed, so agent '{name}' was not locked: {status.error}"
                )
        return pin_session(s)

    return await session.run(body)


async def lock_agents(
    config: Config, named: Sequence[str], *, settle: float, workspace: Path
) -> list[Pinned]:
    """Pin every target agent and write the merged lock; agents not pinned keep theirs."""
    if config.lock_path is None:
        raise ConfigError("no config directory to hold the lock")
    previous = load_lock(config.lock_path)
    targets = lock_targets(config, named, previous)
    from launcher.assemble import resolve_request

    # Resolved once, all before any start: an unknown agent is bad usage.
    specs = [resolve_request(config, agent, ()) for agent in targets]
    old = previous.agents if previous is not None else {}
    results = [
        Pinned(
            agent,
            old.get(agent),
            await pin_agent(config, spec, settle=settle, workspace=workspace, name=agent),
        )
        for agent, spec in zip(targets, specs, strict=True)
    ]
    merged = Lock(dict(old))
    for result in results:
        merged.agents[result.agent] = result.current
    write_lock(config.lock_path, merged)
    return results
