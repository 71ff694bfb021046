"""`masked_launch_spec`: the display form of a server never shows a secret."""

from __future__ import annotations

import json
from pathlib import Path

from launcher.config.servers import load_servers
from launcher.config.shown import masked_launch_spec
from launcher.config.types import ServerSpec

SECRET = "ghp_verysecret"


def load(tmp_path: Path, servers: dict[str, object], env: dict[str, str]) -> dict[str, ServerSpec]:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return load_servers(path, env)[0]


def test_header_secret_is_masked_inside_the_value(tmp_path: Path) -> None:
    servers = load(
        tmp_path,
        {
            "r": {
                "url": "http://127.0.0.1:1/mcp?k=${TOKEN}",
                "headers": {"Authorization": "Bearer ${TOKEN}"},
            }
        },
        {"TOKEN": SECRET},
    )
    shown = masked_launch_spec(servers["r"])
    assert shown["headers"] == {"Authorization": "Bearer ****"}
    assert shown["url"] == "http://127.0.0.1:1/mcp?k=****"
    assert SECRET not in json.dumps(shown)


def test_env_from_environment_is_masked_whole_and_literals_are_shown(tmp_path: Path) -> None:
    servers = load(
        tmp_path,
        {
            "s": {
                "command": "srv",
                "args": ["--token=${TOKEN}", "--verbose"],
                "env": {
                    "GITHUB_TOKEN": "prefix-${TOKEN}",
                    "LEVEL": "${LEVEL:-info}",
                    "MODE": "literal",
                },
            }
        },
        {"TOKEN": SECRET},
    )
    shown = masked_launch_spec(servers["s"])
    assert shown["env"] == {"GITHUB_TOKEN": "****", "LEVEL": "info", "MODE": "literal"}
    assert shown["args"] == ["--token=****", "--verbose"]
    assert shown["command"] == "srv"
    assert SECRET not in json.dumps(shown)


def test_literal_text_equal_to_a_short_secret_is_not_masked(tmp_path: Path) -> None:
    servers = load(
        tmp_path,
        {"s": {"command": "srv", "args": ["--port=8081"], "env": {"DEBUG": "${DEBUG}"}}},
        {"DEBUG": "1"},
    )
    shown = masked_launch_spec(servers["s"])
    assert shown["args"] == ["--port=8081"]
    assert shown["env"] == {"DEBUG": "****"}


def test_masked_spec_is_json_serialisable_with_common_fields(tmp_path: Path) -> None:
    servers = load(tmp_path, {"s": {"command": "srv", "required": True}}, {})
    shown = masked_launch_spec(servers["s"])
    assert json.loads(json.dumps(shown)) == shown
    assert shown["required"] is True
    assert shown["source"] == str(tmp_path / "mcp.json")
    assert shown["type"] == "stdio"
