"""Turning a host's `spawn_subagent` arguments into a queued sub-agent, without the MCP SDK.

Both faces start runs here: the SDK server (server.py, tools and tasks alike) and the
first call the early face takes before the SDK has loaded (first_call.py). The checks are
the same either way: arguments against the tool's schema, the agent and `--ext` names, a
host's `scripted:` file, a `resume` this caller may reach.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import anyio

from launcher.backend import catalog
from launcher.backend.arguments import check_arguments
from launcher.backend.host_model import read_host_script, scripted_roots
from launcher.backend.pool import SubAgent, SubagentManager
from launcher.budget import LIMIT_FIELDS, Limits, limits_of, resolve_limits
from launcher.config.types import Config
from launcher.store.owner import Owner


def _stored(ref: str, agent: Any, owner: Owner) -> Any:
    """The stored session a `resume` names, one `owner` started (checked here, so a bad id
    fails the call at once). Blocking (the store): called on a thread."""
    from launcher.errors import UsageError
    from launcher.state import state_home
    from launcher.store.history import load_resumable

    # The worker takes the run lock; `owner` hides every other session, whoever's it is.
    stored = load_resumable(state_home(), ref, run=False, owner=owner)
    if agent and agent != stored.agent:
        raise UsageError(f"session {stored.id} is agent {stored.agent!r}; leave `agent` out")
    return stored


class Spawner:
    """Starts sub-agents on `manager` with the config serve loaded at its start."""

    def __init__(
        self,
        manager: SubagentManager,
        config: Config,
        config_dir: Path | None,
        workspace: Path,
        scripted_dirs: tuple[Path, ...] = (),
    ) -> None:
        self.manager = manager
        self.config = config
        self.workspace = workspace
        self.scripted_roots = scripted_roots(config_dir, workspace, scripted_dirs)

    def last_started(self, caller: str | None) -> str:
        """`resume: "last"`: the newest session this serve started for this caller (another
        caller's, a CLI run's or a nested child's never is); UsageError if none is known."""
        from launcher.errors import UsageError

        for entry in reversed(list(self.manager.agents.values())):
            if entry.session_id and entry.caller == caller:
                return entry.session_id
        raise UsageError("no sub-agent this serve started has a stored session: nothing is `last`")

    async def start(
        self, args: dict[str, Any], *, caller: str | None = None, can_ask: bool = False
    ) -> SubAgent:
        """Validate `spawn_subagent` arguments and queue the sub-agent for `caller`;
        `can_ask`: its servers' input requests may wait for this host. Fills the agent
        file's `background` into `args` when the host named none.

        The store lookup and a host script's read and parse run on a thread: the event
        loop keeps answering the host meanwhile.
        """
        from launcher.assemble import resolve_request
        from launcher.config.snapshot import snapshot_of

        schema = catalog.tool_schema("spawn_subagent")
        assert schema is not None
        host_args, args = args, check_arguments("spawn_subagent", schema, args)
        prompt = str(args["prompt"])
        agent = str(args.get("agent") or "general-purpose")
        ext = [str(e) for e in args.get("ext") or []]
        model, resume = args.get("model"), args.get("resume")
        config = self.config
        hosts = model  # a model the host named: a `scripted:` one is read here, once
        if resume:
            ref = self.last_started(caller) if resume == "last" else str(resume)
            owner = self.manager.owner_of(caller)
            stored = await anyio.to_thread.run_sync(_stored, ref, args.get("agent"), owner)
            agent, resume = stored.agent, stored.id
            if model is None:
                model = stored.model
                # The host's own choice the last time is read and checked again.
                hosts = None if self._operators(model, config, agent) else model
        read = functools.partial(
            read_host_script, hosts, roots=self.scripted_roots, workspace=self.workspace
        )
        script = await anyio.to_thread.run_sync(read)
        spec = resolve_request(config, agent, ext)
        if args.get("background") is None:
            # The agent file's default, seen by the caller that decides how to answer.
            host_args["background"] = spec.background
        if host_args.get("background"):
            can_ask = False  # nobody waits on a background call to answer its servers' asks
        max_turns = args.get("max_turns")
        limits = {k: args[k] for k in LIMIT_FIELDS if args.get(k) is not None}
        # The worker enforces them; serve keeps the timeout too, to end a stuck worker.
        timeout = resolve_limits(limits_of(spec), Limits.from_mapping(limits))[0].timeout
        return self.manager.spawn(
            prompt,
            agent=agent,
            ext=ext,
            model=model,
            max_turns=int(max_turns) if max_turns is not None else None,
            limits=limits,
            backstop=timeout,
            resume=resume or None,
            # The worker runs with what serve loaded and checked, never a fresh discovery.
            config=snapshot_of(config, lock=not self.manager.no_lock),
            script=script,
            caller=caller,
            can_ask=can_ask,
        )

    def _operators(self, model: str | None, config: Any, agent: str) -> bool:
        """Whether a resumed session's `model` is the operator's choice (serve's `--model`,
        the agent's `model:`, SUBAGENT_MODEL), which the worker reads as it always has,
        rather than one a host named (whose script is read and checked again)."""
        from launcher.models.factory import MODEL_ENV

        spec = config.agents.get(agent)
        chosen = (self.manager.default_model, spec.model if spec else None, os.getenv(MODEL_ENV))
        return model is None or model in chosen
