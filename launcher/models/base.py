"""The Model protocol and the provider-neutral messages it speaks."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from launcher.toolset.types import ToolDef


@dataclass
class ToolCall:
    """One tool call the model asked for."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class Message:
    """One conversation message.

    `user` and `assistant` carry `content`; an assistant message may carry
    `tool_calls`; a `tool` message answers one call (`tool_call_id`, `name`,
    `content`, `is_error`).
    """

    role: Literal["user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False


@dataclass
class Usage:
    """A reply's tokens as billed: `input_tokens` counts every prompt token once, cached
    ones included (`cache_read_tokens` read from, `cache_write_tokens` written to a cache)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass
class ModelRequest:
    """One model turn: system prompt, history, and the tools offered this turn.

    `resolve_tool(server, tool)` maps a server's original tool name to its exposed
    name (used by the scripted model's `tool_from:`).
    """

    system: str
    messages: list[Message]
    tools: Sequence[ToolDef]
    on_text: Callable[[str], Awaitable[None]] | None = None
    resolve_tool: Callable[[str, str], str] | None = None


@dataclass
class ModelResponse:
    """The model's answer: text, tool calls (none = final answer) and usage."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    """Why the model stopped, as its provider says it (`stop`, `tool_calls`, `end_turn`...)."""


class Model(Protocol):
    """A model provider: one turn in, one response out; streams text via `on_text`."""

    spec: str

    async def complete(self, request: ModelRequest) -> ModelResponse: ...
