"""The SDK's OAuth provider, keeping the first failure of its flow (the SDK may wrap it).

The one failure convention of the OAuth room: every provider (login, session, machine
client) records the first failure of its flow as `failure_exc` and its text as `failure`;
the login and the connection report that text, not the exception the SDK's transport
finally raises (often a group, or a generic HTTP error).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

import httpx2
from mcp.client.auth import OAuthClientProvider


class FailureRecording(OAuthClientProvider):
    """An `OAuthClientProvider` whose flow records its first failure (`failure`, `failure_exc`)."""

    failure: str | None = None
    """Why the flow failed, once known: the text the login or the connection reports."""
    failure_exc: BaseException | None = None

    def _describe_failure(self, exc: BaseException) -> str:
        """The text of a failure (providers add what the user needs to know)."""
        return str(exc)

    def _record_failure(self, exc: BaseException) -> None:
        if self.failure_exc is None:
            self.failure_exc = exc
            self.failure = self._describe_failure(exc)

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = super()._auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except Exception as exc:
            self._record_failure(exc)
            raise
        finally:
            await flow.aclose()
