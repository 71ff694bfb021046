"""An access token that expires while a session runs is refreshed inside the session, with
no new login; the next session refreshes a stored expired token the same way."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from launcher.auth.tokens import TokenStore
from tests.e2e import oauth_support as oa
from tests.e2e.conftest import Subagent, parse_events, write_config

pytestmark = pytest.mark.e2e

ACCESS_TTL_S = 6
"""Longer than the session's 5 s refresh margin (a fresh token is used as is), shorter
than the pause in the script (the token dies between the two calls)."""
SCRIPT = """steps:
  - call: [{tool_from: remote/whoami, args: {}}]
  - sleep: 7
    call: [{tool_from: remote/whoami, args: {}}]
  - say: done
"""


def test_access_token_expiring_mid_session_is_refreshed_without_a_login(
    tmp_path: Path, subagent: Subagent
) -> None:
    with oa.oauth_fixture("--access-ttl", str(ACCESS_TTL_S)) as fx:
        config = write_config(tmp_path / "cfg", {"remote": oa.oauth_server(fx.mcp_url)})
        assert oa.login(subagent, config, "remote").code == 0
        script = oa.write_script(tmp_path / "s.yaml", SCRIPT)

        run = subagent.run(*oa.spawn_args(config, script))
        events = parse_events(run.stdout)
        (first_ok, first), (second_ok, second) = oa.tool_texts(events)
        stats = fx.stats()

        assert run.code == 0, run.stderr
        assert (first_ok, second_ok) == (False, False), (first, second)
        # The second call ran on a token granted after the first call's: a refresh inside
        # the session (the only code grant is the login's).
        assert oa.grant_of(second) > oa.grant_of(first)
        assert stats["code_grants"] == 1 and stats["refresh_grants"] >= 1
        states = [e["state"] for e in events if e["type"] == "server_state"]
        assert "failed" not in states

        # A later session starts from a stored token that has expired, and refreshes it
        # too. Expired here, not by waiting: the previous refresh may still be fresh.
        store = TokenStore(subagent.home)
        stored = store.load("remote")
        assert stored is not None
        store.save("remote", replace(stored, tokens={**stored.tokens, "expires_at": 0}))
        fx.expire_access()
        later = subagent.run(
            *oa.spawn_args(config, oa.write_script(tmp_path / "one.yaml", ONE_CALL))
        )
        ((later_error, later_text),) = oa.tool_texts(parse_events(later.stdout))
        assert later.code == 0 and later_error is False, later.stderr
        assert oa.grant_of(later_text) > oa.grant_of(second)
        assert fx.stats()["code_grants"] == 1
        oa.assert_no_leak(fx, subagent.home, run.stdout, run.stderr, later.stdout, later.stderr)


ONE_CALL = """steps:
  - call: [{tool_from: remote/whoami, args: {}}]
  - say: done
"""
