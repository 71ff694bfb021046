"""npm server-github with no token and no network: 26 tools listed, calls fail softly.

Its API URL is fixed, so outbound HTTPS is sent to a closed loopback port through
Node's env proxy support: the call fails at once and nothing leaves the machine.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import real_servers as rs
from tests.e2e.conftest import closed_port

pytestmark = pytest.mark.e2e

PACKAGE = "@modelcontextprotocol/server-github"
TOOL_COUNT = 26


@pytest.fixture
def proxy_port() -> Iterator[int]:
    """A closed loopback port, held for the whole test."""
    with closed_port() as port:
        yield port


@pytest.fixture
def config_dir(tmp_path: Path, proxy_port: int) -> Path:
    proxy = f"http://127.0.0.1:{proxy_port}"
    env = {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "",
        "NODE_USE_ENV_PROXY": "1",
        "HTTPS_PROXY": proxy,
        "HTTP_PROXY": proxy,
    }
    return rs.write_config(tmp_path / "config", {"mcp-github": rs.npm_server(PACKAGE, env=env)})


def test_github_server_lists_its_tools_without_a_token(config_dir: Path, tmp_path: Path) -> None:
    listing = rs.tools_json(config_dir, "mcp-github", tmp_path=tmp_path)

    assert listing["servers"]["mcp-github"] == {"state": "connected", "tools": 26, "error": None}
    tools = rs.server_tools(listing, "mcp-github")
    assert len(tools) == TOOL_COUNT
    assert {"get_issue", "list_issues", "create_pull_request"} <= set(tools)


def test_github_call_without_network_is_an_error_result(config_dir: Path, tmp_path: Path) -> None:
    call = {"tool": "mcp-github__get_issue", "args": {"owner": "o", "repo": "r", "issue_number": 1}}

    events = rs.spawn_events(config_dir, "mcp-github", [call], tmp_path=tmp_path)

    result = rs.tool_results(events)["mcp-github__get_issue"]
    assert result["is_error"] is True
    assert "fetch failed" in result["content"]  # the server's own message, passed through
    ended = [e for e in events if e["type"] == "agent_end"]
    assert [e["status"] for e in ended] == ["completed"]
    protocol = rs.connected_protocol(events, "mcp-github")
    assert protocol is not None and protocol < rs.MODERN_PROTOCOL  # the handshake era
