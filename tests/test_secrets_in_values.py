"""Secrets a variable's name does not announce: OTLP exporter headers, URL passwords."""

from __future__ import annotations

import pytest

from launcher.procs.hidden import handed_secrets
from launcher.secrets import MASK, LiveMask, process_secrets, public_environment

OTLP = "authorization=Bearer otlp-bearer-0123456789,x-api-key=otlp-key-abcdef0123"


def test_otlp_header_variables_never_reach_the_shell() -> None:
    env = {
        "OTEL_EXPORTER_OTLP_HEADERS": OTLP,
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-api-key=traces-key-0123456789",
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
    }
    assert public_environment(env) == {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}


def test_each_otlp_header_value_is_masked_alone() -> None:
    env = {"OTEL_EXPORTER_OTLP_HEADERS": OTLP + ",x-tenant=short"}
    mask = LiveMask(process_secrets(env))
    text = "key otlp-key-abcdef0123 bearer otlp-bearer-0123456789 all " + OTLP
    masked = mask.text(text)
    assert "otlp-key" not in masked and "otlp-bearer" not in masked, masked
    assert masked.count(MASK) >= 3
    # A header value under the minimum length is left alone, as every short secret is.
    assert mask.text("tenant short") == "tenant short"


def test_url_encoded_otlp_header_values_are_masked_decoded_too() -> None:
    env = {"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "authorization=Basic%20dXNlcjpwYXNzd29yZA%3D%3D"}
    mask = LiveMask(process_secrets(env))
    assert mask.text("it is dXNlcjpwYXNzd29yZA==") == f"it is {MASK}"


def test_otlp_headers_travel_with_the_sealed_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", OTLP)
    assert handed_secrets()["OTEL_EXPORTER_OTLP_HEADERS"] == OTLP


def test_a_url_userinfo_password_is_masked() -> None:
    env = {
        "HTTPS_PROXY": "http://me:proxy-pass-0123@proxy.example:3128",
        "DATABASE_URL": "postgres://app:db%40pass-4567@db.example/app",
        "SHORT_URL": "http://me:tiny@host/",
        "PLAIN_URL": "https://user@example.com/path",
    }
    mask = LiveMask(process_secrets(env))
    out = mask.text("\n".join(f"{k}={v}" for k, v in env.items()) + "\ndecoded db@pass-4567")
    assert "proxy-pass-0123" not in out and "db%40pass-4567" not in out, out
    assert "db@pass-4567" not in out, out
    # The rest of the URL stays readable; a short password or none masks nothing.
    assert "http://me:****@proxy.example:3128" in out, out
    assert "http://me:tiny@host/" in out and "https://user@example.com/path" in out, out
    assert mask.text("me app user") == "me app user"


def test_otlp_headers_are_no_plain_ray_task_argument(monkeypatch: pytest.MonkeyPatch) -> None:
    from launcher.engines.ray_node import handed_env

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", OTLP)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", OTLP)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "svc")
    handed = handed_env()
    assert handed["OTEL_SERVICE_NAME"] == "svc"
    assert not any("HEADERS" in name for name in handed), handed
