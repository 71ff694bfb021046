"""Finishing a tool's results: masked with what the session's mask knows at each call."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from launcher.secrets import LiveMask, SecretMask, forget_learned_secrets, note_secrets
from launcher.session_tools import finished
from launcher.toolset.types import ToolResult

TOKEN = "oauth-token-learned-after-start-1234"


@pytest.fixture(autouse=True)
def _own_tokens() -> Iterator[None]:
    forget_learned_secrets()
    yield
    forget_learned_secrets()


def test_a_token_learned_after_the_entry_was_made_is_masked_in_its_results(
    tmp_path: Path,
) -> None:
    async def leaky(arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(f"token is {TOKEN}", structured={"token": TOKEN})

    # A built-in tool's caller: no size limit, and the session's mask still empty.
    call = finished(leaky, LiveMask(()), None, tmp_path)
    note_secrets([TOKEN])  # e.g. an OAuth login completing mid-session
    result = anyio.run(call, {})
    assert TOKEN not in result.content
    assert TOKEN not in str(result.structured)


def test_an_empty_fixed_mask_and_no_limit_leave_the_caller_as_it_is(tmp_path: Path) -> None:
    async def plain(arguments: dict[str, Any]) -> ToolResult:
        return ToolResult("x")

    assert finished(plain, SecretMask(()), None, tmp_path) is plain
