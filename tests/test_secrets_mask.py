"""The one masking function: every form of a secret, in text, bytes, events and streams."""

from __future__ import annotations

import base64
import json
import random
from urllib.parse import quote, quote_plus

from launcher.events import ToolResultEvent
from launcher.secrets import (
    MASK,
    LiveMask,
    SecretMask,
    StreamMask,
    forget_learned_secrets,
    note_secrets,
    public_environment,
    secret_forms,
)

SECRET = 'tok/9f3+a61 c2e7=b54d08&x"é'


def test_every_encoded_form_is_masked() -> None:
    mask = SecretMask([SECRET])
    raw = SECRET.encode()
    forms = [
        SECRET,
        quote(SECRET),
        quote(SECRET, safe=""),
        quote_plus(SECRET),
        json.dumps(SECRET)[1:-1],
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode(),
    ]
    for form in forms:
        assert mask.text(f"<{form}>") == f"<{MASK}>", form


def test_base64_of_a_value_inside_a_longer_string_is_masked_at_every_alignment() -> None:
    mask = SecretMask([SECRET])
    for before in (b"", b"a", b"ab", b"abc", b"abcd"):
        for after in (b"", b"Q", b"QQ", b"QQQ"):
            for encode in (base64.b64encode, base64.urlsafe_b64encode):
                text = encode(before + SECRET.encode() + after).decode()
                masked = mask.text(text)
                assert MASK in masked, (before, after)
                assert len(masked) < len(text) - 20  # most of the value's characters went


def test_a_secret_split_across_stream_chunks_is_still_masked() -> None:
    mask = SecretMask([SECRET])
    data = (f"line {SECRET} {quote(SECRET)}\n" * 20).encode()
    rng = random.Random(7)
    for _ in range(50):
        stream, out, pos = StreamMask(mask, b""), b"", 0
        while pos < len(data):
            step = rng.randint(1, 9)
            out += stream.feed(data[pos : pos + step])
            pos += step
        out += stream.flush()
        assert SECRET.encode() not in out and quote(SECRET).encode() not in out
        assert out.count(MASK.encode()) == 40


def test_events_and_nested_values_are_masked_in_a_copy() -> None:
    mask = SecretMask([SECRET])
    event = ToolResultEvent(turn=1, id="c", name="t", is_error=False, content=f"x {SECRET}")
    masked = mask.event(event)
    assert masked.content == f"x {MASK}" and event.content == f"x {SECRET}"
    assert mask.value({"a": [SECRET, 1], SECRET: None}) == {"a": [MASK, 1], MASK: None}


def test_short_base64_fragments_are_not_masked() -> None:
    assert all(len(f) >= 3 for f in secret_forms("abc"))
    assert SecretMask(["abc"], min_chars=1).text("xyz YWJj abc") == f"xyz {MASK} {MASK}"
    assert SecretMask([]).text("abc") == "abc"


def test_public_environment_drops_credential_names() -> None:
    env = {"PATH": "/bin", "OPENAI_API_KEY": "k", "GITHUB_TOKEN": "t", "EDITOR": "vi"}
    assert public_environment(env) == {"PATH": "/bin", "EDITOR": "vi"}


def test_a_learned_value_too_short_to_be_a_credential_masks_nothing() -> None:
    # A one-letter "token" (a fake in a test) once masked every `a` in later text, and
    # broke tests that ran after it.
    note_secrets(["a", "learned-credential-1"])
    mask = LiveMask(set())
    assert mask.text("a learned-credential-1 banana") == "a **** banana"


def test_a_live_mask_made_with_no_secret_masks_a_later_token_in_events() -> None:
    # A session with no secret at its start, then an OAuth token learned mid-run: its
    # events must not carry the token (event() returned early while the mask was empty).
    forget_learned_secrets()
    mask = LiveMask(())
    note_secrets(["tok-0123456789abcdef"])
    try:
        event = ToolResultEvent(
            turn=1, id="c1", name="n", is_error=False, content="got tok-0123456789abcdef"
        )
        assert mask.event(event).content == "got ****"
        assert mask.value({"k": ("tok-0123456789abcdef",)}) == {"k": ("****",)}
    finally:
        forget_learned_secrets()
