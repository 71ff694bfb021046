"""The MCP SDK's private OAuth surface our providers build on, pinned in one place.

launcher/bridge/auth/ overrides or calls private members of the SDK's `OAuthClientProvider`
(there is no public hook for "stored tokens only" or for keeping the flow's first failure).
When an SDK release renames or reshapes one of them, this test names what moved, instead of
an OAuth e2e test failing somewhere far from the cause.
"""

from __future__ import annotations

import dataclasses
import inspect
import re

from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
)
from mcp.client.auth.oauth2 import OAuthContext

ASYNC_GENERATORS = {"_auth_flow": ["self", "request"]}
"""Overridden by flow.FailureRecording (wrapped) and session.SessionAuth (replaced)."""
COROUTINES = {
    "_initialize": ["self"],  # machine._Machine adds the stored expiry after it
    "_perform_authorization_code_grant": ["self"],  # login._LoginProvider widens the scope
    "_refresh_token": ["self"],  # session.SessionAuth builds its refresh request with it
    "_handle_refresh_response": ["self", "response"],  # ... and takes the answer with it
}
PLAIN = {"_add_auth_header": ["self", "request"]}
"""session.SessionAuth sets the bearer header with it."""
CONTEXT_FIELDS = {
    "client_info",
    "client_metadata",
    "current_tokens",
    "oauth_metadata",
    "protected_resource_metadata",
    "protocol_version",
    "token_expiry_time",
}
CONTEXT_METHODS = {"can_refresh_token", "clear_tokens"}
OURS = {
    "_bearer",
    "_describe_failure",
    "_expiring",
    "_fail",
    "_locked",
    "_mutex",
    "_record_failure",
    "_refresh_request",
    "_reload",
    "_step_up",
    "_take_refresh",
    "expiry_margin_s",
    "extra_scope",
    "failure",
    "failure_exc",
    "name",
    "storage",
    "store",
}
"""Names our subclasses add: none may shadow (and so silently replace) an SDK member."""


def _params(fn: object) -> list[str]:
    return list(inspect.signature(fn).parameters)  # type: ignore[arg-type]


def test_the_overridden_private_methods_keep_their_kind_and_parameters() -> None:
    moved: list[str] = []
    for kind, table, check in (
        ("async generator", ASYNC_GENERATORS, inspect.isasyncgenfunction),
        ("coroutine", COROUTINES, inspect.iscoroutinefunction),
        ("plain method", PLAIN, inspect.isfunction),
    ):
        for name, params in table.items():
            member = getattr(OAuthClientProvider, name, None)
            if member is None:
                moved.append(f"OAuthClientProvider.{name} is gone")
            elif not check(member) or _params(member) != params:
                moved.append(
                    f"OAuthClientProvider.{name} is no longer a {kind}{tuple(params)}: "
                    f"{inspect.signature(member)}"
                )
    assert moved == [], "the SDK changed the OAuth surface launcher/bridge/auth/ uses:\n" + (
        "\n".join(moved)
    )


def test_the_context_keeps_the_fields_and_methods_the_providers_use() -> None:
    fields = {f.name for f in dataclasses.fields(OAuthContext)}
    assert CONTEXT_FIELDS <= fields, f"OAuthContext lost {sorted(CONTEXT_FIELDS - fields)}"
    missing = sorted(m for m in CONTEXT_METHODS if not callable(getattr(OAuthContext, m, None)))
    assert missing == [], f"OAuthContext lost {missing}"


def test_the_provider_still_keeps_its_context_and_initialized_flag() -> None:
    # SessionAuth sets the SDK's own `_initialized` once it has loaded the stored login.
    source = inspect.getsource(OAuthClientProvider.__init__)
    assert "self.context" in source and "self._initialized" in source


def test_the_machine_providers_still_extend_the_oauth_provider() -> None:
    for cls in (ClientCredentialsOAuthProvider, PrivateKeyJWTOAuthProvider):
        assert issubclass(cls, OAuthClientProvider), f"{cls.__name__} left OAuthClientProvider"


def test_our_own_names_shadow_no_sdk_member() -> None:
    sdk_names = {
        name
        for cls in (OAuthClientProvider, ClientCredentialsOAuthProvider, PrivateKeyJWTOAuthProvider)
        for name in dir(cls)
    }
    # Instance attributes the SDK sets in its constructors count too.
    for cls in (OAuthClientProvider, ClientCredentialsOAuthProvider, PrivateKeyJWTOAuthProvider):
        sdk_names |= set(re.findall(r"self\.(\w+)\s*[:=]", inspect.getsource(cls.__init__)))
    assert sorted(OURS & sdk_names) == [], "our provider names now shadow SDK members"
