"""Trace context in and out: carried parents and links, the model request's header, retries.

In process, on a private in-memory provider (tests/telemetry_support.py); the same paths
across real processes are e2e (tests/e2e/test_traces_export.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from opentelemetry.trace import StatusCode

from launcher import telemetry
from launcher.assemble import assemble_session, plan_run, run_agent
from launcher.config.discovery import load_config
from launcher.errors import ModelError
from launcher.models.base import Message, ModelRequest
from launcher.models.openai import OpenAIModel
from launcher.models.retry import RetryPolicy
from launcher.run_plan import ModelChoice
from tests.telemetry_support import named, parent_of, recording, span_id, trace_id, write_scripted

PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
PARENT_TRACE, PARENT_SPAN = 0x0AF7651916CD43DD8448EB211C80319C, 0xB7AD6B7169203331


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUBAGENT_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("SUBAGENT_STORE", "0")


async def _say_done(tmp_path: Path) -> None:
    config_dir, script = write_scripted(tmp_path, "steps:\n  - say: done\n")
    config = load_config(config_dir, cwd=tmp_path)
    model = ModelChoice(f"scripted:{script}")
    plan = plan_run(config, "general-purpose", workspace=tmp_path, model=model)
    await run_agent(assemble_session(plan), "go")


@pytest.mark.anyio
async def test_a_carried_parent_parents_the_session(tmp_path: Path) -> None:
    with recording() as exporter:
        with telemetry.traces().adopt({"traceparent": PARENT}, None):
            await _say_done(tmp_path)
    (root,) = named(exporter.get_finished_spans(), "invoke_agent")
    assert trace_id(root) == PARENT_TRACE
    assert parent_of(root) == PARENT_SPAN
    assert root.parent is not None and root.parent.is_remote


@pytest.mark.anyio
async def test_a_link_makes_the_session_a_trace_of_its_own(tmp_path: Path) -> None:
    with recording() as exporter:
        with telemetry.traces().adopt(None, {"traceparent": PARENT}):
            await _say_done(tmp_path)
    (root,) = named(exporter.get_finished_spans(), "invoke_agent")
    assert root.parent is None
    assert trace_id(root) != PARENT_TRACE
    (link,) = root.links
    assert (link.context.trace_id, link.context.span_id) == (PARENT_TRACE, PARENT_SPAN)


@pytest.mark.anyio
async def test_a_garbled_carrier_starts_a_new_trace(tmp_path: Path) -> None:
    with recording() as exporter:
        with telemetry.traces().adopt({"traceparent": "00-zz-yy-01"}, {"traceparent": "junk"}):
            await _say_done(tmp_path)
    (root,) = named(exporter.get_finished_spans(), "invoke_agent")
    assert root.parent is None and not root.links


def test_carrier_names_the_current_span() -> None:
    with recording() as exporter:
        tracing = telemetry.traces()
        assert tracing.carrier() is None  # nothing current: nothing to carry
        with tracing.batch(Path("tasks.jsonl")):
            carried = tracing.carrier()
            env = tracing.child_env({"PATH": "/bin", "TRACEPARENT": "00-stale-stale-01"})
    (batch,) = exporter.get_finished_spans()
    assert batch.name == "batch tasks.jsonl"
    expected = f"00-{trace_id(batch):032x}-{span_id(batch):016x}"
    assert carried is not None and carried["traceparent"].startswith(expected)
    assert env["TRACEPARENT"] == carried["traceparent"] and env["PATH"] == "/bin"


def _stream(text: str) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]}
    usage = {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3}}
    return f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode()


class Recorder:
    """An httpx2 transport: a 429 first (when asked), then a one-line answer; keeps headers."""

    def __init__(self, *, busy_first: bool) -> None:
        self.busy = busy_first
        self.headers: list[dict[str, str]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.headers.append(dict(request.headers))
        if self.busy:
            self.busy = False
            return httpx2.Response(429, json={"error": {"message": "slow down"}})
        return httpx2.Response(200, content=_stream("hello"))


async def _no_wait(seconds: float) -> None:
    return None


async def _complete(transport: Recorder) -> Any:
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(transport)) as http:
        policy = RetryPolicy(sleep=_no_wait, jitter=lambda: 0.0)
        model = OpenAIModel("gpt-x", http=http, api_key="k", base_url="http://m", retry=policy)
        request = ModelRequest(system="s", messages=[Message(role="user", content="hi")], tools=[])
        with telemetry.traces().chat(model.spec) as chat:
            response = await model.complete(request)
            chat.reply(request, response)
    return response


@pytest.mark.anyio
async def test_model_requests_carry_the_chat_span_and_retries_are_its_events() -> None:
    transport = Recorder(busy_first=True)
    with recording() as exporter:
        await _complete(transport)
    (chat,) = exporter.get_finished_spans()
    assert chat.name == "chat gpt-x"
    assert chat.attributes is not None
    assert chat.attributes["gen_ai.provider.name"] == "openai"
    assert (
        chat.attributes["gen_ai.usage.input_tokens"],
        chat.attributes["gen_ai.usage.output_tokens"],
    ) == (7, 3)
    assert tuple(chat.attributes["gen_ai.response.finish_reasons"]) == ("stop",)  # type: ignore[arg-type]
    expected = f"00-{trace_id(chat):032x}-{span_id(chat):016x}-"
    assert len(transport.headers) == 2
    assert all(h["traceparent"].startswith(expected) for h in transport.headers)
    (retry,) = chat.events
    assert retry.name == "subagent.retry"
    assert retry.attributes is not None and retry.attributes["subagent.attempt"] == 1
    assert "HTTP 429" in str(retry.attributes["subagent.reason"])


@pytest.mark.anyio
async def test_without_traces_model_requests_carry_no_traceparent() -> None:
    transport = Recorder(busy_first=False)
    await _complete(transport)
    assert "traceparent" not in transport.headers[0]


@pytest.mark.anyio
async def test_a_failed_model_request_is_an_error_chat_span() -> None:
    class Refusing:
        def __call__(self, request: httpx2.Request) -> httpx2.Response:
            return httpx2.Response(401, json={"error": {"message": "bad key"}})

    with recording() as exporter:
        with pytest.raises(ModelError):
            await _complete(Refusing())  # type: ignore[arg-type]
    (chat,) = exporter.get_finished_spans()
    assert chat.status.status_code is StatusCode.ERROR
    assert "HTTP 401" in (chat.status.description or "")
    assert chat.attributes is not None and chat.attributes["error.type"] == "ModelError"
