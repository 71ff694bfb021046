"""`anthropic:MODEL`: the Anthropic Messages API, streamed.

Our own client rather than the `anthropic` SDK for the reasons models/openai.py gives, here
larger (bench/model_clients.py): 0.08x the SDK's import time (0.70 s vs 8.0 s on 2 loaded
cores) and 15 modules added beside the MCP SDK against 3 314.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2

from launcher.errors import ModelError
from launcher.models.base import Message, ModelRequest, ModelResponse, ToolCall, Usage
from launcher.models.http_model import HttpModel
from launcher.models.sse import decode_object, iter_sse
from launcher.toolset.types import ToolDef

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
PROVIDER = "anthropic"


def tools_to_wire(tools: Sequence[ToolDef]) -> list[dict[str, Any]]:
    """Our tool definitions as Messages API tools."""
    return [
        {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
        for tool in tools
    ]


def messages_to_wire(messages: list[Message]) -> list[dict[str, Any]]:
    """Our conversation as Messages API turns.

    Tool results become `tool_result` blocks of a user turn; consecutive turns of one
    role merge, because the API requires user and assistant turns to alternate.
    """
    wire: list[dict[str, Any]] = []
    for message in messages:
        role, blocks = _blocks(message)
        if not blocks:
            continue
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    return wire


def _blocks(message: Message) -> tuple[str, list[dict[str, Any]]]:
    if message.role == "tool":
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id,
            "content": message.content,
        }
        if message.is_error:
            result["is_error"] = True
        return "user", [result]
    # The API rejects empty text blocks; an empty user turn still needs one block.
    text = [{"type": "text", "text": message.content}] if message.content else []
    if message.role == "user":
        return "user", text or [{"type": "text", "text": "(empty)"}]
    uses = [
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        for call in message.tool_calls
    ]
    return "assistant", text + uses


@dataclass
class _Block:
    type: str
    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    initial_input: dict[str, Any] = field(default_factory=dict)


class AnthropicModel(HttpModel):
    """A Messages API model reached over an injected `httpx2.AsyncClient`."""

    provider = PROVIDER
    key_env = API_KEY_ENV
    default_base_url = DEFAULT_BASE_URL

    def __init__(self, model: str, *, max_tokens: int = DEFAULT_MAX_TOKENS, **options: Any) -> None:
        super().__init__(model, **options)
        self.max_tokens = max_tokens

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Stream one turn; text deltas go to `request.on_text` as they arrive."""
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": messages_to_wire(request.messages),
            "stream": True,
        }
        if request.system:
            body["system"] = request.system
        if request.tools:
            body["tools"] = self._tools_wire(request.tools, tools_to_wire)
        headers = {
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
            "anthropic-version": API_VERSION,
        }
        if self._api_key:
            headers["x-api-key"] = self._api_key

        async def handle(response: httpx2.Response) -> ModelResponse:
            return await _read_stream(response, request)

        return await self._post("/v1/messages", headers=headers, body=body, handle=handle)


async def _read_stream(response: httpx2.Response, request: ModelRequest) -> ModelResponse:
    blocks: dict[int, _Block] = {}
    usage = Usage()
    stop_reason: str | None = None
    async for event in iter_sse(response.aiter_lines()):
        data = _decode(event.data)
        kind = data.get("type", event.event)
        if kind == "message_start":
            usage = _usage(data.get("message", {}).get("usage"), usage)
        elif kind == "content_block_start":
            start = data.get("content_block") or {}
            block = _Block(type=start.get("type", ""), id=start.get("id", ""))
            block.name = start.get("name", "")
            if isinstance(start.get("input"), dict):
                block.initial_input = start["input"]
            if block.type == "text" and start.get("text"):
                block.parts.append(start["text"])
            blocks[int(data.get("index", len(blocks)))] = block
        elif kind == "content_block_delta":
            await _apply_delta(blocks, data, request)
        elif kind == "message_delta":
            usage = _usage(data.get("usage"), usage)
            stop_reason = (data.get("delta") or {}).get("stop_reason") or stop_reason
        elif kind == "error":
            error = data.get("error") or {}
            message = error.get("message") or event.data
            raise ModelError(f"{PROVIDER}: error in stream: {error.get('type', '')} {message}")
        elif kind == "message_stop":
            break
    answer = _response(blocks, usage)
    answer.finish_reason = stop_reason
    return answer


async def _apply_delta(
    blocks: dict[int, _Block], data: dict[str, Any], request: ModelRequest
) -> None:
    delta = data.get("delta") or {}
    block = blocks.setdefault(int(data.get("index", 0)), _Block(type="text"))
    if delta.get("type") == "text_delta":
        text = delta.get("text", "")
        block.parts.append(text)
        if text and request.on_text is not None:
            await request.on_text(text)
    elif delta.get("type") == "input_json_delta":
        block.parts.append(delta.get("partial_json", ""))


def _usage(raw: Any, previous: Usage) -> Usage:
    # message_start carries input tokens, message_delta the running output count;
    # a field absent from an event keeps its earlier value.
    if not isinstance(raw, dict):
        return previous
    input_tokens = previous.input_tokens
    read, written = previous.cache_read_tokens, previous.cache_write_tokens
    if raw.get("input_tokens") is not None:
        written = int(raw.get("cache_creation_input_tokens") or 0)
        read = int(raw.get("cache_read_input_tokens") or 0)
        input_tokens = int(raw["input_tokens"]) + written + read
    output_tokens = previous.output_tokens
    if raw.get("output_tokens") is not None:
        output_tokens = int(raw["output_tokens"])
    return Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=read,
        cache_write_tokens=written,
    )


def _response(blocks: dict[int, _Block], usage: Usage) -> ModelResponse:
    text: list[str] = []
    calls: list[ToolCall] = []
    for index in sorted(blocks):
        block = blocks[index]
        if block.type == "text":
            text.append("".join(block.parts))
        elif block.type == "tool_use":
            calls.append(ToolCall(id=block.id, name=block.name, arguments=_input(block)))
    return ModelResponse(text="".join(text), tool_calls=calls, usage=usage)


def _input(block: _Block) -> dict[str, Any]:
    raw = "".join(block.parts).strip()
    if not raw:
        # Some proxies send the whole input in content_block_start and no deltas.
        return block.initial_input
    return decode_object(PROVIDER, raw, f"input of tool call '{block.name}'")


def _decode(data: str) -> dict[str, Any]:
    return decode_object(PROVIDER, data, "stream event")
