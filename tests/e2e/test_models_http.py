"""The openai and anthropic providers against a real loopback HTTP stub server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx2
import pytest

from launcher.errors import ModelError
from launcher.models.anthropic import AnthropicModel
from launcher.models.base import Message, ModelRequest, ToolCall
from launcher.models.openai import OpenAIModel
from launcher.models.retry import RetryPolicy
from launcher.toolset.types import ToolDef
from tests.e2e.conftest import closed_port
from tests.e2e.model_stub import (
    ModelStub,
    StubResponse,
    anthropic_stream,
    error_response,
    openai_stream,
    sse,
)

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}
TOOLS = [ToolDef(name="srv__ls", description="List a directory", input_schema=SCHEMA)]
HISTORY = [
    Message(role="user", content="list it"),
    Message(
        role="assistant",
        content="Looking.",
        tool_calls=[
            ToolCall(id="c1", name="srv__ls", arguments={"path": "."}),
            ToolCall(id="c2", name="srv__ls", arguments={"path": "/nope"}),
        ],
    ),
    Message(role="tool", tool_call_id="c1", name="srv__ls", content="a.txt"),
    Message(role="tool", tool_call_id="c2", name="srv__ls", content="denied", is_error=True),
]
STREAMS = {"openai": openai_stream, "anthropic": anthropic_stream}


@pytest.fixture
def stub() -> Iterator[ModelStub]:
    with ModelStub() as server:
        yield server


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    # trust_env=False: a proxy from the environment must not intercept loopback calls.
    async with httpx2.AsyncClient(trust_env=False) as client:
        yield client


class SleepRecorder:
    """Stands in for anyio.sleep: records the delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def make(
    provider: str, stub: ModelStub, http: httpx2.AsyncClient, sleep: SleepRecorder | None = None
) -> OpenAIModel | AnthropicModel:
    policy = RetryPolicy(sleep=sleep or SleepRecorder(), jitter=lambda: 1.0)
    if provider == "openai":
        return OpenAIModel(
            "gpt-x", http=http, api_key="sk-test", base_url=stub.openai_base, retry=policy
        )
    return AnthropicModel(
        "claude-x", http=http, api_key="sk-ant", base_url=stub.anthropic_base, retry=policy
    )


def request(on_text: Callable[[str], Any] | None = None) -> ModelRequest:
    return ModelRequest(system="Be brief.", messages=list(HISTORY), tools=TOOLS, on_text=on_text)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_streamed_tool_call_arguments_are_assembled(
    provider: str, stub: ModelStub, http: httpx2.AsyncClient
) -> None:
    calls = [("t1", "srv__ls", {"path": "src/launcher", "depth": 2}), ("t2", "srv__read", {})]
    stub.enqueue(STREAMS[provider](text="", tool_calls=calls, piece=3))
    response = await make(provider, stub, http).complete(request())
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("t1", "srv__ls", {"path": "src/launcher", "depth": 2}),
        ("t2", "srv__read", {}),
    ]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_text_deltas_arrive_in_order_and_usage_is_parsed(
    provider: str, stub: ModelStub, http: httpx2.AsyncClient
) -> None:
    stub.enqueue(STREAMS[provider](text="Two issues are open.", usage=(123, 45), piece=5))
    deltas: list[str] = []

    async def on_text(text: str) -> None:
        deltas.append(text)

    response = await make(provider, stub, http).complete(request(on_text))
    assert len(deltas) == 4
    assert "".join(deltas) == response.text == "Two issues are open."
    assert (response.usage.input_tokens, response.usage.output_tokens) == (123, 45)
    assert response.tool_calls == []


async def test_openai_request_has_tools_and_tool_results_in_wire_shape(
    stub: ModelStub, http: httpx2.AsyncClient
) -> None:
    stub.enqueue(openai_stream(text="ok"))
    await make("openai", stub, http).complete(request())
    sent = stub.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test"
    body = sent.body
    assert body["model"] == "gpt-x" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "srv__ls",
                "description": "List a directory",
                "parameters": SCHEMA,
            },
        }
    ]
    messages = body["messages"]
    assert messages[0] == {"role": "system", "content": "Be brief."}
    assert messages[1] == {"role": "user", "content": "list it"}
    assert messages[2]["role"] == "assistant" and messages[2]["content"] == "Looking."
    assert [c["function"] for c in messages[2]["tool_calls"]] == [
        {"name": "srv__ls", "arguments": '{"path": "."}'},
        {"name": "srv__ls", "arguments": '{"path": "/nope"}'},
    ]
    assert messages[3:] == [
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        {"role": "tool", "tool_call_id": "c2", "content": "denied"},
    ]


async def test_anthropic_request_merges_tool_results_into_one_user_turn(
    stub: ModelStub, http: httpx2.AsyncClient
) -> None:
    stub.enqueue(anthropic_stream(text="ok"))
    await make("anthropic", stub, http).complete(request())
    sent = stub.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == "sk-ant"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    body = sent.body
    assert (body["system"], body["max_tokens"], body["stream"]) == ("Be brief.", 4096, True)
    assert body["tools"] == [
        {"name": "srv__ls", "description": "List a directory", "input_schema": SCHEMA}
    ]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "c1", "name": "srv__ls", "input": {"path": "."}},
        {"type": "tool_use", "id": "c2", "name": "srv__ls", "input": {"path": "/nope"}},
    ]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "a.txt"},
        {"type": "tool_result", "tool_use_id": "c2", "content": "denied", "is_error": True},
    ]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_429_and_503_are_retried_after_the_retry_after_delay(
    provider: str, stub: ModelStub, http: httpx2.AsyncClient
) -> None:
    stub.enqueue(
        error_response(429, "rate limited", retry_after="2"),
        error_response(503, "overloaded", retry_after="0.5"),
        STREAMS[provider](text="finally"),
    )
    sleep = SleepRecorder()
    response = await make(provider, stub, http, sleep).complete(request())
    assert response.text == "finally"
    assert len(stub.requests) == 3
    assert sleep.delays == [2.0, 0.5]
    assert stub.requests[0].body == stub.requests[2].body


async def test_retry_without_retry_after_backs_off_exponentially(
    stub: ModelStub, http: httpx2.AsyncClient
) -> None:
    stub.enqueue(error_response(500, "boom"), error_response(502, "boom"), openai_stream("ok"))
    sleep = SleepRecorder()
    await make("openai", stub, http, sleep).complete(request())
    assert sleep.delays == [1.0, 2.0]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_exhausted_retries_name_provider_status_and_message(
    provider: str, stub: ModelStub, http: httpx2.AsyncClient
) -> None:
    stub.enqueue(*[error_response(529, "Overloaded right now") for _ in range(4)])
    with pytest.raises(ModelError) as caught:
        await make(provider, stub, http).complete(request())
    message = str(caught.value)
    assert provider in message and "529" in message and "Overloaded right now" in message
    assert len(stub.requests) == 4


async def test_client_error_is_not_retried(stub: ModelStub, http: httpx2.AsyncClient) -> None:
    stub.enqueue(error_response(401, "invalid x-api-key", kind="authentication_error"))
    sleep = SleepRecorder()
    with pytest.raises(ModelError) as caught:
        await make("anthropic", stub, http, sleep).complete(request())
    assert str(caught.value) == "anthropic: HTTP 401: invalid x-api-key"
    assert len(stub.requests) == 1 and sleep.delays == []


async def test_unreachable_server_is_retried_then_reported(http: httpx2.AsyncClient) -> None:
    sleep = SleepRecorder()
    policy = RetryPolicy(sleep=sleep, max_attempts=3)
    with closed_port() as port:
        model = OpenAIModel(
            "m", http=http, api_key=None, base_url=f"http://127.0.0.1:{port}/v1", retry=policy
        )
        with pytest.raises(ModelError) as caught:
            await model.complete(request())
    assert "openai: cannot reach" in str(caught.value)
    assert len(sleep.delays) == 2


async def test_error_event_in_anthropic_stream_is_a_model_error(
    stub: ModelStub, http: httpx2.AsyncClient
) -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    stub.enqueue(StubResponse(events=[sse(error, "error")]))
    with pytest.raises(ModelError, match="Overloaded"):
        await make("anthropic", stub, http).complete(request())


async def test_loopback_server_needs_no_key(stub: ModelStub, http: httpx2.AsyncClient) -> None:
    stub.enqueue(openai_stream(text="local"))
    model = OpenAIModel("llama", http=http, api_key=None, base_url=stub.openai_base)
    assert (await model.complete(request())).text == "local"
    assert "authorization" not in stub.requests[0].headers


@pytest.mark.parametrize(
    ("cls", "env_var"), [(OpenAIModel, "OPENAI_API_KEY"), (AnthropicModel, "ANTHROPIC_API_KEY")]
)
def test_missing_key_for_remote_server_names_the_env_var(cls: type, env_var: str) -> None:
    with pytest.raises(ModelError) as caught:
        cls("m", http=httpx2.AsyncClient(), api_key=None, base_url="https://api.example.com")
    assert env_var in str(caught.value) and "scripted:" in str(caught.value)
