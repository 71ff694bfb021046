"""`"auth": "oauth"` in mcp.json: parsed into ServerSpec.oauth; mistakes name file, line, field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.config.servers import load_servers
from launcher.config.shown import masked_launch_spec
from launcher.config.types import OAuthSettings
from launcher.errors import ConfigError


def write(tmp_path: Path, server: object) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"srv": server}}, indent=2))
    return path


def test_oauth_fields_parse_into_settings(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "type": "http",
            "url": "https://mcp.example.com/mcp",
            "auth": "oauth",
            "client_id": "cli",
            "client_secret": "${SECRET}",
            "scopes": ["read", "write"],
            "client_metadata_url": "https://example.com/client.json",
        },
    )
    servers, warnings = load_servers(path, {"SECRET": "s3cr3t-value"})
    spec = servers["srv"]
    assert warnings == []
    assert spec.auth == "oauth"
    assert spec.oauth == OAuthSettings(
        client_id="cli",
        client_secret="s3cr3t-value",
        scopes=("read", "write"),
        client_metadata_url="https://example.com/client.json",
    )
    assert "s3cr3t-value" in spec.secrets


def test_plain_oauth_and_space_separated_scopes(tmp_path: Path) -> None:
    path = write(tmp_path, {"url": "http://127.0.0.1:9/mcp", "auth": "oauth", "scopes": "a b"})
    spec = load_servers(path, {})[0]["srv"]
    assert spec.oauth == OAuthSettings(scopes=("a", "b"))


def test_http_server_without_auth_has_none(tmp_path: Path) -> None:
    spec = load_servers(write(tmp_path, {"url": "http://127.0.0.1:9/mcp"}), {})[0]["srv"]
    assert spec.auth is None and spec.oauth is None


def test_literal_client_secret_is_masked_in_the_launch_spec(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "url": "http://h/mcp",
            "auth": "oauth",
            "client_id": "c",
            "client_secret": "literal-s3cret",
        },
    )
    spec = load_servers(path, {})[0]["srv"]
    shown = masked_launch_spec(spec)
    assert "literal-s3cret" in spec.secrets
    assert "literal-s3cret" not in json.dumps(shown)
    assert shown["auth"] == "oauth"
    assert shown["oauth"] == {
        "client_id": "c",
        "client_secret": "****",
        "scopes": [],
        "client_metadata_url": None,
        "grant_type": "authorization_code",
        "private_key": None,
        "signing_algorithm": "RS256",
    }


def test_client_credentials_grant(tmp_path: Path) -> None:
    server = {
        "url": "http://h/mcp",
        "auth": "oauth",
        "grant_type": "client_credentials",
        "client_id": "machine",
        "client_secret": "${S}",
    }
    spec = load_servers(write(tmp_path, server), {"S": "machine-secret"})[0]["srv"]
    assert spec.oauth == OAuthSettings(
        client_id="machine", client_secret="machine-secret", grant_type="client_credentials"
    )


def test_client_credentials_with_a_signing_key(tmp_path: Path) -> None:
    server = {
        "url": "http://h/mcp",
        "auth": "oauth",
        "grant_type": "client_credentials",
        "client_id": "machine",
        "private_key": "${KEY}",
        "signing_algorithm": "ES256",
    }
    pem = "-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----"
    spec = load_servers(write(tmp_path, server), {"KEY": pem})[0]["srv"]
    assert spec.oauth is not None
    assert (spec.oauth.private_key, spec.oauth.signing_algorithm) == (pem, "ES256")
    assert pem in spec.secrets
    shown = json.dumps(masked_launch_spec(spec))
    assert "abc" not in shown and '"private_key": "****"' in shown


@pytest.mark.parametrize(
    ("server", "field", "expected"),
    [
        (
            {"url": "http://h", "auth": "oauth", "private_key": "k"},
            "srv.private_key",
            'only with "grant_type": "client_credentials"',
        ),
        (
            {
                "url": "http://h",
                "auth": "oauth",
                "grant_type": "client_credentials",
                "client_id": "c",
                "private_key": "k",
                "signing_algorithm": "HS256",
            },
            "srv.signing_algorithm",
            "expected one of RS256",
        ),
        (
            {
                "url": "http://h",
                "auth": "oauth",
                "grant_type": "client_credentials",
                "client_id": "c",
                "client_secret": "s",
                "private_key": "k",
            },
            "srv.grant_type",
            "one of 'client_secret' or 'private_key'",
        ),
        (
            {"url": "http://h", "auth": "oauth", "grant_type": "password"},
            "srv.grant_type",
            "expected one of authorization_code, client_credentials",
        ),
        (
            {"url": "http://h", "auth": "oauth", "grant_type": "client_credentials"},
            "srv.grant_type",
            "needs 'client_id' and one of",
        ),
        ({"url": "http://h", "auth": "basic"}, "srv.auth", 'expected "auth": "oauth"'),
        ({"url": "http://h", "auth": True}, "srv.auth", 'expected "auth": "oauth"'),
        ({"command": "c", "auth": "oauth"}, "srv.auth", "applies only to http servers"),
        ({"url": "http://h", "client_id": "x"}, "srv.client_id", 'only with "auth": "oauth"'),
        ({"url": "http://h", "scopes": ["a"]}, "srv.scopes", 'only with "auth": "oauth"'),
        ({"url": "http://h", "auth": "oauth", "scopes": [1]}, "srv.scopes", "scope names"),
        ({"url": "http://h", "auth": "oauth", "scopes": ["a b"]}, "srv.scopes", "scope names"),
        ({"url": "http://h", "auth": "oauth", "client_id": ""}, "srv.client_id", "non-empty"),
        (
            {"url": "http://h", "auth": "oauth", "client_secret": "s"},
            "srv.client_secret",
            "needs 'client_id'",
        ),
        (
            {"url": "http://h", "auth": "oauth", "client_metadata_url": "http://e.com/c.json"},
            "srv.client_metadata_url",
            "https:// URL with a path",
        ),
        (
            {"url": "http://h", "auth": "oauth", "client_metadata_url": "https://e.com/"},
            "srv.client_metadata_url",
            "https:// URL with a path",
        ),
    ],
)
def test_bad_oauth_field_names_file_line_and_field(
    tmp_path: Path, server: dict[str, object], field: str, expected: str
) -> None:
    path = write(tmp_path, server)
    with pytest.raises(ConfigError) as info:
        load_servers(path, {})
    err = info.value
    assert err.path == path
    assert err.field == field
    assert expected in err.message
    key = field.split(".")[-1]
    # The line is the offending key's own line in the file.
    assert err.line is not None
    assert f'"{key}"' in path.read_text().splitlines()[err.line - 1]


def test_secret_in_bad_client_secret_never_shown(tmp_path: Path) -> None:
    path = write(tmp_path, {"url": "http://h", "client_secret": "${SECRET}"})
    with pytest.raises(ConfigError) as info:
        load_servers(path, {"SECRET": "hunter2-hunter2"})
    assert "hunter2" not in str(info.value)
