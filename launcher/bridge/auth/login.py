"""`subagent login`: the interactive OAuth 2.1 flow, on the SDK's `OAuthClientProvider`.

The SDK does the protocol: protected-resource metadata discovery (RFC 9728), authorization
server metadata, dynamic client registration or a client ID metadata document, PKCE, the
`resource` indicator, the code exchange. This module supplies the two ends it leaves to the
application: the authorization URL goes to `open_url` (a browser, or a printed line), and
the redirect comes back to a loopback receiver on 127.0.0.1. The flow is triggered the way
the SDK expects, by connecting to the server and answering its 401; the tokens land in the
TokenStore. Sessions use `session_auth` (auth/session.py) and never come here.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from urllib.parse import parse_qs, urlsplit

import anyio
from mcp import Client
from mcp.client.auth.utils import union_scopes
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata

from launcher.auth.tokens import TokenStore
from launcher.bridge.auth.flow import FailureRecording
from launcher.bridge.auth.loopback import RedirectReceiver
from launcher.bridge.auth.machine import machine_auth
from launcher.bridge.auth.session import (
    EXPIRY_MARGIN_S,
    LoginRequired,
    SessionAuth,
    has_authorization_header,
    login_hint,
    session_auth,
)
from launcher.bridge.auth.storage import StoreStorage
from launcher.config.types import ServerSpec
from launcher.errors import AuthError, UsageError
from launcher.secrets import LiveMask, note_secrets

__all__ = [
    "EXPIRY_MARGIN_S",
    "LoginRequired",
    "SessionAuth",
    "has_authorization_header",
    "login",
    "login_hint",
    "session_auth",
]

CLIENT_NAME = "subagent"
"""The client name sent in dynamic registration (shown on the consent page)."""
LOGIN_CONNECT_TIMEOUT_S = 60.0
"""Bounds the non-interactive parts of a login (discovery, registration, token exchange)."""


class _LoginProvider(FailureRecording):
    """The SDK provider, asking for the configured and step-up scopes besides its own choice."""

    extra_scope: str | None = None
    """Scopes asked for beyond the SDK's choice: mcp.json `scopes` and a session's step-up."""

    async def _perform_authorization_code_grant(self) -> tuple[str, str]:
        # The SDK picks the scope from the challenge (or metadata); the configured scopes and
        # any a session was refused for (403 insufficient_scope) are added to it.
        metadata = self.context.client_metadata
        metadata.scope = union_scopes(metadata.scope, self.extra_scope)
        return await super()._perform_authorization_code_grant()


async def login(
    spec: ServerSpec,
    store: TokenStore,
    *,
    open_url: Callable[[str], None],
    timeout_s: float,
) -> None:
    """Log in to `spec` interactively and store its tokens; AuthError on any failure.

    `open_url` gets the authorization URL (it runs in a worker thread: it may block, e.g.
    on a browser start); `timeout_s` bounds the wait for the redirect.
    """
    if spec.type != "http" or spec.auth != "oauth":
        raise UsageError(f'server \'{spec.name}\' does not use OAuth (it needs "auth": "oauth")')
    if spec.oauth is not None and spec.oauth.grant_type == "client_credentials":
        # A machine client: no browser, no redirect; "login" fetches and stores a token.
        store.delete(spec.name)
        machine = machine_auth(spec, store)
        await _connect(spec, machine, LOGIN_CONNECT_TIMEOUT_S)
        _check_logged_in(spec, store)
        return
    storage = StoreStorage(store, spec.name)
    previous = store.load(spec.name)
    step_up = previous.metadata.get("step_up_scope") if previous is not None else None
    # A fresh login: old tokens and a dynamic registration bound to an old redirect port go.
    store.delete(spec.name)
    failure: AuthError | None = None
    async with anyio.create_task_group() as tg:
        try:
            receiver = RedirectReceiver()
            await receiver.start(tg)
            await _authorize(spec, storage, receiver, open_url, timeout_s, step_up)
        except AuthError as exc:
            failure = exc  # raised outside the task group, which would wrap it
        except OSError as exc:  # no loopback port, or the token file cannot be written
            failure = AuthError(f"login to '{spec.name}' failed: {exc}")
        finally:
            tg.cancel_scope.cancel()
    if failure is not None:
        raise failure
    _check_logged_in(spec, store)


def _check_logged_in(spec: ServerSpec, store: TokenStore) -> None:
    auth = store.load(spec.name)
    if auth is None or auth.access_token is None:
        raise AuthError(
            f"server '{spec.name}' answered without asking for authorization: nothing to log in to"
        )


async def _authorize(
    spec: ServerSpec,
    storage: StoreStorage,
    receiver: RedirectReceiver,
    open_url: Callable[[str], None],
    timeout_s: float,
    step_up: object,
) -> None:
    """Run the SDK's flow with `receiver` as the redirect target; tokens land in `storage`."""
    settings = spec.oauth
    metadata = OAuthClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[receiver.redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    if settings is not None and settings.client_id is not None:
        await storage.set_client_info(
            OAuthClientInformationFull(
                client_id=settings.client_id,
                client_secret=settings.client_secret,
                redirect_uris=[receiver.redirect_uri],  # type: ignore[list-item]
                token_endpoint_auth_method=(
                    "client_secret_basic" if settings.client_secret else "none"
                ),
            )
        )

    async def redirect(url: str) -> None:
        # The receiver takes only the callback that repeats this URL's state (CSRF).
        receiver.expect_state(parse_qs(urlsplit(url).query).get("state", [""])[0])
        await anyio.to_thread.run_sync(open_url, url, abandon_on_cancel=True)

    async def callback() -> AuthorizationCodeResult:
        try:
            result = await receiver.wait(timeout_s)
        except TimeoutError:
            raise AuthError(
                f"no authorization arrived within {timeout_s:g} s "
                f"(the redirect goes to {receiver.redirect_uri})"
            ) from None
        if result.error is not None or result.code is None:
            detail = f": {result.error_description}" if result.error_description else ""
            raise AuthError(f"authorization refused ({result.error or 'no code'}{detail})")
        note_secrets([result.code])
        return AuthorizationCodeResult(code=result.code, state=result.state, iss=result.iss)

    provider = _LoginProvider(
        spec.url or "",
        metadata,
        storage,
        redirect_handler=redirect,
        callback_handler=callback,
        client_metadata_url=settings.client_metadata_url if settings else None,
    )
    configured = " ".join(settings.scopes) if settings and settings.scopes else None
    provider.extra_scope = union_scopes(configured, step_up if isinstance(step_up, str) else None)
    await _connect(spec, provider, timeout_s + LOGIN_CONNECT_TIMEOUT_S)
    storage.save_metadata(
        provider.context.oauth_metadata, provider.context.protected_resource_metadata
    )


async def _connect(spec: ServerSpec, provider: FailureRecording, timeout_s: float) -> None:
    """Open (and close) one MCP session through `provider`: its 401 starts the flow."""
    headers = {k: v for k, v in spec.headers.items() if not has_authorization_header({k: v})}
    mask = LiveMask(spec.secrets)  # learned tokens and the authorization code too
    try:
        with anyio.fail_after(timeout_s), _quiet_sdk_log():
            async with create_mcp_http_client(headers=headers, auth=provider) as http:
                async with Client(streamable_http_client(spec.url or "", http_client=http)):
                    pass
    except Exception as exc:
        cause = provider.failure_exc or _innermost(exc)
        if isinstance(cause, AuthError):
            raise AuthError(f"login to '{spec.name}' failed: {mask.text(str(cause))}") from None
        text = mask.text(f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__)
        raise AuthError(f"login to '{spec.name}' failed: {text}") from None


@contextlib.contextmanager
def _quiet_sdk_log() -> Iterator[None]:
    """Keep the SDK's own tracebacks ("OAuth flow error") off the terminal during a login.

    The failure reaches the user once, as the AuthError's text; a session already routes
    the SDK's log to its sdk.log, and then this changes nothing.
    """
    logger = logging.getLogger("mcp")
    if logger.handlers or not logger.propagate:
        yield
        return
    quiet = logging.NullHandler()
    logger.addHandler(quiet)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(quiet)
        logger.propagate = True


def _innermost(exc: BaseException) -> BaseException:
    """The first leaf of an exception group (the SDK wraps transport failures in groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
