"""Two sessions starting together with an expired stored token refresh it once: the first
refreshes under the store's lock, the second waits, re-reads the store and uses the result.

The refresh grant rotates the refresh token, so a second, unlocked refresh would not only
count twice: it would present a spent token and fail.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from launcher.auth.tokens import TokenStore
from tests.e2e import oauth_support as oa
from tests.e2e.conftest import RUN_LIMIT_S, Subagent, parse_events, write_config

pytestmark = pytest.mark.e2e

REFRESHED_TTL_S = 3600
"""Tokens issued by the refresh outlive the test: one refresh is all either session needs."""
REFRESH_DELAY_S = 3
"""The token endpoint holds each refresh this long, so the second session arrives while the
first one's refresh is in flight (the lock, not luck, must keep it from refreshing too)."""
SCRIPT = """steps:
  - call: [{tool_from: remote/whoami, args: {}}]
  - say: done
"""


def test_two_sessions_with_an_expired_token_refresh_once(
    tmp_path: Path, subagent: Subagent
) -> None:
    with oa.oauth_fixture() as fx:
        config = write_config(tmp_path / "cfg", {"remote": oa.oauth_server(fx.mcp_url)})
        assert oa.login(subagent, config, "remote").code == 0
        fx.set(access_ttl=REFRESHED_TTL_S, refresh_delay=REFRESH_DELAY_S)
        # Expired for both sides now, not by waiting: the sessions must refresh first.
        store = TokenStore(subagent.home)
        stored = store.load("remote")
        assert stored is not None
        store.save("remote", replace(stored, tokens={**stored.tokens, "expires_at": 0}))
        fx.expire_access()
        script = oa.write_script(tmp_path / "s.yaml", SCRIPT)

        procs = [subagent.start(*oa.spawn_args(config, script)) for _ in range(2)]
        outputs = [proc.communicate(timeout=RUN_LIMIT_S) for proc in procs]
        stats = fx.stats()

        answers = []
        for proc, (out, err) in zip(procs, outputs, strict=True):
            assert proc.returncode == 0, err
            ((is_error, text),) = oa.tool_texts(parse_events(out))
            assert is_error is False, text
            answers.append(text)
        assert stats["refresh_grants"] == 1, stats
        assert stats["refresh_refused"] == 0 and stats["code_grants"] == 1
        # Both sessions called with the one token the single refresh issued.
        assert oa.grant_of(answers[0]) == oa.grant_of(answers[1]) == stats["grants"]
        oa.assert_no_leak(fx, subagent.home, *(text for pair in outputs for text in pair))
