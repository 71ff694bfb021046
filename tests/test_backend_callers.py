"""serve --http's callers: the token file, the environment token, the constant-time lookup,
[HOST:]PORT and the loopback rule; every problem a clear error naming file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.backend.callers import (
    HttpOptions,
    Tokens,
    check_exposure,
    check_http,
    is_loopback,
    load_tokens,
    parse_listen,
)
from launcher.errors import ConfigError, UsageError

ALICE = "a" * 16 + "-alice"
BOB = "b" * 16 + "-bob"


def token_file(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "tokens"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_a_token_finds_its_caller_and_nothing_else_does(tmp_path: Path) -> None:
    path = token_file(tmp_path, f"# callers\nalice {ALICE}\n\n  bob   {BOB}  \n")
    tokens = load_tokens(path, environ={})
    assert tokens.caller(ALICE) == "alice"
    assert tokens.caller(BOB) == "bob"
    assert tokens.caller(ALICE[:-1]) is None
    assert tokens.caller(ALICE + "x") is None
    assert tokens.caller("") is None


def test_the_environment_token_is_the_default_caller_beside_the_file(tmp_path: Path) -> None:
    env = {"SUBAGENT_SERVE_TOKEN": "e" * 20}
    tokens = load_tokens(token_file(tmp_path, f"alice {ALICE}\n"), environ=env)
    assert tokens.caller("e" * 20) == "default"
    assert tokens.caller(ALICE) == "alice"
    assert not load_tokens(None, environ={})
    assert load_tokens(None, environ=env).by_caller == {"default": "e" * 20}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("alice\n", ":1: expected 'CALLER TOKEN'"),
        (f"\n\nalice {ALICE} more\n", ":3: expected 'CALLER TOKEN'"),
        (f"al/ice {ALICE}\n", ":1: field CALLER"),
        ("alice short\n", ":1: field TOKEN: a token needs at least 16"),
        (f"alice {ALICE}\nalice {BOB}\n", ":2: field CALLER: 'alice' is listed twice"),
        (f"alice {ALICE}\nbob {ALICE}\n", "'alice' and 'bob' share one token"),
        ("# nothing\n", "lists no 'CALLER TOKEN' line"),
    ],
)
def test_a_bad_token_file_names_file_line_and_field_never_a_token(
    tmp_path: Path, text: str, says: str
) -> None:
    path = token_file(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_tokens(path, environ={})
    assert str(path) in str(caught.value)
    assert says in str(caught.value)
    assert ALICE not in str(caught.value) and BOB not in str(caught.value)


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660, 0o606])
def test_a_token_file_others_may_read_is_refused(tmp_path: Path, mode: int) -> None:
    path = token_file(tmp_path, f"alice {ALICE}\n", mode)
    with pytest.raises(ConfigError, match="chmod 600"):
        load_tokens(path, environ={})


def test_a_token_file_with_another_hard_link_is_refused(tmp_path: Path) -> None:
    """The sandbox denies the file by its name: a second name for it (made before serve
    started, anywhere a sub-agent may read) would hand every caller's token out."""
    path = token_file(tmp_path, f"alice {ALICE}\n")
    (tmp_path / "notes.txt").hardlink_to(path)
    with pytest.raises(ConfigError, match="2 hard links") as refused:
        load_tokens(path, {})
    assert ALICE not in str(refused.value)


def test_a_missing_token_file_and_a_default_caller_twice_are_config_errors(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError, match="cannot be read"):
        load_tokens(tmp_path / "nope", environ={})
    path = token_file(tmp_path, f"default {ALICE}\n")
    with pytest.raises(ConfigError, match="SUBAGENT_SERVE_TOKEN"):
        load_tokens(path, environ={"SUBAGENT_SERVE_TOKEN": BOB})


@pytest.mark.parametrize(
    ("value", "host", "port"),
    [
        ("8765", "127.0.0.1", 8765),
        ("0.0.0.0:80", "0.0.0.0", 80),
        ("localhost:0", "localhost", 0),
        ("[::1]:9000", "::1", 9000),
        ("[::]:1", "::", 1),
    ],
)
def test_listen_addresses_parse(value: str, host: str, port: int) -> None:
    assert parse_listen(value) == (host, port)


@pytest.mark.parametrize("value", ["", "x", "host:", ":80", "1.2.3.4:99999", "[::1]9000", "[::1"])
def test_a_bad_listen_address_is_bad_usage(value: str) -> None:
    with pytest.raises(UsageError, match=r"\[HOST:\]PORT"):
        parse_listen(value)


def test_only_loopback_may_go_without_a_token() -> None:
    for host in ("127.0.0.1", "127.1.2.3", "::1", "localhost"):
        assert is_loopback(host)
        check_exposure(host, Tokens(), None)
    for host in ("0.0.0.0", "::", "10.0.0.1", "example.com"):
        assert not is_loopback(host)
        with pytest.raises(UsageError, match="SUBAGENT_SERVE_TOKEN"):
            check_exposure(host, Tokens(), None)
        check_exposure(host, Tokens({"a": ALICE}), None)
        check_exposure(host, Tokens(), "https://issuer.example")


def test_http_options_that_make_no_sense_are_bad_usage(tmp_path: Path) -> None:
    path = token_file(tmp_path, f"alice {ALICE}\n")
    assert check_http(HttpOptions()) is None
    with pytest.raises(UsageError, match="--token-file goes with --http"):
        check_http(HttpOptions(token_file=path))
    with pytest.raises(UsageError, match="exclude each other"):
        check_http(HttpOptions("0", path, "https://issuer.example"))
    with pytest.raises(UsageError, match="--public-url goes with --auth-issuer"):
        check_http(HttpOptions("0", path, None, "https://me.example/mcp"))
    with pytest.raises(UsageError, match="expected an http"):
        check_http(HttpOptions("0", None, "ftp://issuer"))
    listener = check_http(HttpOptions("0.0.0.0:9", path))
    assert listener is not None and listener.tokens.caller(ALICE) == "alice"
