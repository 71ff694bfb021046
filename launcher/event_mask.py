"""A session's events masked before any sink sees them (the one masking code is in secrets)."""

from __future__ import annotations

from launcher.events import Event, TextDelta, ToolNames, TurnStart
from launcher.secrets import SecretMask, StreamMask


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
        # A form the walk leaves (written across two fields, or made of the line's own
        # structure) stays: masking strings it merely touches would let whoever chose the
        # value blank what it likes (a command, a status), and a party that knows a secret
        # can spell it in ways no mask finds anyway.
        return mask.event(event) if found else event

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
