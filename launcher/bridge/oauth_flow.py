"""The SDK's OAuth provider, keeping the first failure of its flow (the SDK may wrap it).

Login and machine clients both report why a flow failed from this record, not from the
exception the SDK's transport finally raises (often a group, or a generic HTTP error).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

import httpx2
from mcp.client.auth import OAuthClientProvider


class FailureRecording(OAuthClientProvider):
    """An `OAuthClientProvider` whose flow records its first failure in `failure_exc`."""

    failure_exc: BaseException | None = None

    def _record_failure(self, exc: Exception) -> None:
        self.failure_exc = self.failure_exc or exc

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
