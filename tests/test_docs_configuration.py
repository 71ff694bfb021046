"""docs/configuration.md names what the code reads: every environment variable, every
discovery place, every `mcp.json` key and server field, every field of our agent format."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from launcher.config.dialect import Action
from launcher.config.dialect_pi import PI_FIELDS
from launcher.config.discovery import PROJECT_AGENT_DIRS, USER_AGENT_DIRS
from launcher.config.hosts import PROJECT_HOST_FILES
from launcher.config.servers import _COMMON_FIELDS, _HTTP_FIELDS, _STDIO_FIELDS, SERVERS_FROM_KEY
from launcher.config.types import BUILTIN_TOOLS, DELEGATE_TOOL

REPO = Path(__file__).resolve().parents[1]
PAGE = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
INTERNAL_ENV = {
    "SUBAGENT_SECRETS_FD",
    "SUBAGENT_REQUIREMENT",
    "SUBAGENT_DENY_READ",
    "SUBAGENT_CALLER_TOKEN_",
}
"""Set by subagent for its own re-executed processes and serve's workers (the token file
denied, the tokens masked); never by a user. SUBAGENT_REQUIREMENT
is no variable of subagent's: the repository variable `init --ci`'s workflow installs it
from, which docs/ci.md names."""
OAUTH_PAGE_FIELDS = _HTTP_FIELDS - {"url", "headers", "auth"}
"""OAuth's own fields, documented on docs/oauth.md (which the page links)."""


PREFIXES = {
    "SUBAGENT_TOKEN_": "SUBAGENT_TOKEN_<SERVER>",
    "SUBAGENT_MODEL_": "SUBAGENT_MODEL_SONNET",
}
"""Names the code completes (a server's, an alias's), as the page writes them."""


def code_env_names() -> set[str]:
    """Every `SUBAGENT_*` variable named in launcher/; a prefix as the page writes it."""
    found: set[str] = set()
    for path in (REPO / "launcher").rglob("*.py"):
        found |= set(re.findall(r"\bSUBAGENT_[A-Z0-9_]*[A-Z0-9_]", path.read_text("utf-8")))
    names = set()
    for name in found:
        prefix = next((p for p in PREFIXES if name.startswith(p)), None)
        names.add(PREFIXES[prefix] if prefix else name)
    return names - INTERNAL_ENV


def test_the_code_reads_environment_variables() -> None:
    # The scan must find the known ones, or the test below passes vacuously.
    assert {"SUBAGENT_HOME", "SUBAGENT_SANDBOX", "SUBAGENT_TOKEN_<SERVER>"} <= code_env_names()


@pytest.mark.parametrize("name", sorted(code_env_names()))
def test_every_environment_variable_is_documented(name: str) -> None:
    assert f"`{name}" in PAGE, f"docs/configuration.md does not name {name}"


def test_every_discovery_place_is_documented() -> None:
    for where, dirs in ((".", PROJECT_AGENT_DIRS), ("~", USER_AGENT_DIRS)):
        for folder, _ in dirs:
            assert f"`{where}/{folder}/`" in PAGE, folder
    for name, _ in PROJECT_HOST_FILES:
        assert f"`./{name}`" in PAGE, name
    ours = ("`./.subagent/agents/`", "`./.subagent/mcp.json`", "`~/.config/subagent/mcp.json`")
    for place in ours:
        assert place in PAGE, place


def test_every_mcp_json_key_and_server_field_is_documented() -> None:
    for key in ("mcpServers", SERVERS_FROM_KEY, "sandbox"):
        assert f"`{key}`" in PAGE, key
    for name in sorted((_COMMON_FIELDS | _STDIO_FIELDS | _HTTP_FIELDS) - OAUTH_PAGE_FIELDS):
        assert f"`{name}`" in PAGE, f"server field {name}"


def test_every_field_our_agents_use_is_in_the_table() -> None:
    # Ignored fields are listed on docs/agents.md only (the page links its table).
    table = PAGE.split("## Agents", 1)[1].split("## Servers", 1)[0]
    assert "agents.md#" in table
    for field, rule in PI_FIELDS.items():
        if rule.action is not Action.IGNORED:
            assert f"`{field}`" in table, f"agent field {field}"
    for tool in (*BUILTIN_TOOLS, DELEGATE_TOOL):
        assert f"`{tool}`" in table, tool
