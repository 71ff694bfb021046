"""The login's loopback redirect receiver: one callback settles it; nothing else does."""

from __future__ import annotations

import socket
from pathlib import Path

import anyio
import httpx2
import pytest

from launcher.auth.tokens import TokenStore
from launcher.bridge.auth.login import login
from launcher.bridge.auth.loopback import RedirectReceiver
from launcher.config.types import ServerSpec
from launcher.errors import UsageError
from launcher.secrets import LiveMask, note_secrets

pytestmark = pytest.mark.anyio

WAIT_S = 10.0
"""Bounds each wait for the receiver; it answers at once."""


async def fetch(url: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=WAIT_S) as client:
        return await client.get(url)


async def test_callback_carries_code_state_and_iss() -> None:
    receiver = RedirectReceiver()
    async with anyio.create_task_group() as tg:
        await receiver.start(tg)
        receiver.expect_state("xyz")
        assert receiver.redirect_uri.startswith("http://127.0.0.1:")
        other = await fetch(f"http://127.0.0.1:{receiver.port}/favicon.ico")
        assert other.status_code == 404
        response = await fetch(f"{receiver.redirect_uri}?code=abc&state=xyz&iss=http%3A%2F%2Fas")
        assert response.status_code == 200 and "Login complete" in response.text
        result = await receiver.wait(WAIT_S)
        # A second callback (a replayed redirect) changes nothing.
        again = await fetch(f"{receiver.redirect_uri}?code=evil&state=xyz")
        assert again.status_code == 404
        tg.cancel_scope.cancel()
    assert (result.code, result.state, result.iss, result.error) == (
        "abc",
        "xyz",
        "http://as",
        None,
    )


async def test_error_redirect_is_reported_not_a_code() -> None:
    receiver = RedirectReceiver()
    async with anyio.create_task_group() as tg:
        await receiver.start(tg)
        receiver.expect_state("s")
        url = f"{receiver.redirect_uri}?error=access_denied&error_description=no+way&state=s"
        response = await fetch(url)
        result = await receiver.wait(WAIT_S)
        tg.cancel_scope.cancel()
    assert "Login failed" in response.text
    assert (result.code, result.error, result.error_description) == (
        None,
        "access_denied",
        "no way",
    )


@pytest.mark.parametrize(
    "query",
    ["code=forged&state=wrong", "code=forged", "error=access_denied&state=wrong"],
    ids=["wrong state", "no state", "forged error"],
)
async def test_a_callback_without_the_logins_state_is_refused_and_the_login_waits_on(
    query: str,
) -> None:
    real_state = "the-real-state-QWERTY"
    receiver = RedirectReceiver()
    async with anyio.create_task_group() as tg:
        await receiver.start(tg)
        receiver.expect_state(real_state)

        forged = await fetch(f"{receiver.redirect_uri}?{query}")
        real = await fetch(f"{receiver.redirect_uri}?code=right&state={real_state}")
        result = await receiver.wait(WAIT_S)
        tg.cancel_scope.cancel()

    assert forged.status_code == 400
    assert "Login complete" not in forged.text and real_state not in forged.text
    assert "wrong" not in forged.text
    assert real.status_code == 200 and "Login complete" in real.text
    assert (result.code, result.state) == ("right", real_state)


async def test_wait_times_out_without_a_redirect() -> None:
    receiver = RedirectReceiver()
    async with anyio.create_task_group() as tg:
        await receiver.start(tg)
        with pytest.raises(TimeoutError):
            await receiver.wait(0.2)
        tg.cancel_scope.cancel()


async def test_port_is_released_after_the_login() -> None:
    receiver = RedirectReceiver()
    async with anyio.create_task_group() as tg:
        await receiver.start(tg)
        tg.cancel_scope.cancel()
    # Released: the port binds again. Held so (bound, not listening), a connect to it is
    # refused, whatever other process asks for a port meanwhile.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as hold:
        hold.bind(("127.0.0.1", receiver.port))
        with pytest.raises(httpx2.ConnectError):
            await fetch(receiver.redirect_uri)


async def test_login_refuses_a_server_without_oauth(tmp_path: Path) -> None:
    spec = ServerSpec(name="plain", type="http", url="http://127.0.0.1:9/mcp")
    with pytest.raises(UsageError, match='needs "auth": "oauth"'):
        await login(spec, TokenStore(tmp_path), open_url=lambda url: None, timeout_s=1)


def test_live_mask_masks_values_noted_after_it_was_made() -> None:
    mask = LiveMask({"static-secret-1"})
    assert mask.text("late-token-abcdef") == "late-token-abcdef"
    note_secrets(["late-token-abcdef"])
    assert mask.text("a late-token-abcdef b static-secret-1") == "a **** b ****"
    assert mask.data(b"late-token-abcdef") == b"****"
    note_secrets(["short"])  # shorter than any credential: never registered
    assert mask.text("short") == "short"
