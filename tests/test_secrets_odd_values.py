"""Secrets that are not clean UTF-8 — an environment value with a byte that is not UTF-8, a
token response's lone `\\udXXX` escape — are masked like any other, and never stop masking."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import pytest

from launcher.event_mask import MaskedEvents
from launcher.events import ToolNames, TurnStart
from launcher.secrets import (
    MASK,
    LiveMask,
    SecretMask,
    StreamMask,
    forget_learned_secrets,
    note_secrets,
    process_secrets,
    secret_forms,
)

ESCAPED_BYTE = "abc\udcffdefghijk"
"""`X_TOKEN=abc<0xff>defghijk` as os.environ gives it (the byte surrogate-escaped)."""
LONE = "\udc80refresh-token-xyz"
"""A JSON `\\udc80` escape in a token response: valid JSON, no UTF-8."""
GOOD = "ya29_GoodAccessToken0123456789"


def test_a_value_with_a_byte_that_is_not_utf8_is_masked_in_text_and_bytes() -> None:
    assert ESCAPED_BYTE in process_secrets({"X_TOKEN": ESCAPED_BYTE})
    mask = SecretMask({ESCAPED_BYTE})  # raised UnicodeEncodeError before
    raw = b"abc\xffdefghijk"
    assert mask.text(f"token={ESCAPED_BYTE}.") == f"token={MASK}."
    assert mask.data(b"token=" + raw + b".") == f"token={MASK}.".encode()
    assert mask.text(f"b64 {base64.b64encode(raw).decode()}") == f"b64 {MASK}"
    assert mask.text(f"url {quote(raw)}") == f"url {MASK}"
    stream = StreamMask(mask, b"")
    out = stream.feed(b"x " + raw[:5]) + stream.feed(raw[5:] + b" y") + stream.flush()
    assert out == f"x {MASK} y".encode()


def test_every_form_of_a_lone_surrogate_can_be_made() -> None:
    forms = secret_forms(LONE)
    assert LONE in forms and json.dumps(LONE)[1:-1] in forms
    assert SecretMask({LONE}).text(f"[{LONE}]") == f"[{MASK}]"


def test_a_bad_learned_value_does_not_stop_the_mask_learning_the_good_one() -> None:
    forget_learned_secrets()
    try:
        mask = LiveMask({"sk-live-0123456789abcdef"})
        assert mask.text(GOOD) == GOOD  # not a secret yet: the mask is synced once
        note_secrets([GOOD, LONE])  # as a token response carrying both
        assert mask.text(f"token={GOOD}") == f"token={MASK}"
        assert mask.text(LONE) == MASK
        note_secrets(["OtherServerJwt-0123456789"])  # learned later: masked too
        assert mask.text("auth OtherServerJwt-0123456789") == f"auth {MASK}"
        assert LiveMask().text(GOOD) == MASK  # a new session's mask: made, and masking
        names = ToolNames(["srv__a", f"srv__{GOOD}"])
        (out,) = MaskedEvents(mask)(TurnStart(turn=1, tools=names))
        assert GOOD not in out.to_json()
    finally:
        forget_learned_secrets()


def test_a_mask_whose_rebuild_failed_rebuilds_next_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # Whatever made a rebuild fail, the mask must not go on as if it had the new values.
    import launcher.secrets as secrets_module

    forget_learned_secrets()
    real = secrets_module.secret_forms
    try:
        mask = LiveMask()
        assert not mask
        monkeypatch.setattr(secrets_module, "secret_forms", lambda value: 1 / 0)
        note_secrets([GOOD])
        with pytest.raises(ZeroDivisionError):
            mask.text(GOOD)
        monkeypatch.setattr(secrets_module, "secret_forms", real)
        assert mask.text(GOOD) == MASK
    finally:
        forget_learned_secrets()


def test_forms_a_decoder_shows_are_long_enough_and_spelt_as_json_too() -> None:
    value = "\udce2\udc82" * 4  # four cut 2-byte sequences: four U+FFFD
    assert all(len(form) >= 8 or form == value for form in secret_forms(value))
    assert SecretMask({value}).text("file: " + "\ufffd" * 6 + " end").endswith("\ufffd end")
    escaped = SecretMask({ESCAPED_BYTE})
    assert escaped.finds(json.dumps("abc\ufffddefghijk"))
    assert escaped.finds(json.dumps("abc\\xffdefghijk"))


def test_url_and_json_spellings_of_other_encoders_are_masked() -> None:
    value = "pa&ss<wo>rd!(x) y/z"
    mask = SecretMask({value})
    lower = quote(value, safe="").replace("%3C", "%3c").replace("%3E", "%3e").replace("%2F", "%2f")
    assert mask.finds(lower)
    assert mask.finds(quote(value, safe="!'()*"))  # encodeURIComponent
    go = json.dumps(value)[1:-1].replace("<", "\\u003c").replace(">", "\\u003e")
    assert mask.finds(go.replace("&", "\\u0026"))


def test_a_decoder_s_text_is_masked_url_encoded_and_other_json_writers_too() -> None:
    assert SecretMask({ESCAPED_BYTE}).finds(quote("abc\ufffddefghijk"))
    value = "a/b+c<d>e&f'gh"
    mask = SecretMask({value})
    assert mask.finds("a\\/b+c<d>e&f'gh")  # PHP
    assert mask.finds("a/b\\u002Bc\\u003Cd\\u003Ee\\u0026f\\u0027gh")  # .NET
