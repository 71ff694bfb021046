"""A session's events masked before any sink sees them (the one masking code is in secrets)."""

from __future__ import annotations

import dataclasses
import json

from launcher.events import Event, TextDelta, ToolNames, TurnStart
from launcher.secrets import MASK, UNMASKED, SecretMask, StreamMask


class MaskedEvents:
    """A session's events as its sinks see them: masked, streamed text included.

    Text deltas go through one StreamMask, so a secret split across deltas is still caught;
    the tail it holds back goes out, masked, as a last delta before the next other event.
    """

    def __init__(self, mask: SecretMask) -> None:
        self._mask = mask
        self._text = StreamMask(mask, "")
        self._turn: int | None = None
        self._clean: tuple[ToolNames, frozenset[str]] | None = None
        """The last offer whose names held no form of these secrets."""

    def __call__(self, event: Event) -> list[Event]:
        """The events to send for `event`, in order: none while a delta is all held back."""
        if not isinstance(event, TextDelta):
            if self._turn is None:  # no delta since the last release: nothing is held
                return [self._masked(event)]
            return [*self._release(), self._masked(event)]
        out = self._release() if event.turn != self._turn else []
        self._turn = event.turn
        text = self._text.feed(event.text)
        if text == event.text:
            out.append(event)  # nothing held or masked: the delta as it came
        elif text:
            out.append(TextDelta(turn=event.turn, text=text, ts=event.ts))
        return out

    def _masked(self, event: Event) -> Event:
        # The JSON line holds every string of the event, escaped as the mask's JSON forms
        # are: no form in it, nothing to mask; one search of the line (which the sinks then
        # reuse) replaces a walk of every value. A hit takes the walk.
        mask = self._mask
        if not mask:
            return event
        found = (
            self._turn_start_finds(event)
            if type(event) is TurnStart
            else mask.finds(event.to_json())
        )
        if not found:
            return event
        out = mask.event(event)
        line = out.to_json()
        # A form the walk left: written across fields (a secret holding `", "` spelt by two
        # tool names), so no field alone holds it. The line itself is masked instead.
        return out.with_line(_line_masked(mask, out, line)) if mask.finds(line) else out

    def _turn_start_finds(self, event: TurnStart) -> bool:
        # A turn's line is mostly its offer's names, shared turn after turn until the offer
        # changes: they are searched once per offer (and again when the mask learns a
        # secret); each turn searches only what is around them, edges included.
        line = event.to_json()
        span = event.names_span()
        mask = self._mask
        values, reach = mask.values, mask.longest_text - 1  # as of the check in _masked
        if span is None or span[1] - span[0] <= 2 * reach:
            return mask.finds(line)
        start, end = span
        if mask.finds(line[: start + reach]) or mask.finds(line[end - reach :]):
            return True
        names = event.tools
        assert isinstance(names, ToolNames)  # a span is only given for shared names
        clean = self._clean
        if clean is None or clean[0] is not names or clean[1] != values:
            if mask.finds(line[start:end]):
                return True
            self._clean = (names, values)
        # A secret learned while this ran may be longer than `reach`: the whole line then.
        return mask.values != values and mask.finds(line)

    def _release(self) -> list[Event]:
        turn, self._turn = self._turn, None
        tail = self._text.flush()
        return [TextDelta(turn=turn, text=tail)] if turn is not None and tail else []


def _line_masked(mask: SecretMask, event: Event, line: str) -> str:
    # The line with every string a form overlaps masked whole, so it stays the event's JSON:
    # never a field's name, the type, or a value the program reads back (an id, a path),
    # which hold no secret of their own; a form made of those alone is left as it was.
    spans = mask.spans(line)
    keep = {"type", *(f.name for f in dataclasses.fields(event) if f.metadata.get(UNMASKED))}
    out: list[str] = []
    done = 0
    for start, end, field, is_name in _strings(line):
        if is_name or field in keep:
            continue
        if any(s < end and e > start for s, e in spans):
            out += [line[done:start], MASK]
            done = end
    return "".join([*out, line[done:]])


def _strings(line: str) -> list[tuple[int, int, str | None, bool]]:
    # Each string of a JSON line: where its text starts and ends, the top-level field it is
    # in, and whether it is a top-level field's name.
    found: list[tuple[int, int, str | None, bool]] = []
    nesting: list[str] = []
    field: str | None = None
    name_next = False
    at = 0
    while at < len(line):
        char = line[at]
        if char == '"':
            end = at + 1
            while end < len(line) and line[end] != '"':
                end += 2 if line[end] == "\\" else 1
            is_name = name_next and len(nesting) == 1
            if is_name:
                field = json.loads(line[at : end + 1])
            found.append((at + 1, end, field, is_name))
            name_next = False
            at = end + 1
            continue
        if char in "{[":
            nesting.append(char)
            name_next = char == "{"
        elif char in "}]":
            nesting.pop()
        elif char == ",":
            name_next = bool(nesting) and nesting[-1] == "{"
        at += 1
    return found
