"""Every span masked on its way out: its name and string values, whoever made the span.

The MCP SDK's client spans nest under ours (our provider is the process's global one) and
are named after the tool they call (`MCP send tools/call NAME`); a server may name a tool
after a secret its config hands it. So the provider's processor masks each span as it ends,
with the mask of the session it ended in (else the process's own), before any exporter
sees it. A span with nothing to mask is handed on as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import Event, ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import Link, Status

import launcher.telemetry.names as n
from launcher.secrets import SecretMask
from launcher.telemetry.content import MASK

PREMASKED = frozenset(
    {n.SYSTEM_INSTRUCTIONS, n.INPUT_MESSAGES, n.OUTPUT_MESSAGES, n.TOOL_ARGUMENTS, n.TOOL_RESULT}
)
"""Our own spans' content attributes, masked with the same mask as they are set (content.py):
the largest texts of a span, not searched a second time."""


def _holds(value: Any, mask: SecretMask) -> bool:
    # Attribute values are scalars or flat sequences of them (the OTel API's rule).
    if isinstance(value, str):
        return mask.finds(value)
    if isinstance(value, (list, tuple)):
        return any(isinstance(item, str) and mask.finds(item) for item in value)
    return False


def _any_held(
    attributes: Mapping[str, Any] | None, mask: SecretMask, skip: frozenset[str] = frozenset()
) -> bool:
    return bool(attributes) and any(
        mask.finds(key) or (key not in skip and _holds(value, mask))
        for key, value in (attributes or {}).items()
    )


def _masked(attributes: Mapping[str, Any] | None, mask: SecretMask) -> dict[str, Any] | None:
    return None if attributes is None else mask.value(dict(attributes))


def needs_mask(span: ReadableSpan, mask: SecretMask) -> bool:
    """Whether any name, attribute, event, link or status text of `span` holds a secret."""
    scope = span.instrumentation_scope
    ours = scope is not None and scope.name == n.INSTRUMENTATION
    return (
        mask.finds(span.name)
        or _any_held(span.attributes, mask, PREMASKED if ours else frozenset())
        or any(mask.finds(e.name) or _any_held(e.attributes, mask) for e in span.events)
        or any(_any_held(link.attributes, mask) for link in span.links)
        or mask.finds(span.status.description or "")
    )


def masked_span(span: ReadableSpan, mask: SecretMask | None) -> ReadableSpan:
    """`span`, or a copy of it with every secret in its texts masked."""
    if mask is None or not needs_mask(span, mask):
        return span
    status = span.status
    if status.description:
        status = Status(status.status_code, mask.text(status.description))
    return ReadableSpan(
        name=mask.text(span.name),
        context=span.get_span_context(),
        parent=span.parent,
        resource=span.resource,
        attributes=_masked(span.attributes, mask),
        events=[
            Event(mask.text(e.name), _masked(e.attributes, mask), e.timestamp) for e in span.events
        ],
        links=[Link(link.context, _masked(link.attributes, mask)) for link in span.links],
        kind=span.kind,
        status=status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


class MaskingProcessor(SpanProcessor):
    """Hands each ended span, masked, to `inner` (the exporting processor).

    The mask is the one of the session the span ends in (its `invoke_agent` span sets it);
    a span ending outside any session is masked with `fallback`, the process's secrets.
    """

    def __init__(self, inner: SpanProcessor, fallback: SecretMask) -> None:
        self.inner = inner
        self.fallback = fallback

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.inner.on_start(span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        self.inner.on_end(masked_span(span, MASK.get() or self.fallback))

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)
