"""`serve --http --auth-issuer URL`: serve as an OAuth resource server. It publishes its
RFC 9728 metadata, accepts the issuer's JWTs (signature from the issuer's JWKS, audience,
expiry), refuses every other token with 401 naming that metadata, and a token's `sub` is
the caller: two subjects never see each other's sub-agents.

The issuer is the project's OAuth fixture (mcp_servers.oauth_protected), minting by subject.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx2
import pytest

from tests.e2e.oauth_support import oauth_fixture
from tests.e2e.serve_http_support import LIMIT_S, http_client, http_serve

pytestmark = pytest.mark.e2e

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
PING = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
PING["params"] = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "probe", "version": "0"},
}


@pytest.mark.anyio
async def test_jwts_of_the_issuer_are_accepted_by_subject_and_every_other_token_refused(
    tmp_path: Path,
) -> None:
    with oauth_fixture() as issuer, http_serve(tmp_path, "--auth-issuer", issuer.base) as serve:
        resource = serve.url
        async with httpx2.AsyncClient(timeout=LIMIT_S) as http:
            metadata = await http.get(
                resource.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
            )
            assert metadata.status_code == 200
            assert metadata.json()["resource"] == resource
            assert metadata.json()["authorization_servers"] == [issuer.base]

            refused = {
                "none": None,
                "opaque": issuer.mint("ci"),
                "other audience": issuer.mint_jwt("alice", "http://127.0.0.1:1/mcp"),
                "expired": issuer.mint_jwt("alice", resource, ttl=-120),
                "other issuer": issuer.mint_jwt("alice", resource, issuer="http://evil.invalid"),
                "forged": issuer.mint_jwt("alice", resource, foreign=1),
                # No subject: never the caller its client_id (or azp) names.
                "empty sub": issuer.mint_jwt("", resource),
                # The header's alg is RSA's, its kid names the EC key.
                "key type mismatch": issuer.mint_jwt("alice", resource, ec_kid=1),
            }
            for what, token in refused.items():
                auth = {"Authorization": f"Bearer {token}"} if token else {}
                answer = await http.post(resource, json=PING, headers={**HEADERS, **auth})
                assert answer.status_code == 401, what
                challenge = answer.headers["www-authenticate"]
                assert 'resource_metadata="' in challenge, what
                assert "/.well-known/oauth-protected-resource/mcp" in challenge, what
            assert "Traceback" not in serve.stderr()

        alice = issuer.mint_jwt("alice", resource)
        bob = issuer.mint_jwt("bob", resource)
        long = {"prompt": "go", "model": f"scripted:{tmp_path / 'long.yaml'}", "background": True}
        with anyio.fail_after(LIMIT_S):
            async with (
                http_client(resource, token=alice, mode="2026-07-28") as as_alice,
                http_client(resource, token=bob, mode="legacy") as as_bob,
            ):
                started = await as_alice.call_tool("spawn_subagent", long)
                agent_id = started.structured_content["agent_id"]
                seen = await as_bob.call_tool("get_subagent_result", {"agent_id": agent_id})
                assert seen.is_error
                assert seen.content[0].text.endswith(f"no sub-agent with agent_id '{agent_id}'")
                stopped = await as_alice.call_tool("stop_subagent", {"agent_id": agent_id})
                assert stopped.content[0].text == "stopped"


@pytest.mark.anyio
async def test_an_issuer_callers_jwt_is_masked_in_results_and_at_rest(tmp_path: Path) -> None:
    """A model that echoes a caller's JWT (a host may put it in a prompt) writes the mask,
    in serve's answer and in the stored session, for its own caller's and another's."""
    with oauth_fixture() as issuer, http_serve(tmp_path, "--auth-issuer", issuer.base) as serve:
        alice = issuer.mint_jwt("alice", serve.url)
        bob = issuer.mint_jwt("bob", serve.url)
        script = tmp_path / "say.yaml"
        script.write_text(json.dumps({"steps": [{"say": f"bob's is {bob}, mine {alice}"}]}))
        with anyio.fail_after(LIMIT_S):
            async with http_client(serve.url, token=bob) as as_bob:
                await as_bob.list_tools()
            async with http_client(serve.url, token=alice) as as_alice:
                done = await as_alice.call_tool(
                    "spawn_subagent", {"prompt": "go", "model": f"scripted:{script}"}
                )
    assert done.structured_content is not None, done
    answer = json.dumps(done.structured_content) + json.dumps(
        [c.model_dump() for c in done.content]
    )
    assert "bob's is ****" in answer, answer
    assert bob not in answer and alice not in answer
    stored = b"".join(p.read_bytes() for p in sorted(serve.home.rglob("*")) if p.is_file())
    assert b"bob's is" in stored  # the session was recorded at all
    assert bob.encode() not in stored and alice.encode() not in stored
