"""A turn's offer is searched for secrets once per offer, and the answer is the whole line's."""

from __future__ import annotations

import json
import random
from typing import Any

from launcher.event_mask import MaskedEvents
from launcher.events import Event, ToolNames, TurnStart
from launcher.secrets import MASK, LiveMask, SecretMask, forget_learned_secrets, note_secrets

NAMES = ToolNames(f"srv__tool_{i:04d}_é" for i in range(400))
"""An offer shared by every turn, as the registry hands it out until it changes."""


class Spy(SecretMask):
    """A SecretMask that records how much text it searched and which events it walked."""

    def __init__(self, values: set[str]) -> None:
        super().__init__(values)
        self.searched = 0
        self.walked: list[Event] = []

    def finds(self, text: str) -> bool:
        self.searched += len(text)
        return super().finds(text)

    def event(self, event: Any) -> Any:
        self.walked.append(event)
        return super().event(event)


def test_a_turn_whose_offer_did_not_change_searches_only_around_its_names() -> None:
    mask = Spy({"sk-live-0123456789abcdef"})
    masked = MaskedEvents(mask)
    first = TurnStart(turn=1, tools=NAMES)
    assert masked(first) == [first]
    assert mask.searched >= len(NAMES.json)  # the offer's names, searched once
    for turn in range(2, 12):
        mask.searched = 0
        event = TurnStart(turn=turn, tools=NAMES)
        assert masked(event) == [event]
        # The head and tail, with a form's length either side: not the 10 kB of names.
        assert mask.searched < 4 * mask.longest_text + 120
    assert mask.walked == []


def test_an_offer_holding_a_secret_is_masked_every_turn() -> None:
    secret = "tok-0123456789abcdef"
    names = ToolNames([*NAMES, f"srv__{secret}"])
    masked = MaskedEvents(SecretMask({secret}))
    for turn in (1, 2, 3):
        (out,) = masked(TurnStart(turn=turn, tools=names))
        line = out.to_json()
        assert secret not in line
        assert f"srv__{MASK}" in json.loads(line)["tools"]


def test_the_split_search_answers_as_a_search_of_the_whole_line_would() -> None:
    # Secrets cut out of the line across the names' two edges (and at random), turn after
    # turn: each event is walked exactly when its whole line holds a form.
    first = TurnStart(turn=7, tools=NAMES, deferred=12)
    line = first.to_json()
    span = first.names_span()
    assert span is not None and line[span[0] : span[1]] == NAMES.json
    rng = random.Random(5)
    cuts = [(at, n) for edge in span for at in range(edge - 45, edge + 45) for n in (8, 21, 40)]
    cuts += [(rng.randrange(len(line) - 40), rng.randrange(8, 40)) for _ in range(60)]
    tried = 0
    for at, n in cuts:
        secret = line[at : at + n]
        mask = Spy({secret})
        masked = MaskedEvents(mask)
        for turn in (7, 8, 7):
            event = TurnStart(turn=turn, ts=first.ts, tools=NAMES, deferred=12)
            expect = SecretMask({secret}).finds(event.to_json())
            mask.walked.clear()
            masked(event)
            assert (mask.walked == [event]) is expect, (secret, turn)
            tried += expect
    assert tried > len(cuts)  # most cuts are found (they are the line's own text)


def test_a_secret_learned_after_the_offer_was_found_clean_is_masked_in_it() -> None:
    token = "learned-token-0123456789"
    names = ToolNames([*NAMES, f"srv__{token}"])
    forget_learned_secrets()
    masked = MaskedEvents(LiveMask({"sk-live-0123456789abcdef"}))
    try:
        (out,) = masked(TurnStart(turn=1, tools=names))
        assert token in out.to_json()  # not a secret yet
        note_secrets([token])
        (out,) = masked(TurnStart(turn=2, tools=names))
    finally:
        forget_learned_secrets()
    assert token not in out.to_json()
    assert f"srv__{MASK}" in json.loads(out.to_json())["tools"]


def test_a_turn_start_without_shared_names_is_searched_whole() -> None:
    secret = "tok-0123456789abcdef"
    masked = MaskedEvents(SecretMask({secret}))
    (out,) = masked(TurnStart(turn=1, tools=[f"srv__{secret}"]))
    assert TurnStart(turn=1, tools=[]).names_span() is None
    assert secret not in out.to_json()


def test_a_secret_made_of_the_line_s_own_structure_empties_nothing() -> None:
    # A value a hostile token endpoint chose to match every line: the events stay whole.
    from launcher.events import SessionStart, ToolCallEvent

    call = ToolCallEvent(turn=1, id="c1", name="srv__echo", arguments={"text": "hi"})
    start = SessionStart(agent="a", session_id="20261206T000000-abcdef", log_dir="/home/alice/x")
    for secret in ('"type": "', "tool_call", "session_start", '", "session_id": "2026'):
        for event in (call, start):
            (out,) = MaskedEvents(SecretMask({secret}))(event)
            assert json.loads(out.to_json()) == json.loads(event.to_json()), secret


def test_a_value_the_program_reads_back_is_never_masked_by_the_line() -> None:
    from launcher.events import SessionStart

    start = SessionStart(agent="a", session_id="20261206T000000-abcdef", log_dir="/home/alice/x")
    (out,) = MaskedEvents(SecretMask({'alice/x", "sch'}))(start)
    assert json.loads(out.to_json())["log_dir"] == "/home/alice/x"


def test_a_value_chosen_to_touch_a_string_blanks_nothing_the_walk_would_not() -> None:
    # A hostile token endpoint's value made of a field name and a character: the command
    # and the status stay as they ran.
    from launcher.events import AgentEnd, RunStatus, ToolCallEvent

    call = ToolCallEvent(turn=1, id="c1", name="bash", arguments={"command": "rm -rf build"})
    end = AgentEnd(status=RunStatus.COMPLETED, result="done")
    for secret in ('"command": "r', '"status": "c', "completed"):
        for event in (call, end):
            (out,) = MaskedEvents(SecretMask({secret}))(event)
            assert json.loads(out.to_json()) == json.loads(event.to_json()), secret


def test_a_hook_s_tool_is_masked_as_the_call_s_name_is() -> None:
    from launcher.events import HookDecision

    secret = "tok-0123456789abcdef"
    hook = HookDecision(event="PreToolUse", hook="h.sh", decision="allow", tool=f"mcp__s__{secret}")
    (out,) = MaskedEvents(SecretMask({secret}))(hook)
    assert json.loads(out.to_json())["tool"] == "mcp__s__****"
