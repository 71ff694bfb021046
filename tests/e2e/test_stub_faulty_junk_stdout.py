"""`faulty --junk-stdout`: a non-JSON line on stdout does not end the session."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.e2e.stub_client import ERAS, Era, connect_stub, result_text

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


JUNK_TIMEOUT_S = 10.0


@pytest.mark.parametrize("era", ERAS)
async def test_session_survives_junk_line(tmp_path: Path, era: Era) -> None:
    async with connect_stub("faulty", "--junk-stdout", era=era, errlog=tmp_path / "err.log") as (
        client,
        changes,
    ):
        with anyio.fail_after(JUNK_TIMEOUT_S):
            junk = await changes.wait_junk()
            ok = await client.call_tool("ok")

    assert "not JSON-RPC" in str(junk)
    assert result_text(ok) == "ok"
