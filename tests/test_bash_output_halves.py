"""The bash tool's kept output: uncut, it is decoded as one text."""

from __future__ import annotations

from launcher.secrets import MASK, SecretMask
from launcher.tools.bash import CappedOutput


def test_a_character_across_the_halves_of_an_uncut_output_stays_whole() -> None:
    out = CappedOutput(4)
    out.add("aé".encode())
    out.add(b"b")
    assert out.text() == "aéb"


def test_a_non_ascii_secret_across_the_halves_is_masked() -> None:
    secret = "clé-secrète-0123"
    data = ("x" * 12 + secret).encode()  # the halves meet inside its "é"
    out = CappedOutput(len(data))
    for at in range(0, len(data), 3):
        out.add(data[at : at + 3])
    assert SecretMask({secret}).text(out.text()) == "x" * 12 + MASK
