"""`subagent login` / `logout` / `servers` against the loopback OAuth fixture, through the real
CLI: the browser step is an HTTP client following the printed URL to the CLI's receiver."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, parse_events, stub, write_config
from tests.e2e.oauth_support import (
    assert_no_leak,
    login,
    oauth_fixture,
    oauth_server,
    spawn_args,
    write_script,
)

pytestmark = pytest.mark.e2e

SCRIPT = """steps:
  - call: [{tool_from: remote/whoami, args: {}}]
  - say: done
"""


def test_login_stores_tokens_then_a_session_calls_the_protected_tool(
    tmp_path: Path, subagent: Subagent
) -> None:
    marker = tmp_path / "stdio.started"
    with oauth_fixture() as fx:
        config = write_config(
            tmp_path / "cfg",
            {
                "remote": oauth_server(fx.mcp_url),
                # Never started by login, logout or servers (they start no server process).
                "marked": stub("faulty", "--marker", str(marker), "--crash-at-start"),
            },
        )
        before = subagent.run("servers", "--json", "--config-dir", str(config))
        assert before.json()["remote"]["login"]["logged_in"] is False

        done = login(subagent, config, "remote")

        assert done.code == 0, done.stderr
        assert done.page is not None and done.page.status_code == 200
        assert "Login complete" in done.page.text
        assert "Logged in to remote: expires in" in done.stdout
        assert "scopes mcp." in done.stdout
        stored = subagent.home / "auth" / "remote.json"
        assert stat.S_IMODE(stored.stat().st_mode) == 0o600
        assert fx.stats()["code_grants"] == 1

        shown = subagent.run("servers", "--json", "--config-dir", str(config))
        state = shown.json()["remote"]["login"]
        assert state["logged_in"] is True and state["scopes"] == ["mcp"]
        assert state["expires_at"] > time.time()
        human = subagent.run("servers", "--config-dir", str(config))
        assert "oauth: logged in, expires in" in human.stdout

        run = subagent.run(*spawn_args(config, write_script(tmp_path / "whoami.yaml", SCRIPT)))
        events = parse_events(run.stdout)
        (result,) = [e for e in events if e["type"] == "tool_result"]
        assert run.code == 0, run.stderr
        assert result["is_error"] is False and result["content"].startswith("client=")

        out = subagent.run("logout", "remote", "--config-dir", str(config))
        assert out.code == 0 and "Logged out of remote" in out.stdout
        assert not stored.exists()
        after = subagent.run("servers", "--json", "--config-dir", str(config))
        assert after.json()["remote"]["login"]["logged_in"] is False
        again = subagent.run("logout", "remote", "--config-dir", str(config))
        assert again.code == 0 and "not logged in" in again.stdout

        assert not marker.exists(), "login, logout or servers started a server process"
        texts = [r.stdout + r.stderr for r in (before, shown, human, run, out, after, again)]
        assert_no_leak(fx, subagent.home, done.stdout, done.stderr, *texts)


def test_login_refuses_an_unknown_or_non_oauth_server_as_bad_usage(
    tmp_path: Path, subagent: Subagent
) -> None:
    config = write_config(
        tmp_path / "cfg",
        {
            "plain": {"type": "http", "url": "http://127.0.0.1:9/mcp"},
            "local": stub("faulty", "--crash-at-start"),
        },
    )
    unknown = subagent.run("login", "nope", "--no-browser", "--config-dir", str(config))
    plain = subagent.run("login", "plain", "--no-browser", "--config-dir", str(config))
    local = subagent.run("login", "local", "--no-browser", "--config-dir", str(config))
    logout = subagent.run("logout", "nope", "--config-dir", str(config))

    assert unknown.code == 2 and "unknown server 'nope'" in unknown.stderr
    assert "plain, local" in unknown.stderr or "local, plain" in unknown.stderr
    for run in (plain, local):
        assert run.code == 2, run.stderr
        assert 'does not use OAuth: add "auth": "oauth"' in run.stderr
        assert str(config / "mcp.json") in run.stderr
    assert logout.code == 2 and "unknown server 'nope'" in logout.stderr
    for run in (unknown, plain, local, logout):
        assert "Traceback" not in run.stderr


def test_login_fails_with_the_reason_when_the_server_is_unreachable(
    tmp_path: Path, subagent: Subagent
) -> None:
    # Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    config = write_config(tmp_path / "cfg", {"remote": oauth_server("http://127.0.0.1:9/mcp")})

    run = subagent.run("login", "remote", "--no-browser", "--config-dir", str(config))

    assert run.code == 1
    assert "login to 'remote' failed" in run.stderr and "Traceback" not in run.stderr
    assert not (subagent.home / "auth" / "remote.json").exists()


def test_login_gives_up_when_no_redirect_arrives_in_time(
    tmp_path: Path, subagent: Subagent
) -> None:
    with oauth_fixture() as fx:
        config = write_config(tmp_path / "cfg", {"remote": oauth_server(fx.mcp_url)})
        run = subagent.run(
            "login", "remote", "--no-browser", "--timeout", "1", "--config-dir", str(config)
        )
        assert run.code == 1, run.stderr
        assert "no authorization arrived within 1 s" in run.stderr
        assert "http://127.0.0.1:" in run.stdout  # the URL was printed for a person to open
        assert "Traceback" not in run.stderr
        assert_no_leak(fx, subagent.home, run.stdout, run.stderr)
