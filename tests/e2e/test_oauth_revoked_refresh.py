"""A revoked refresh token: the server is `failed` with the login hint, never a browser; the
session goes on (exit 0) unless the server is `required` (exit 1). No login: the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e import oauth_support as oa
from tests.e2e.conftest import Subagent, parse_events, write_config

pytestmark = pytest.mark.e2e

SCRIPT = """steps:
  - call: [{tool_from: remote/whoami, args: {}}]
  - say: finished without it
"""
HINT = "run `subagent login remote`"


def failure_of(events: list[dict]) -> str:
    (failed,) = [e for e in events if e["type"] == "server_state" and e["state"] == "failed"]
    return failed["error"]


def test_revoked_refresh_token_fails_the_server_with_the_login_hint(
    tmp_path: Path, subagent: Subagent
) -> None:
    with oa.oauth_fixture() as fx:
        optional = write_config(tmp_path / "opt", {"remote": oa.oauth_server(fx.mcp_url)})
        required = write_config(
            tmp_path / "req", {"remote": oa.oauth_server(fx.mcp_url, required=True)}
        )
        assert oa.login(subagent, optional, "remote").code == 0
        assert fx.revoke_refresh() == 1
        assert fx.expire_access() == 1
        script = oa.write_script(tmp_path / "s.yaml", SCRIPT)

        run = subagent.run(*oa.spawn_args(optional, script))
        events = parse_events(run.stdout)
        (end,) = [e for e in events if e["type"] == "agent_end"]
        ((is_error, _),) = oa.tool_texts(events)

        assert run.code == 0, run.stderr
        assert end["status"] == "completed" and end["result"] == "finished without it"
        assert is_error is True  # the call never reached a server that is not connected
        error = failure_of(events)
        assert HINT in error and "invalid_grant" in error
        assert fx.stats()["refresh_refused"] >= 1 and fx.stats()["code_grants"] == 1

        hard = subagent.run(*oa.spawn_args(required, script))
        assert hard.code == 1
        assert HINT in hard.stderr or HINT in failure_of(parse_events(hard.stdout))
        oa.assert_no_leak(fx, subagent.home, run.stdout, run.stderr, hard.stdout, hard.stderr)


def test_a_server_never_logged_in_is_failed_with_the_hint_and_no_browser(
    tmp_path: Path, subagent: Subagent
) -> None:
    with oa.oauth_fixture() as fx:
        config = write_config(tmp_path / "cfg", {"remote": oa.oauth_server(fx.mcp_url)})
        script = oa.write_script(tmp_path / "s.yaml", SCRIPT)

        run = subagent.run(*oa.spawn_args(config, script))

        assert run.code == 0, run.stderr
        assert failure_of(parse_events(run.stdout)) == f"not logged in; {HINT}"
        # Nothing was attempted at the authorization server: no registration, no code.
        stats = fx.stats()
        assert stats["registrations"] == 0 and stats["code_grants"] == 0
