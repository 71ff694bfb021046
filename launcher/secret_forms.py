"""Every form a secret is masked in: raw, URL-encoded (as Python and JavaScript write it,
either case of hex), JSON-escaped (as Python and Go write it), base64 (standard and URL-safe,
also inside a longer base64 string at any of the three byte alignments), and, for bytes
that are not UTF-8, as a decoder shows them. A leaf: launcher/secrets.py masks with them.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from urllib.parse import quote, quote_plus

MIN_FORM_CHARS = 8
"""A derived form (base64 inside a longer string) shorter than this is not masked: four
base64 characters match unrelated text too often."""


def _b64_cores(raw: bytes, encode: Callable[[bytes], bytes]) -> set[str]:
    """The base64 characters fixed by `raw` alone, at each of the three byte alignments."""
    cores = set()
    for pad in range(3):
        text = encode(b"\0" * pad + raw).decode()
        total_bits = 8 * (pad + len(raw))
        first = -(-8 * pad // 6)  # the first character with no bit from the bytes before
        last = total_bits // 6  # characters after this one mix in the bytes that follow
        core = text[first:last]
        if len(core) >= MIN_FORM_CHARS:
            cores.add(core)
    return cores


def secret_bytes(value: str) -> bytes:
    """`value` as bytes: UTF-8, where a byte that was not UTF-8 (an environment value's
    surrogate escape) is that byte again, and any other lone surrogate (a JSON `\\udXXX`
    escape in a token response) is spelt as UTF-8 would spell it; never an error."""
    try:
        return value.encode()
    except UnicodeEncodeError:
        try:
            return value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogatepass")


URI_COMPONENT = "!'()*"
"""What JavaScript's encodeURIComponent leaves as it is, beyond what quote() does."""
_LOWER_HEX = re.compile(r"%[0-9A-F]{2}")
_GO_JSON = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})
"""Go's encoding/json escapes these three (HTML-safe) where Python's leaves them."""
_NET_JSON = str.maketrans({c: f"\\u{ord(c):04X}" for c in "<>&'+"})
""".NET's System.Text.Json escapes these, in upper-case hex."""


def _url_forms(raw: bytes) -> set[str]:
    # As Python's quote and quote_plus and JavaScript's encodeURIComponent write it, in
    # either case of hex.
    urls = {quote(raw), quote(raw, safe=""), quote_plus(raw), quote(raw, safe=URI_COMPONENT)}
    return urls | {_LOWER_HEX.sub(lambda m: m[0].lower(), url) for url in urls}


def _json_forms(value: str) -> set[str]:
    # As Python writes a JSON string, both ways, and as Go's, .NET's and PHP's (`\/`) do.
    forms = {json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    more = {f.translate(table) for f in forms for table in (_GO_JSON, _NET_JSON)}
    return forms | more | {f.replace("/", "\\/") for f in forms | more}


def secret_forms(value: str) -> set[str]:
    """Every form of `value` that is masked: raw, URL-encoded, JSON-escaped, base64."""
    raw = secret_bytes(value)
    forms = {value, *_url_forms(raw), *_json_forms(value)}
    # Bytes that are not UTF-8 reach text as a decoder left them (a command's output).
    for decoded in (raw.decode("utf-8", "replace"), raw.decode("utf-8", "backslashreplace")):
        if decoded != value and len(decoded) >= MIN_FORM_CHARS:
            forms |= {decoded, *_json_forms(decoded), *_url_forms(decoded.encode())}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        forms.add(encode(raw).decode())
        forms |= _b64_cores(raw, encode)
    return {form for form in forms if form}
