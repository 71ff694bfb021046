"""No token the authorization server issued ever shows: not in human or `--verbose` output,
`tools --json`, `subagent log`, the session's events, logs and store, nor in the error text
of a failed refresh. The token store (`SUBAGENT_HOME/auth/`) is the only place they live."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, write_config
from tests.e2e.oauth_support import (
    assert_no_leak,
    login,
    oauth_fixture,
    oauth_server,
    write_script,
)

pytestmark = pytest.mark.e2e

ACCESS_TTL_S = 1
"""Expired by the time a session starts: sessions refresh (more tokens to leak)."""
SCRIPT = """steps:
  - call: [{tool_from: remote/whoami, args: {}}, {tool_from: remote/echo, args: {text: hi}}]
  - say: done
"""


def test_no_issued_token_appears_outside_the_token_store(
    tmp_path: Path, subagent: Subagent
) -> None:
    with oauth_fixture("--access-ttl", str(ACCESS_TTL_S)) as fx:
        config = str(write_config(tmp_path / "cfg", {"remote": oauth_server(fx.mcp_url)}))
        done = login(subagent, Path(config), "remote")
        assert done.code == 0, done.stderr
        script = write_script(tmp_path / "s.yaml", SCRIPT)
        model = f"scripted:{script}"

        runs = [
            subagent.run("spawn", "--verbose", "--config-dir", config, "--model", model, "go"),
            subagent.run("tools", "--json", "--config-dir", config),
            subagent.run("log", "last"),
            subagent.run("log", "-q", "hi", "--json"),
            subagent.run("servers", "--json", "--config-dir", config),
        ]
        assert [r.code for r in runs] == [0] * len(runs), [r.stderr for r in runs]
        assert fx.stats()["refresh_grants"] >= 1  # refreshed tokens were in play too
        fx.revoke_refresh()
        fx.expire_access()
        failed = subagent.run("spawn", "--verbose", "--config-dir", config, "--model", model, "go")
        assert failed.code == 0 and "run `subagent login remote`" in failed.stdout + failed.stderr

        stored = subagent.home / "auth" / "remote.json"
        assert any(s in stored.read_text() for s in fx.issued())  # the search can find them
        texts = [t for r in [*runs, failed] for t in (r.stdout, r.stderr)]
        assert_no_leak(fx, subagent.home, done.stdout, done.stderr, *texts)
