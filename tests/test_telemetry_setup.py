"""Export set-up from the standard variables: protocol, resource, and what it says when it
cannot export (the process's global provider is never touched here)."""

from __future__ import annotations

import sys

import pytest

from launcher.telemetry import setup

ENDPOINT = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}


def test_grpc_without_its_package_is_said_and_not_exported(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if opentelemetry-exporter-otlp-proto-grpc were not installed (the tests install it).
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.grpc.trace_exporter", None)
    assert setup.exporter({**ENDPOINT, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}) is None
    assert capsys.readouterr().err == (
        "subagent: traces: OTEL_EXPORTER_OTLP_ENDPOINT is set with protocol grpc, which needs "
        "opentelemetry-exporter-otlp-proto-grpc; traces are not exported\n"
    )


def test_the_traces_protocol_variable_wins_and_http_protobuf_is_the_default() -> None:
    assert setup.protocol({}) == "http/protobuf"
    assert setup.protocol({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}) == "grpc"
    both = {
        "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "HTTP/protobuf",
    }
    assert setup.protocol(both) == "http/protobuf"


def test_an_unknown_protocol_is_said_and_not_exported(capsys: pytest.CaptureFixture[str]) -> None:
    assert setup.exporter({**ENDPOINT, "OTEL_EXPORTER_OTLP_PROTOCOL": "carrier-pigeon"}) is None
    assert "unknown OTLP protocol 'carrier-pigeon'" in capsys.readouterr().err


def test_http_json_is_sent_as_protobuf_and_said(capsys: pytest.CaptureFixture[str]) -> None:
    exporter = setup.exporter({**ENDPOINT, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})
    assert type(exporter).__name__ == "OtlpHttpExporter"
    assert "http/json is not supported; sending http/protobuf" in capsys.readouterr().err


def test_service_name_is_subagent_unless_the_variables_name_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    monkeypatch.delenv("OTEL_RESOURCE_ATTRIBUTES", raising=False)
    assert setup.resource({}).attributes["service.name"] == "subagent"
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attributes,team=infra")
    resource = setup.resource({})
    assert resource.attributes["service.name"] == "from-attributes"
    assert resource.attributes["team"] == "infra"
    monkeypatch.setenv("OTEL_SERVICE_NAME", "my-agents")
    assert setup.resource({}).attributes["service.name"] == "my-agents"


@pytest.mark.parametrize(
    ("variables", "said"),
    [
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"}, "is not an http(s) URL"),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:99999/v1/traces"}, "Port"),
        (
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": "https://127.0.0.1:4318",
                "OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem",
            },
            "No such file",
        ),
    ],
)
def test_an_endpoint_or_certificate_that_cannot_be_used_is_said_not_raised(
    capsys: pytest.CaptureFixture[str], variables: dict[str, str], said: str
) -> None:
    assert setup.exporter(variables) is None
    err = capsys.readouterr().err
    assert err.startswith("subagent: traces: OTEL_EXPORTER_OTLP_")
    assert "traces cannot be exported" in err and said in err
