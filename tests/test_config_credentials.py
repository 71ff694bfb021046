"""Credentials written as text in a server's launch spec are shown as `****` and masked like
`${VAR}` values; names, paths, the command and ordinary values are shown as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.config.credentials import (
    args_spans,
    credential_name,
    env_spans,
    header_spans,
    hide,
    url_spans,
)
from launcher.config.servers import load_servers
from launcher.config.shown import masked_launch_spec
from launcher.config.types import ServerSpec
from launcher.errors import ConfigError
from launcher.secrets import MASK, SecretMask

TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ"
KEY = "literal-key-7f6e5d4c"
PASSWORD = "pa55word-literal"


def load(tmp_path: Path, servers: dict[str, object], env: dict[str, str] | None = None):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return load_servers(path, env or {})[0]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Authorization", True),
        ("X-Api-Key", True),
        ("apiKey", True),
        ("GITHUB_PERSONAL_ACCESS_TOKEN", True),
        ("DB_PASSWORD", True),
        ("Cookie", True),
        ("client_secret", True),
        ("TOKEN_FILE", False),
        ("API_KEY_ENV", False),
        ("auth-type", False),
        ("X-Tenant", False),
        ("LEVEL", False),
        ("PATH", False),
    ],
)
def test_credential_names(name: str, expected: bool) -> None:
    assert credential_name(name) is expected


def test_each_place_a_credential_stands() -> None:
    assert hide("Bearer abc.def", header_spans("Authorization", "Bearer abc.def")) == "Bearer ****"
    assert hide("Token xyz", header_spans("X-Custom", "Token xyz")) == "Token ****"
    assert hide("s3cr3t", header_spans("X-Api-Key", "s3cr3t")) == MASK
    assert header_spans("X-Tenant", "acme") == [] and header_spans("Accept", "text/html") == []
    assert hide("k", env_spans("OPENAI_API_KEY", "k")) == MASK
    db = "postgres://me:hunter22@db:5432/app?sslmode=require"
    assert (
        hide(db, env_spans("DATABASE_URL", db)) == "postgres://me:****@db:5432/app?sslmode=require"
    )
    url = "https://TOKENUSER@h.example/mcp?tenant=a&api_key=zz&sig=qq#access_token=ff"
    assert (
        hide(url, url_spans(url))
        == "https://****@h.example/mcp?tenant=a&api_key=****&sig=****#access_token=****"
    )
    args = [
        "--token=abc",
        "--api-key",
        "xyz",
        "-e",
        "GITHUB_TOKEN=t0k",
        "--header",
        "Authorization: Bearer qqq",
        "--token-file",
        "/home/me/.tok",
        "--verbose",
        f"prefix {TOKEN}",
    ]
    shown = [hide(a, s) for a, s in zip(args, args_spans(args), strict=True)]
    assert shown == [
        "--token=****",
        "--api-key",
        MASK,
        "-e",
        "GITHUB_TOKEN=****",
        "--header",
        "Authorization: Bearer ****",
        "--token-file",
        "/home/me/.tok",
        "--verbose",
        f"prefix {MASK}",
    ]


def test_literal_credentials_in_our_own_mcp_json_are_shown_masked(tmp_path: Path) -> None:
    servers = load(
        tmp_path,
        {
            "remote": {
                "url": f"https://user:{PASSWORD}@127.0.0.1:1/mcp?tenant=acme&token={KEY}",
                "headers": {"Authorization": f"Bearer {TOKEN}", "X-Tenant": "acme"},
            },
            "local": {
                "command": "/opt/bin/server",
                "args": ["--api-key", KEY, "--root", "/srv/data"],
                "env": {"SERVICE_TOKEN": KEY, "LEVEL": "debug"},
                "cwd": "/srv",
            },
        },
    )
    remote = masked_launch_spec(servers["remote"])
    assert remote["url"] == "https://user:****@127.0.0.1:1/mcp?tenant=acme&token=****"
    assert remote["headers"] == {"Authorization": "Bearer ****", "X-Tenant": "acme"}
    local = masked_launch_spec(servers["local"])
    assert local["args"] == ["--api-key", MASK, "--root", "/srv/data"]
    assert local["env"] == {"SERVICE_TOKEN": MASK, "LEVEL": "debug"}
    assert (local["command"], local["cwd"], local["name"]) == ("/opt/bin/server", "/srv", "local")
    shown = json.dumps([remote, local])
    assert not any(secret in shown for secret in (KEY, PASSWORD, TOKEN))


def test_literal_credentials_join_the_secrets_a_session_masks(tmp_path: Path) -> None:
    servers = load(
        tmp_path,
        {
            "remote": {"url": "https://h.example/mcp", "headers": {"X-Api-Key": KEY}},
            "local": {"command": "srv", "args": [f"--password={PASSWORD}"], "env": {"T": TOKEN}},
        },
    )
    secrets: set[str] = set().union(*(spec.secrets for spec in servers.values()))
    assert {KEY, PASSWORD, TOKEN} <= secrets
    mask = SecretMask(secrets)
    line = f"server said {KEY} / {PASSWORD} / {TOKEN} in /srv/data"
    assert mask.text(line) == f"server said {MASK} / {MASK} / {MASK} in /srv/data"


def test_a_bad_url_error_does_not_quote_its_credentials(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, {"s": {"url": f"ftp://me:{PASSWORD}@h/x?api_key={KEY}"}})
    assert PASSWORD not in str(info.value) and KEY not in str(info.value)
    assert "ftp://me:****@h/x?api_key=****" in str(info.value)


def test_ordinary_arguments_are_shown_as_written(tmp_path: Path) -> None:
    spec: ServerSpec = load(tmp_path, {"s": {"command": "srv", "args": ["--port", "8081"]}})["s"]
    assert masked_launch_spec(spec)["args"] == ["--port", "8081"]


def test_a_password_inside_a_connection_string_is_masked_in_any_value() -> None:
    conn = "Server=db;Database=app;User Id=me;Password=CONNsecret1;Encrypt=true"
    assert hide(conn, env_spans("CONN", conn)) == (
        "Server=db;Database=app;User Id=me;Password=****;Encrypt=true"
    )
    odbc = "DRIVER={x};UID=me;PWD=CONNsecret2"
    assert hide(odbc, env_spans("ODBC", odbc)) == "DRIVER={x};UID=me;PWD=****"
    arg = ["--dsn", "host=db user=me password=CONNsecret3 dbname=app"]
    shown = [hide(a, s) for a, s in zip(arg, args_spans(arg), strict=True)]
    assert shown == ["--dsn", "host=db user=me password=**** dbname=app"]
    # A word that only contains the name is no assignment of it.
    plain = "compassword=1;mypwd_hint=x"
    assert env_spans("NOTE", plain) == []


def test_a_short_p_flag_value_is_masked_unless_it_is_a_port() -> None:
    args = ["-u", "root", "-p", "SHORTPsecret99", "--publish", "x", "-p", "8080:80", "-p", "5432"]
    shown = [hide(a, s) for a, s in zip(args, args_spans(args), strict=True)]
    assert shown == ["-u", "root", "-p", MASK, "--publish", "x", "-p", "8080:80", "-p", "5432"]
    attached = ["-p=SECRETv4lue", "-print"]
    shown = [hide(a, s) for a, s in zip(attached, args_spans(attached), strict=True)]
    assert shown == ["-p=****", "-print"]
    long = ["--password", "LONGsecret77"]
    assert [hide(a, s) for a, s in zip(long, args_spans(long), strict=True)] == ["--password", MASK]


def test_a_webhook_url_s_secret_path_is_masked_and_ordinary_paths_are_not() -> None:
    cases = {
        "https://hooks.slack.com/services/T0001/B0002/WEBHOOKsecret12345": (
            "https://hooks.slack.com/services/T0001/B0002/****"
        ),
        "https://discord.com/api/webhooks/123456/DISCORDsecret_abc-12": (
            "https://discord.com/api/webhooks/123456/****"
        ),
        "https://api.telegram.org/bot123456:TGsecretABCdef/sendMessage": (
            "https://api.telegram.org/bot****/sendMessage"
        ),
    }
    for url, shown in cases.items():
        assert hide(url, url_spans(url)) == shown
    for ordinary in (
        "https://api.example.com/v1/projects/123e4567-e89b-12d3-a456-426614174000/items",
        "https://github.com/owner/repo/blob/0123456789abcdef0123456789abcdef01234567/README.md",
        "https://example.com/docs/getting-started/installation-guide",
    ):
        assert url_spans(ordinary) == [], ordinary
