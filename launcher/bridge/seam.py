"""The SDK seam: what the bridge takes from `launcher.bridge.sdk`, as a Protocol.

The SDK module is imported lazily (`loader.load_sdk`, off the event loop), so the bridge
holds it as a value, not as an import; typed as `ModuleType` every use of it would be
`Any`. `SdkModule` names each attribute the bridge uses with its real type, and
`loader.py` holds the real module to it for the type checker (a module satisfies a
Protocol structurally), so a drift between the two is a type error, not a runtime one.
Nothing here imports the SDK at run time.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import httpx2
    import mcp_types as types
    from mcp import Client

    from launcher.auth.tokens import TokenStore
    from launcher.bridge.process import StdioChild
    from launcher.config.types import ServerSpec
    from launcher.toolset.types import ToolResult


class ClientFactory(Protocol):
    """`mcp.Client`'s constructor, with the arguments a connection passes."""

    def __call__(
        self,
        server: Any,
        *,
        message_handler: Any = ...,
        elicitation_callback: Any = ...,
        read_timeout_seconds: float | None = ...,
    ) -> Client: ...


class SdkModule(Protocol):
    """`launcher.bridge.sdk` as the bridge uses it (see the module docstring)."""

    @property
    def MODERN_PROTOCOL_VERSIONS(self) -> Collection[str]: ...
    @property
    def LISTEN_FAILURES(self) -> tuple[type[BaseException], ...]: ...
    @property
    def LISTEN_LOSSES(self) -> tuple[type[BaseException], ...]: ...
    @property
    def ToolListChangedNotification(self) -> type[types.ToolListChangedNotification]: ...
    @property
    def ToolsListChanged(self) -> type[object]: ...
    @property
    def Client(self) -> ClientFactory: ...

    async def accept_with_defaults(
        self, context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult: ...
    def describe_startup_error(self, exc: BaseException) -> str: ...
    def probe_outrun(self, exc: BaseException) -> bool: ...
    def implementation(self, info: Any) -> dict[str, str | None] | None: ...
    def from_call_result(self, result: types.CallToolResult) -> ToolResult: ...
    def from_exception(
        self,
        exc: BaseException,
        *,
        server: str,
        tool: str,
        timeout: float,
        connection_lost: bool = False,
    ) -> ToolResult: ...
    def stdio_transport(self, child: StdioChild) -> AbstractAsyncContextManager[Any]: ...
    async def http_transport(
        self,
        stack: AsyncExitStack,
        url: str,
        headers: dict[str, str],
        auth: httpx2.Auth | None = None,
    ) -> Any: ...
    def session_auth(
        self, spec: ServerSpec, store: TokenStore, env: Mapping[str, str]
    ) -> tuple[dict[str, str], httpx2.Auth | None]: ...
