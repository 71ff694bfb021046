"""OTLP's ExportTraceServiceRequest in protobuf wire format, written by hand (stdlib only).

The OTLP exporter package and its protobuf runtime cost a process that traces about a
tenth of a second of imports; the message is small, so it is written here directly, field
for field as the SDK's own encoder builds it (tests/test_telemetry_otlp_wire.py decodes
both with `opentelemetry-proto` and holds them equal). Spans are the SDK's ReadableSpans,
read by attribute: nothing of OpenTelemetry is imported here.
"""

from __future__ import annotations

import functools
import logging
import struct
from collections.abc import Mapping, Sequence
from typing import Any

_logger = logging.getLogger(__name__)

# Wire types.
_VARINT = 0
_I64 = 1
_LEN = 2
_I32 = 5

# Span.flags: whether the parent's remoteness is known (always, here), and is it remote.
FLAG_HAS_IS_REMOTE = 0x100
FLAG_IS_REMOTE = 0x200

_pack_double = struct.Struct("<d").pack
_pack_fixed64 = struct.Struct("<Q").pack
_pack_fixed32 = struct.Struct("<I").pack


def _varint(value: int) -> bytes:
    """Base-128 varint; a negative int64 as its 64-bit two's complement (ten bytes)."""
    if value < 0:
        value += 1 << 64
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _tag(field: int, wire: int) -> bytes:
    return _varint((field << 3) | wire)


def _len_field(field: int, payload: bytes) -> bytes:
    """A length-delimited field (string, bytes, message), written even when empty."""
    return _tag(field, _LEN) + _varint(len(payload)) + payload


def _string(field: int, value: str | None) -> bytes:
    """A proto3 string: nothing for the default (None or empty)."""
    return _len_field(field, value.encode("utf-8")) if value else b""


def _uint(field: int, value: int | None) -> bytes:
    """A proto3 varint scalar: nothing for the default (zero)."""
    return _tag(field, _VARINT) + _varint(value) if value else b""


def _fixed64(field: int, value: int | None) -> bytes:
    return _tag(field, _I64) + _pack_fixed64(value) if value else b""


def _fixed32(field: int, value: int) -> bytes:
    return _tag(field, _I32) + _pack_fixed32(value) if value else b""


# Field tags, precomputed: (field << 3) | wire type.
_ANY_STRING = _tag(1, _LEN)
_ANY_BOOL = _tag(2, _VARINT)
_ANY_INT = _tag(3, _VARINT)
_ANY_DOUBLE = _tag(4, _I64)
_KV_VALUE = _tag(2, _LEN)
_SPAN_TRACE_ID = _tag(1, _LEN) + b"\x10"  # and its length: 16 bytes
_SPAN_ID = _tag(2, _LEN) + b"\x08"  # 8 bytes
_SPAN_PARENT_ID = _tag(4, _LEN) + b"\x08"
_SPAN_KIND = _tag(6, _VARINT)
_SPAN_START = _tag(7, _I64)
_SPAN_END = _tag(8, _I64)
_SPAN_EVENT = _tag(11, _LEN)
_SPAN_LINK = _tag(13, _LEN)
_SPAN_STATUS = _tag(15, _LEN)
_SPAN_FLAGS = _tag(16, _I32)
_FALSE, _TRUE = _ANY_BOOL + b"\x00", _ANY_BOOL + b"\x01"


@functools.lru_cache(maxsize=4096)
def _key(key: str) -> bytes:
    """An attribute key as its KeyValue.key field: a batch repeats the same few keys."""
    return _string(1, key)


def _any_value(value: Any) -> bytes:
    """An AnyValue, in the SDK encoder's order of type tests (bool before int)."""
    kind = type(value)  # the common exact types first; subclasses take the tests below
    if kind is str:
        raw: bytes = value.encode("utf-8")
        size = len(raw)
        return _ANY_STRING + (bytes((size,)) if size < 0x80 else _varint(size)) + raw
    if kind is bool:
        return _TRUE if value else _FALSE
    if value is None:
        return b""
    if isinstance(value, bool):
        return _TRUE if value else _FALSE
    if isinstance(value, str):
        raw = value.encode("utf-8")
        return _ANY_STRING + _varint(len(raw)) + raw
    if isinstance(value, int):
        return _ANY_INT + _varint(value)
    if isinstance(value, float):
        return _ANY_DOUBLE + _pack_double(value)
    if isinstance(value, bytes):
        return _len_field(7, value)
    if isinstance(value, Sequence):
        return _len_field(5, b"".join(_len_field(1, _any_value(v)) for v in value))
    if isinstance(value, Mapping):
        pairs = b"".join(_len_field(1, _key_value(str(k), v)) for k, v in value.items())
        return _len_field(6, pairs)
    raise TypeError(f"Invalid type {type(value)} of value {value}")


def _key_value(key: str, value: Any) -> bytes:
    encoded = _any_value(value)
    size = len(encoded)
    return _key(key) + _KV_VALUE + (bytes((size,)) if size < 0x80 else _varint(size)) + encoded


def _attributes(field: int, attributes: Mapping[str, Any] | None) -> bytes:
    """Repeated KeyValue; one that cannot be encoded is logged and left out (as the SDK)."""
    if not attributes:
        return b""
    tag = _tag(field, _LEN)
    out = []
    for key, value in attributes.items():
        try:
            pair = _key_value(key, value)
        except Exception as error:
            _logger.exception("Failed to encode key %s: %s", key, error)
            continue
        size = len(pair)
        out.append(tag + (bytes((size,)) if size < 0x80 else _varint(size)) + pair)
    return b"".join(out)


def _flags(context: Any) -> int:
    return FLAG_HAS_IS_REMOTE | (FLAG_IS_REMOTE if context and context.is_remote else 0)


def _event(event: Any) -> bytes:
    return (
        _fixed64(1, event.timestamp)
        + _string(2, event.name)
        + _attributes(3, event.attributes)
        + _uint(4, event.dropped_attributes)
    )


def _link(link: Any) -> bytes:
    context = link.context
    return (
        _len_field(1, context.trace_id.to_bytes(16, "big"))
        + _len_field(2, context.span_id.to_bytes(8, "big"))
        + _attributes(4, link.attributes)
        + _uint(5, link.dropped_attributes)
        + _fixed32(6, _flags(context))
    )


def _status(status: Any) -> bytes:
    return _string(2, status.description) + _uint(3, status.status_code.value)


def _span(span: Any) -> bytes:
    context = span.get_span_context()
    parent = span.parent
    trace_state = context.trace_state
    out = [
        _SPAN_TRACE_ID + context.trace_id.to_bytes(16, "big"),
        _SPAN_ID + context.span_id.to_bytes(8, "big"),
    ]
    if trace_state:  # an empty one is the proto3 default: nothing, as for None
        out.append(_string(3, ",".join(f"{k}={v}" for k, v in trace_state.items())))
    if parent:
        out.append(_SPAN_PARENT_ID + parent.span_id.to_bytes(8, "big"))
    out.append(_string(5, span.name))
    # SpanKind INTERNAL..CONSUMER are 0..4 in the API, 1..5 on the wire (0 is unspecified).
    out.append(_SPAN_KIND + bytes((span.kind.value + 1,)))
    if start := span.start_time:
        out.append(_SPAN_START + _pack_fixed64(start))
    if end := span.end_time:
        out.append(_SPAN_END + _pack_fixed64(end))
    out.append(_attributes(9, span.attributes))
    if dropped := span.dropped_attributes:
        out.append(_uint(10, dropped))
    for event in span.events:
        out.append(_len_field(11, _event(event)))
    if dropped := span.dropped_events:
        out.append(_uint(12, dropped))
    for link in span.links:
        out.append(_len_field(13, _link(link)))
    if dropped := span.dropped_links:
        out.append(_uint(14, dropped))
    if span.status is not None:
        out.append(_len_field(15, _status(span.status)))
    out.append(_SPAN_FLAGS + _pack_fixed32(_flags(parent)))
    return b"".join(out)


def _scope(scope: Any) -> bytes:
    if scope is None:
        return b""
    return _string(1, scope.name) + _string(2, scope.version) + _attributes(3, scope.attributes)


def encode_spans(spans: Sequence[Any]) -> bytes:
    """An ExportTraceServiceRequest carrying `spans`, grouped by resource, then by scope."""
    grouped: dict[Any, dict[Any, list[bytes]]] = {}
    # A Resource hashes by dumping its attributes to JSON: look each pair of objects up by
    # identity first, by equality (as the SDK's encoder groups) once per pair.
    by_identity: dict[tuple[int, int], list[bytes]] = {}
    for span in spans:
        resource, scope = span.resource, span.instrumentation_scope or None
        encoded = by_identity.get((id(resource), id(scope)))
        if encoded is None:
            encoded = grouped.setdefault(resource, {}).setdefault(scope, [])
            by_identity[(id(resource), id(scope))] = encoded
        encoded.append(_span(span))
    out = []
    for resource, scopes in grouped.items():
        scope_spans = []
        for scope, encoded in scopes.items():
            body = (
                _len_field(1, _scope(scope))
                + b"".join(_len_field(2, span) for span in encoded)
                + _string(3, scope.schema_url if scope else None)
            )
            scope_spans.append(_len_field(2, body))
        body = (
            _len_field(1, _attributes(1, resource.attributes))
            + b"".join(scope_spans)
            + _string(3, resource.schema_url)
        )
        out.append(_len_field(1, body))
    return b"".join(out)
