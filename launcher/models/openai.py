"""`openai:MODEL`: the Chat Completions API, streamed (OpenAI, Ollama, llama.cpp, vLLM...).

Our own client, not the `openai` SDK, for measured reasons (bench/model_clients.py, 2 cores
under load): a process importing it takes 0.26x the SDK's import time (0.44 s vs 1.97 s), it
adds 15 modules beside the MCP SDK where the SDK adds 521 (its pydantic models), and reading
a streamed reply of 500 chunks costs 0.10x the SDK's CPU (5 ms vs 52 ms). Both would share the
MCP SDK's httpx2, so the HTTP stack is one either way. What we keep ourselves instead: the wire
shapes below, retries (models/retry.py) and SSE parsing (models/sse.py), each tested against a
loopback stub of the provider's streaming format.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2

from launcher.errors import ModelError
from launcher.models.base import Message, ModelRequest, ModelResponse, ToolCall, Usage
from launcher.models.http_model import HttpModel
from launcher.models.sse import decode_object, iter_sse
from launcher.toolset.types import ToolDef

DEFAULT_BASE_URL = "https://api.openai.com/v1"
API_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
PROVIDER = "openai"


def tools_to_wire(tools: Sequence[ToolDef]) -> list[dict[str, Any]]:
    """Our tool definitions as Chat Completions `function` tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
            },
        }
        for tool in tools
    ]


def messages_to_wire(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    """Our conversation as Chat Completions messages, system prompt first."""
    wire: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role == "tool":
            wire.append(
                {
                    "role": "tool",
                    "tool_call_id": message.tool_call_id,
                    "content": message.content,
                }
            )
        elif message.role == "assistant" and message.tool_calls:
            wire.append(
                {
                    "role": "assistant",
                    "content": message.content or None,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": json.dumps(call.arguments),
                            },
                        }
                        for call in message.tool_calls
                    ],
                }
            )
        else:
            wire.append({"role": message.role, "content": message.content})
    return wire


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class OpenAIModel(HttpModel):
    """A Chat Completions model reached over an injected `httpx2.AsyncClient`."""

    provider = PROVIDER
    key_env = API_KEY_ENV
    default_base_url = DEFAULT_BASE_URL

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Stream one turn; text deltas go to `request.on_text` as they arrive."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages_to_wire(request.system, request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = self._tools_wire(request.tools, tools_to_wire)
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"

        async def handle(response: httpx2.Response) -> ModelResponse:
            return await _read_stream(response, request)

        return await self._post("/chat/completions", headers=headers, body=body, handle=handle)


async def _read_stream(response: httpx2.Response, request: ModelRequest) -> ModelResponse:
    text: list[str] = []
    calls: dict[int, _PartialCall] = {}
    usage = Usage()
    finish: str | None = None
    async for event in iter_sse(response.aiter_lines()):
        if event.data.strip() == "[DONE]":
            break
        chunk = _decode(event.data)
        if isinstance(chunk.get("error"), dict):
            message = chunk["error"].get("message", event.data)
            raise ModelError(f"{PROVIDER}: error in stream: {message}")
        if isinstance(chunk.get("usage"), dict):
            usage = _usage(chunk["usage"])
        for choice in chunk.get("choices") or []:
            finish = choice.get("finish_reason") or finish
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if content:
                text.append(content)
                if request.on_text is not None:
                    await request.on_text(content)
            for part in delta.get("tool_calls") or []:
                # Later fragments of a call carry only its index; some servers omit it
                # when they send each call whole, so fall back to the call count.
                partial = calls.setdefault(part.get("index", len(calls)), _PartialCall())
                function = part.get("function") or {}
                partial.id = part.get("id") or partial.id
                partial.name += function.get("name") or ""
                partial.arguments.append(function.get("arguments") or "")
    tool_calls = [_finish(index, calls[index]) for index in sorted(calls)]
    return ModelResponse(
        text="".join(text), tool_calls=tool_calls, usage=usage, finish_reason=finish
    )


def _usage(raw: dict[str, Any]) -> Usage:
    # prompt_tokens already counts the cached ones; their share is in the details.
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(
        input_tokens=int(raw.get("prompt_tokens") or 0),
        output_tokens=int(raw.get("completion_tokens") or 0),
        cache_read_tokens=int(cached or 0),
    )


def _finish(index: int, partial: _PartialCall) -> ToolCall:
    raw = "".join(partial.arguments).strip()
    arguments = (
        decode_object(PROVIDER, raw, f"arguments of tool call '{partial.name}'") if raw else {}
    )
    return ToolCall(id=partial.id or f"call_{index}", name=partial.name, arguments=arguments)


def _decode(data: str) -> dict[str, Any]:
    return decode_object(PROVIDER, data, "stream chunk")
