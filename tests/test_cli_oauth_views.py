"""The OAuth bits of the CLI's human output and URL opener, without a process."""

from __future__ import annotations

import io
import webbrowser

import pytest

from launcher.cli.login import graphical_browser_likely, url_opener
from launcher.cli.render import describe_oauth, print_servers

NOW = 1_000_000.0
URL = "http://127.0.0.1:1/authorize?client_id=c&state=s"


def test_describe_oauth_says_state_expiry_scopes_and_override() -> None:
    logged = {"logged_in": True, "expires_at": NOW + 3600, "scopes": ["mcp", "read"]}
    expired = {**logged, "expires_at": NOW - 1}
    overridden = {**logged, "token_env": "SUBAGENT_TOKEN_REMOTE"}
    out = {"logged_in": False, "expires_at": None, "scopes": []}

    assert describe_oauth(logged, now=NOW) == "logged in, expires in 1h, scopes mcp read"
    assert describe_oauth(expired, now=NOW).startswith("logged in, access token expired")
    assert describe_oauth(overridden, now=NOW).endswith(
        "SUBAGENT_TOKEN_REMOTE is set and used instead"
    )
    assert describe_oauth(out, now=NOW) == "not logged in"
    assert describe_oauth(out, now=NOW, machine=True) == "client credentials, no login needed"


def test_servers_line_shows_the_login_of_an_oauth_server_only() -> None:
    rows = {
        "remote": {"type": "http", "url": "http://x/mcp", "login": {"logged_in": False}},
        "plain": {"type": "http", "url": "http://y/mcp"},
        "machine": {
            "type": "http",
            "url": "http://z/mcp",
            "oauth": {"grant_type": "client_credentials"},
            "login": {"logged_in": False},
        },
    }
    out = io.StringIO()
    print_servers(rows, out)
    assert out.getvalue().splitlines() == [
        "remote  http  http://x/mcp  oauth: not logged in",
        "plain  http  http://y/mcp",
        "machine  http  http://z/mcp  oauth: client credentials, no login needed",
    ]


def test_no_browser_prints_the_url_and_opens_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "get", lambda: opened.append("get"))
    out = io.StringIO()
    url_opener(True, out)(URL)
    assert URL in out.getvalue() and opened == []


def test_linux_without_a_display_prints_the_url_and_starts_no_console_browser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "get", lambda: opened.append("get"))
    out = io.StringIO()
    url_opener(False, out)(URL)
    assert URL in out.getvalue() and opened == []
    assert graphical_browser_likely({"DISPLAY": ":0"}, "linux")
    assert graphical_browser_likely({"BROWSER": "firefox"}, "linux")
    assert graphical_browser_likely({}, "darwin")
    assert not graphical_browser_likely({}, "linux")


def test_without_a_browser_the_url_is_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_browser() -> webbrowser.BaseBrowser:
        raise webbrowser.Error("could not locate runnable browser")

    monkeypatch.setattr(webbrowser, "get", no_browser)
    monkeypatch.setenv("DISPLAY", ":0")
    out = io.StringIO()
    url_opener(False, out)(URL)
    assert f"    {URL}\n" in out.getvalue()
    assert "Open this URL in a browser" in out.getvalue()
