"""Retry delays: exponential backoff with jitter, Retry-After honoured up to a cap."""

from __future__ import annotations

from launcher.models.retry import RetryPolicy, parse_retry_after, server_message


def test_backoff_doubles_and_is_capped() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0, jitter=lambda: 1.0)
    assert [policy.delay(n) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]


def test_jitter_keeps_at_least_half_the_backoff() -> None:
    policy = RetryPolicy(base_delay=2.0, jitter=lambda: 0.0)
    assert policy.delay(1) == 1.0


def test_retry_after_seconds_override_backoff() -> None:
    policy = RetryPolicy(base_delay=1.0, jitter=lambda: 1.0)
    assert policy.delay(1, "7") == 7.0


def test_retry_after_is_capped() -> None:
    policy = RetryPolicy(retry_after_cap=10.0)
    assert policy.delay(1, "3600") == 10.0


def test_retry_after_http_date_in_the_past_means_now() -> None:
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0


def test_unparseable_retry_after_falls_back_to_backoff() -> None:
    assert parse_retry_after("soon") is None
    policy = RetryPolicy(base_delay=1.0, jitter=lambda: 1.0)
    assert policy.delay(2, "soon") == 2.0


def test_server_message_prefers_error_message() -> None:
    body = b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'
    assert server_message(body) == "slow down"


def test_server_message_falls_back_to_text() -> None:
    assert server_message(b"<html>Bad Gateway</html>") == "<html>Bad Gateway</html>"
    assert server_message(b'{"error": "model not found"}') == "model not found"
    assert server_message(b"") == "(empty response body)"
