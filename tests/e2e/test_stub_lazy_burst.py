"""`lazy --burst N`: N list_changed notifications arrive right after initialization."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.e2e.stub_client import connect_stub, list_names

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


BURST = 20
BURST_TIMEOUT_S = 10.0


async def test_burst_delivers_every_handshake_era_notice(tmp_path: Path) -> None:
    args = ("--burst", str(BURST))
    async with connect_stub("lazy", *args, era="legacy", errlog=tmp_path / "err.log") as (
        client,
        changes,
    ):
        with anyio.fail_after(BURST_TIMEOUT_S):
            await changes.wait_count(BURST)
            names = await list_names(client)

    assert changes.seen == BURST
    assert names == ["echo", "sleep"]
