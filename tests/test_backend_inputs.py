"""A sub-agent's input requests held for its host: answered once, at once when no host can
be asked, and each delivered to the worker's pipe."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from launcher.backend.inputs import HostInputs

REQUEST = {"method": "elicitation/create", "params": {"message": "Name?"}}


async def _collect(inputs: HostInputs) -> list[tuple[str, dict[str, Any] | None]]:
    sent: list[tuple[str, dict[str, Any] | None]] = []

    async def reply(request_id: str, result: dict[str, Any] | None) -> None:
        sent.append((request_id, result))

    inputs.bind(reply)
    return sent


@pytest.mark.anyio
async def test_with_no_way_to_ask_a_request_is_answered_none_at_once() -> None:
    inputs = HostInputs(can_ask=False)
    sent = await _collect(inputs)
    async with anyio.create_task_group() as tg:
        await inputs.offer("in-1", REQUEST, tg)
    assert sent == [("in-1", None)]
    assert inputs.pending == {}


@pytest.mark.anyio
async def test_a_held_request_is_answered_once_and_changes_are_told() -> None:
    inputs = HostInputs(can_ask=True)
    sent = await _collect(inputs)
    async with anyio.create_task_group() as tg:
        changed = inputs.changed
        await inputs.offer("in-1", REQUEST, tg)
        assert changed.is_set()
        assert inputs.pending == {"in-1": REQUEST}
        assert inputs.unasked() == {"in-1": REQUEST}
        assert inputs.unasked() == {}  # each goes to a legacy host once
        assert await inputs.answer("in-1", {"action": "accept"}) is True
        assert await inputs.answer("in-1", {"action": "decline"}) is False
        assert await inputs.answer("in-9", None) is False
        tg.cancel_scope.cancel()  # the expiry timer
    assert sent == [("in-1", {"action": "accept"})]


@pytest.mark.anyio
async def test_release_answers_every_pending_request_none() -> None:
    inputs = HostInputs(can_ask=True)
    sent = await _collect(inputs)
    async with anyio.create_task_group() as tg:
        await inputs.offer("in-1", REQUEST, tg)
        await inputs.offer("in-2", REQUEST, tg)
        await inputs.release()
        tg.cancel_scope.cancel()
    assert sorted(sent) == [("in-1", None), ("in-2", None)]
    assert inputs.pending == {}
