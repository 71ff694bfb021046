"""Choose a model spec (`PROVIDER:MODEL`) and build the model it names."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from launcher import settings
from launcher.errors import UsageError
from launcher.models.base import Model

if TYPE_CHECKING:
    import httpx2

PROVIDERS: tuple[str, ...] = ("openai", "anthropic", "scripted")
MODEL_ENV = settings.MODEL.name
EXAMPLES = "openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5, scripted:PATH"
LOCAL_PROVIDERS = frozenset({"scripted"})
"""Providers that answer without HTTP: their runs need no client and no trust store."""


def uses_http(spec: str) -> bool:
    """Whether the model `spec` names talks HTTP (an unknown provider counts as HTTP)."""
    return spec.strip().partition(":")[0] not in LOCAL_PROVIDERS


def resolve_model_spec(cli: str | None, agent: str | None, env: Mapping[str, str]) -> str:
    """The spec to use: `--model`, else the agent's `model:`, else $SUBAGENT_MODEL."""
    for candidate in (cli, agent, settings.MODEL.raw(env)):
        if candidate and candidate.strip():
            return candidate.strip()
    raise UsageError(
        f"no model chosen: pass --model PROVIDER:MODEL, set `model:` in the agent file, "
        f"or set {MODEL_ENV} (e.g. {EXAMPLES})"
    )


def create_model(
    spec: str,
    *,
    http: httpx2.AsyncClient | None = None,
    base_url: str | None = None,
    env: Mapping[str, str] | None = None,
    workspace: Path | None = None,
    script: str | None = None,
) -> Model:
    """Build the model `spec` names; a created HTTP client is closed by the model's `aclose()`.

    `script`: a `scripted:` spec's text, already read (serve reads a host's file once and
    hands its text over: the path is then never opened again).
    """
    provider, sep, name = spec.partition(":")
    if provider not in PROVIDERS:
        raise UsageError(
            f"unknown model provider '{provider}' in '{spec}': "
            f"expected one of {', '.join(PROVIDERS)} (e.g. {EXAMPLES})",
            field="model",
        )
    if not sep or not name:
        raise UsageError(f"model '{spec}' names no model: use {provider}:NAME", field="model")
    if provider == "scripted":
        from launcher.models.scripted import ScriptedModel

        path = Path(name).expanduser()
        if not path.is_absolute():
            path = (workspace or Path.cwd()) / path
        if script is not None:
            return ScriptedModel.from_text(script, path, spec=spec)
        return ScriptedModel.from_file(path, spec=spec)
    # The HTTP stack (~60 ms of imports) only for the providers that use it.
    import httpx2

    from launcher.models import anthropic, openai
    from launcher.models.anthropic import AnthropicModel
    from launcher.models.openai import OpenAIModel
    from launcher.models.retry import DEFAULT_TIMEOUT

    env = os.environ if env is None else env
    owns_http = http is None
    # A client that is never used opens no sockets, so a constructor raising on a
    # missing key leaves nothing to close.
    client = http or httpx2.AsyncClient(timeout=DEFAULT_TIMEOUT)
    if provider == "openai":
        return OpenAIModel(
            name,
            http=client,
            api_key=env.get(openai.API_KEY_ENV),
            base_url=base_url or env.get(openai.BASE_URL_ENV) or openai.DEFAULT_BASE_URL,
            owns_http=owns_http,
        )
    return AnthropicModel(
        name,
        http=client,
        api_key=env.get(anthropic.API_KEY_ENV),
        base_url=base_url or env.get(anthropic.BASE_URL_ENV) or anthropic.DEFAULT_BASE_URL,
        owns_http=owns_http,
    )
