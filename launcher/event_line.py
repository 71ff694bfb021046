"""An event's JSON line: `json.dumps(value, ensure_ascii=False, default=str)`, made faster.

Every event is written as one line (events.jsonl, `--json`, serve's pipe) and the secret
mask searches that line, so its encoding is on every tool call's path twice.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable
from typing import Any


def _line_encoder() -> Callable[[Any], str]:
    # json.dumps builds an encoder and its C scanner anew for every call; one scanner made
    # once writes the same text (no circular check: an event's values are plain JSON data).
    scanner = getattr(json.encoder, "c_make_encoder", None)
    if scanner is None:  # a Python without the C accelerator
        return json.JSONEncoder(ensure_ascii=False, default=str).encode
    make = scanner(None, str, json.encoder.encode_basestring, None, ": ", ", ", False, False, True)
    return lambda value: "".join(make(value, 0))


encode = _line_encoder()
"""A value's JSON text, as `json.dumps(value, ensure_ascii=False, default=str)` writes it."""
_string = json.encoder.encode_basestring  # how `encode` writes a str (C)


def field_text(value: Any) -> str:
    """`encode(value)`; a str, an int or a finite float (what a tool call's events mostly
    hold) written directly, without the encoder's machinery."""
    kind = type(value)
    if kind is str:
        return _string(value)
    if kind is int or (kind is float and value - value == 0.0):  # NaN and inf: the encoder's
        return repr(value)
    return encode(value)
