"""A forged request to the login's callback, with a wrong or no `state`, is refused (400),
learns nothing, and the real login still completes."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from tests.e2e.conftest import Subagent, write_config
from tests.e2e.oauth_support import BROWSER_TIMEOUT_S, login, oauth_fixture, oauth_server

pytestmark = pytest.mark.e2e


def test_a_forged_callback_is_refused_and_the_real_login_completes(
    tmp_path: Path, subagent: Subagent
) -> None:
    forged: list[httpx2.Response] = []
    states: list[str] = []

    def forge(url: str) -> None:
        query = parse_qs(urlsplit(url).query)
        states.append(query["state"][0])
        callback = query["redirect_uri"][0]
        for bad in ("code=forged&state=wrong", "code=forged", "error=access_denied&state=x"):
            forged.append(httpx2.get(f"{callback}?{bad}", timeout=BROWSER_TIMEOUT_S))

    with oauth_fixture() as fx:
        config = write_config(tmp_path / "cfg", {"remote": oauth_server(fx.mcp_url)})

        done = login(subagent, config, "remote", before_follow=forge)

        assert done.code == 0, done.stderr
        assert done.page is not None and "Login complete" in done.page.text
        assert fx.stats()["code_grants"] == 1
    assert len(forged) == 3 and states
    for response in forged:
        assert response.status_code == 400
        assert "Login complete" not in response.text
        assert states[0] not in response.text
    assert states[0] not in done.stderr
