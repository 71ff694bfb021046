"""A secret a model streams split across SSE chunks never shows: not in `--json` stdout, the
terminal, stderr, events.jsonl or the store, and not in what serve hands its host.

The model is a loopback HTTP stub speaking the OpenAI and Anthropic stream shapes, four
characters a chunk; the secrets are the model's own API key and a `${VAR}` of mcp.json.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.conftest import Subagent, write_config
from tests.e2e.model_stub import ModelStub, StubResponse, anthropic_stream, openai_stream, sse

pytestmark = pytest.mark.e2e

LIMIT_S = 90.0
"""Bounds the serve test; serve and a worker each pay an SDK import on 2 cores."""
API_KEY = "sk-live-0123456789abcdef"
UPSTREAM = "upstream-9f8e7d6c5b4a"
TEXT = f"key is {API_KEY} and {UPSTREAM} ok"
SHOWN = "key is **** and **** ok"
AGENT = "---\nname: talker\ntools: [read]\nextensions: false\n---\nTalk.\n"
UNUSED = {"command": "true", "env": {"UPSTREAM_VALUE": "${UPSTREAM_VALUE}"}}
"""Never started (the agent takes no server), but its `${VAR}` value is a session secret."""
PROVIDERS = {
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL", openai_stream),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", anthropic_stream),
}


def _config(tmp_path: Path) -> Path:
    return write_config(tmp_path / "cfg", {"unused": UNUSED}, {"talker": AGENT})


def _base(model: ModelStub, provider: str) -> str:
    return model.openai_base if provider == "openai" else model.anthropic_base


def _env(model: ModelStub, provider: str) -> dict[str, str]:
    key_var, base_var, _ = PROVIDERS[provider]
    return {key_var: API_KEY, base_var: _base(model, provider), "UPSTREAM_VALUE": UPSTREAM}


def _assert_nowhere(home: Path, *texts: str) -> None:
    for secret in (API_KEY, UPSTREAM):
        for text in texts:
            assert secret not in text
        for path in (p for p in home.rglob("*") if p.is_file()):
            assert secret.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_a_streamed_secret_is_masked_in_json_terminal_and_at_rest(
    tmp_path: Path, subagent: Subagent, model: ModelStub, provider: str
) -> None:
    stream = PROVIDERS[provider][2]
    model.enqueue(stream(text=TEXT, piece=4), stream(text=TEXT, piece=4))
    config = _config(tmp_path)
    spec = ("--config-dir", str(config), "--agent", "talker", "--model", f"{provider}:m")
    env = _env(model, provider)

    as_json = subagent.run("spawn", "--json", *spec, "say it", env=env)
    assert as_json.code == 0, as_json.stderr
    deltas = [e["text"] for e in as_json.json_lines() if e["type"] == "text_delta"]
    assert len(deltas) > 1 and "".join(deltas) == SHOWN
    (session,) = subagent.sessions()
    written = [e for e in subagent.events(session) if e["type"] == "text_delta"]
    assert "".join(e["text"] for e in written) == SHOWN

    human = subagent.run("spawn", *spec, "say it again", env=env)
    assert human.code == 0, human.stderr
    assert SHOWN in human.stdout
    _assert_nowhere(subagent.home, as_json.stdout, as_json.stderr, human.stdout, human.stderr)


def _broken_openai_stream(text: str) -> StubResponse:
    """Text in 4-character deltas, then an error chunk: the run ends with no final answer, so
    what serve hands back is the text streamed so far."""
    whole = openai_stream(text=text, piece=4)
    assert whole.events is not None
    events = whole.events[:-3]  # drop the finish chunk, the usage chunk and [DONE]
    events.append(sse({"error": {"message": "overloaded", "type": "server_error"}}))
    return StubResponse(headers=whole.headers, events=events)


@pytest.mark.anyio
async def test_serve_hands_its_host_no_streamed_secret(tmp_path: Path, model: ModelStub) -> None:
    model.enqueue(_broken_openai_stream(TEXT))
    config = _config(tmp_path)
    home = tmp_path / "state"
    env = {**os.environ, "SUBAGENT_HOME": str(home), **_env(model, "openai")}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "launcher.cli", "serve", "--config-dir", str(config)],
        env=env,
        cwd=str(tmp_path),
    )
    progress: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(str(message))

    with anyio.fail_after(LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S) as c:
            result = await c.call_tool(
                "spawn_subagent",
                {"prompt": "say it", "agent": "talker", "model": "openai:m"},
                progress_callback=on_progress,
            )
            agent_id = (result.structured_content or {}).get("agent_id")
            later = await c.call_tool("get_subagent_result", {"agent_id": agent_id})
    assert result.structured_content is not None, result
    assert result.structured_content["status"] == "error", result.structured_content
    # The run ended before a final answer: serve's result is the streamed text, masked.
    assert result.structured_content["result"] == SHOWN
    assert later.structured_content is not None and later.structured_content["result"] == SHOWN
    host_saw = [repr(result), repr(later), *progress]
    _assert_nowhere(home, *host_saw, (tmp_path / "serve.err").read_text())
