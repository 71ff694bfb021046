"""Opt-in content: messages, tool arguments and results as the GenAI conventions shape them.

Only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, and always through the
session's secret mask before serialising (a secret JSON would escape is still found). The
shapes follow the conventions' input/output message schemas, recorded as JSON strings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from launcher.secrets import SecretMask
from launcher.telemetry.names import CAPTURE_CONTENT

MASK: ContextVar[SecretMask | None] = ContextVar("subagent_trace_mask", default=None)
"""The mask of the session being traced (set by its `invoke_agent` span)."""


def capture_wanted(env: Mapping[str, str]) -> bool:
    """Whether `env` opts in to content in spans."""
    return env.get(CAPTURE_CONTENT, "").strip().lower() == "true"


def masked(value: Any) -> Any:
    """`value` with every known secret of the current session (and process) masked."""
    mask = MASK.get()
    return mask.value(value) if mask is not None else value


def masked_text(text: str) -> str:
    """`text` masked: what error descriptions pass through, content or not."""
    mask = MASK.get()
    return mask.text(text) if mask is not None else text


def as_json(value: Any) -> str:
    """`value` masked, then as compact JSON (non-JSON leaves become strings)."""
    return json.dumps(masked(value), ensure_ascii=False, default=str, separators=(",", ":"))


def _said(text: str, calls: list[Any]) -> list[dict[str, Any]]:
    """An assistant's (or a user's) parts: its text, then its tool calls."""
    parts: list[dict[str, Any]] = [{"type": "text", "content": text}] if text else []
    parts.extend(
        {"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments} for c in calls
    )
    return parts


def _parts(message: Any) -> list[dict[str, Any]]:
    if message.role == "tool":
        response = {"type": "tool_call_response", "id": message.tool_call_id}
        return [{**response, "result": message.content}]
    return _said(message.content, message.tool_calls)


def input_messages(messages: list[Any]) -> str:
    """The conversation sent to the model (`gen_ai.input.messages`)."""
    return as_json([{"role": m.role, "parts": _parts(m)} for m in messages])


def system_instructions(system: str) -> str:
    """The system prompt (`gen_ai.system_instructions`)."""
    return as_json([{"type": "text", "content": system}] if system else [])


def output_messages(response: Any, finish_reason: str) -> str:
    """The model's answer (`gen_ai.output.messages`): one assistant message."""
    parts = _said(response.text, response.tool_calls)
    return as_json([{"role": "assistant", "parts": parts, "finish_reason": finish_reason}])
