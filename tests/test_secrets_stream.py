"""Streamed text is masked as a whole: a secret split across chunks or deltas never shows.

The stream masker's output for any split of any text equals masking the whole text at once
(hypothesis: any text around the secrets, any cut points, overlapping secrets), and a
session's text deltas go through it, the held-back tail released before the next event.
"""

from __future__ import annotations

import itertools

from hypothesis import example, given, settings
from hypothesis import strategies as st

from launcher.event_mask import MaskedEvents
from launcher.events import (
    AgentEnd,
    AssistantMessage,
    RunStatus,
    TextDelta,
    ToolResultEvent,
)
from launcher.secrets import MASK, LiveMask, SecretMask, StreamMask, note_secrets

KEY = "sk-live-0123456789abcdef"

# Secrets and filler drawn from a few letters, so that secrets overlap, nest and repeat.
_letters = st.text(alphabet="abcXY-", min_size=0, max_size=40)
_secrets = st.lists(st.text(alphabet="abcXY-", min_size=8, max_size=14), min_size=1, max_size=3)


def _stream(mask: SecretMask, pieces: list[str]) -> str:
    stream = StreamMask(mask, "")
    return "".join(stream.feed(piece) for piece in pieces) + stream.flush()


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(max(c, 0), len(text)) for c in cuts})
    edges = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(edges)]


def test_the_issue_s_two_chunks_are_masked() -> None:
    mask = SecretMask({KEY})
    assert _stream(mask, ["key is sk-live-01234", "56789abcdef"]) == f"key is {MASK}"


def test_a_longer_secret_starting_inside_a_shorter_one_is_masked_whole() -> None:
    # The old stream masker masked `password1` at the chunk's end and let `2345` through.
    mask = SecretMask({"password1", "password12345"})
    assert _stream(mask, ["my password1", "2345 ok"]) == f"my {MASK} ok"
    data = StreamMask(mask, b"")
    out = data.feed(b"my password1") + data.feed(b"2345 ok") + data.flush()
    assert out == f"my {MASK} ok".encode()


@settings(max_examples=300, deadline=None)
@given(
    secrets=_secrets,
    filler=st.lists(_letters, min_size=1, max_size=5),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=12),
)
@example(secrets=["abcabcab", "abcabcabXY"], filler=["a", "Y"], cuts=[9, 10])
def test_any_split_masks_like_the_whole_text(
    secrets: list[str], filler: list[str], cuts: list[int]
) -> None:
    text = "".join(f"{piece}{secrets[i % len(secrets)]}" for i, piece in enumerate(filler))
    mask = SecretMask(secrets)
    out = _stream(mask, _split(text, cuts))
    assert out == mask.text(text)
    assert not any(secret in out for secret in secrets)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=60), cuts=st.lists(st.integers(0, 80), max_size=8))
def test_text_without_secrets_passes_unchanged_whatever_the_split(
    text: str, cuts: list[int]
) -> None:
    assert _stream(SecretMask({KEY}), _split(text, cuts)) == text


def test_a_value_learned_mid_stream_is_masked_by_a_live_mask() -> None:
    mask = LiveMask({KEY})
    stream = StreamMask(mask, "")
    out = stream.feed("first ")
    note_secrets({"learned-token-xyz"})
    out += stream.feed("learned-tok") + stream.feed("en-xyz and sk-live-0") + stream.feed("123")
    out += stream.feed("456789abcdef.") + stream.flush()
    assert out == f"first {MASK} and {MASK}."


def _deltas(events: list[object]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def test_session_deltas_hold_back_a_possible_secret_and_release_it_masked() -> None:
    masked = MaskedEvents(SecretMask({KEY}))
    out: list[object] = []
    for piece in ("key is sk-live-01234", "56789abcdef", " done"):
        out += masked(TextDelta(turn=1, text=piece))
    assert KEY not in _deltas(out)
    out += masked(AssistantMessage(turn=1, text=f"key is {KEY} done"))
    assert [type(e) for e in out][-2:] == [TextDelta, AssistantMessage]
    assert _deltas(out) == f"key is {MASK} done"
    assert out[-1].text == f"key is {MASK} done"  # type: ignore[attr-defined]


def test_a_new_turn_or_the_end_releases_the_held_text() -> None:
    masked = MaskedEvents(SecretMask({KEY}))
    first = masked(TextDelta(turn=1, text="ends with sk-live"))
    second = masked(TextDelta(turn=2, text="-0123456789abcdef"))
    released = [e for e in first + second if isinstance(e, TextDelta)]
    assert [(e.turn, e.text) for e in released] == [(1, "ends with sk-live")]
    end = masked(AgentEnd(status=RunStatus.ERROR, result="", error=f"failed: {KEY}"))
    assert [(e.turn, e.text) for e in end if isinstance(e, TextDelta)] == [(2, "-0123456789abcdef")]
    assert end[-1].error == f"failed: {MASK}"  # type: ignore[attr-defined]


def test_without_secrets_deltas_pass_at_once() -> None:
    masked = MaskedEvents(SecretMask())
    assert _deltas(masked(TextDelta(turn=1, text="hello"))) == "hello"
    result = ToolResultEvent(turn=1, id="c", name="t", is_error=False, content="x")
    assert masked(result) == [result]
