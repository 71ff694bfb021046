"""CI: `SUBAGENT_TOKEN_<SERVER>` and an `Authorization` in `headers` win over a stored login,
and work with no login at all; `servers` says which is used, and never shows a token."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e import oauth_support as oa
from tests.e2e.conftest import Subagent, parse_events, write_config

pytestmark = pytest.mark.e2e

SCRIPT = """steps:
  - call: [{tool_from: remote/whoami, args: {}}]
  - say: done
"""


def whoami(
    subagent: Subagent, config: Path, script: Path, env: dict[str, str], seen: list[str]
) -> str:
    """The protected tool's answer in one spawn; its stdout and stderr go to `seen`."""
    run = subagent.run(*oa.spawn_args(config, script), env=env)
    seen += [run.stdout, run.stderr]
    assert run.code == 0, run.stderr
    ((is_error, text),) = oa.tool_texts(parse_events(run.stdout))
    assert is_error is False, text
    return text


def test_env_token_and_header_win_over_the_stored_login(tmp_path: Path, subagent: Subagent) -> None:
    with oa.oauth_fixture() as fx:
        plain = write_config(tmp_path / "plain", {"remote": oa.oauth_server(fx.mcp_url)})
        headed = write_config(
            tmp_path / "headed",
            {
                "remote": oa.oauth_server(
                    fx.mcp_url, headers={"Authorization": "Bearer ${CI_HEADER_TOKEN}"}
                )
            },
        )
        script = oa.write_script(tmp_path / "s.yaml", SCRIPT)
        env_token, header_token = fx.mint("ci-env"), fx.mint("ci-header")
        both = {"SUBAGENT_TOKEN_REMOTE": env_token, "CI_HEADER_TOKEN": header_token}
        seen: list[str] = []

        # No login at all: a pre-provisioned token is enough (a sub-agent in CI).
        assert whoami(subagent, plain, script, both, seen).startswith("client=ci-env ")
        assert whoami(subagent, headed, script, both, seen).startswith("client=ci-header ")

        # Logging in while overrides are set works, and says which one sessions will use.
        done = oa.login(subagent, headed, "remote", env=both)
        assert done.code == 0, done.stderr
        assert "has an Authorization header in mcp.json" in done.stderr
        stored = whoami(subagent, plain, script, {}, seen)
        assert not stored.startswith("client=ci-")
        # With a stored login too: the variable beats it, and the header beats both.
        assert whoami(subagent, plain, script, both, seen).startswith("client=ci-env ")
        assert whoami(subagent, headed, script, both, seen).startswith("client=ci-header ")

        shown = subagent.run("servers", "--json", "--config-dir", str(plain), env=both)
        state = shown.json()["remote"]["login"]
        assert state["logged_in"] is True and state["token_env"] == "SUBAGENT_TOKEN_REMOTE"
        human = subagent.run("servers", "--config-dir", str(plain), env=both)
        assert "SUBAGENT_TOKEN_REMOTE is set and used instead" in human.stdout
        masked = subagent.run("servers", "--json", "--config-dir", str(headed), env=both)
        assert header_token not in masked.stdout
        assert fx.stats()["code_grants"] == 1
        texts = [done.stdout, done.stderr, shown.stdout, human.stdout, masked.stdout, *seen]
        oa.assert_no_leak(fx, subagent.home, *texts)
