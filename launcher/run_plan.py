"""One value per run: what a run is, settled once and passed down whole.

`assemble.plan_run` builds a `RunPlan` from the config and a request (spawn's options, a
serve or batch job, a check case); `assemble_session` makes the Session from it and
`run_agent` runs it. The agent in it is resolved once, so every layer below reads the same
agent, scope, workspace, lock pin, store and sandbox settings, model and limits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from launcher.budget import Limits
from launcher.config.lockfile import AgentPin
from launcher.config.types import AgentSpec, ModelPrice, SandboxSettings, ServerSpec
from launcher.runtime import Runtime
from launcher.runtime import current as current_runtime

if TYPE_CHECKING:
    from launcher.store.history import StoredSession
    from launcher.store.owner import Owner


@dataclasses.dataclass(frozen=True)
class StoreSettings:
    """How the session store records a run: the config directory it names, how deep the
    run is (> 0: a nested sub-agent's, which `last` never names), who started it (serve)."""

    config_dir: Path | None = None
    depth: int = 0
    owner: Owner | None = None


@dataclasses.dataclass(frozen=True)
class ModelChoice:
    """The model a run asks for: a spec (else the agent's `model:`, else $SUBAGENT_MODEL),
    an API base URL, and a `scripted:` spec's text when the caller has already read it."""

    spec: str | None = None
    base_url: str | None = None
    script: str | None = None


@dataclasses.dataclass(frozen=True)
class RunPlan:
    """A run, resolved: built by `assemble.plan_run`, read by everything below it (a test
    makes one by hand for a bare Session: the fields after `state_home` have defaults)."""

    agent: AgentSpec
    """Resolved once, with the config's sandbox default and `tool_search` settled on it."""
    servers: Mapping[str, ServerSpec]
    """The servers the agent may draw on: the configured ones and its inline ones."""
    _: dataclasses.KW_ONLY
    workspace: Path
    """Where the run works: the worktree's when the run is isolated."""
    state_home: Path
    """`SUBAGENT_HOME`: the session's directory and the store live under it."""
    ext: tuple[str, ...] = ()
    """`--ext` selections: with the agent's `tools`, the scope."""
    pin: AgentPin | None = None
    """The agent's pin in the lock (None: no lock, `--no-lock`, or no pin for it)."""
    session_id: str | None = None
    """The id the session takes: a resumed one's; None for a new one."""
    store: StoreSettings | None = None
    """The store's record of the run; None: not recorded (`SUBAGENT_STORE=0`)."""
    model: ModelChoice = dataclasses.field(default_factory=ModelChoice)
    """The model asked for; resolved against the agent and the environment at the run's start."""
    limits: Limits = dataclasses.field(default_factory=Limits)
    """What the request asks (above the agent file's, lowered with a warning)."""
    ceiling: Limits = dataclasses.field(default_factory=Limits)
    """A parent's remainder, which the run never exceeds."""
    prices: Mapping[str, ModelPrice] = dataclasses.field(default_factory=dict)
    """The config's price overrides."""
    history: StoredSession | None = None
    """A stored session the run continues (`--resume`): its messages and turns."""
    runtime: Runtime = dataclasses.field(default_factory=current_runtime)
    """The process's runtime the run belongs to (the one its entry point installed): its
    session's store writer counts, claims and connects through it."""

    @property
    def sandbox(self) -> SandboxSettings | None:
        """The sandbox settings of the run's built-in tools (settled on the agent)."""
        return self.agent.sandbox
