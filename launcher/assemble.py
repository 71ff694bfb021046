"""`spawn`: resolve the model, run a session with an AgentLoop inside it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import httpx

from launcher.agent import AgentLoop
from launcher.models.factory import create_model, resolve_model_spec
from launcher.session import Session

MODEL_HTTP_TIMEOUT = httpx.Timeout(connect=10.0, read=300.0, write=30.0, pool=10.0)
"""Model APIs may think for minutes before the first streamed byte."""


async def spawn_agent(
    session: Session,
    prompt: str,
    *,
    model: str | None = None,
    max_turns: int | None = None,
    base_url: str | None = None,
    on_loop: Callable[[AgentLoop], None] | None = None,
) -> str:
    """Run the session's agent on `prompt` to its end; returns the final status.

    `on_loop` receives the AgentLoop before it runs, so a driver can steer or stop it.
    """
    spec = resolve_model_spec(model, session.agent.model, os.environ)
    async with httpx.AsyncClient(timeout=MODEL_HTTP_TIMEOUT) as http:
        # Built before any server starts: a bad model spec costs no process.
        llm = create_model(spec, http=http, base_url=base_url, workspace=Path.cwd())
        loop = AgentLoop(
            session,
            llm,
            prompt=session.agent.prompt,
            max_turns=max_turns or session.agent.max_turns,
        )

        if on_loop is not None:
            on_loop(loop)

        async def body(s: Session) -> str:
            end = await loop.run(prompt)
            return end.status

        return await session.run(body)
