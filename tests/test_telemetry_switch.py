"""The switch: only the standard variables turn traces on, and off costs no import.

`Off` (every seam's no-op) and `Tracing` keep the same methods, so a seam written against
one runs against the other.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

from launcher.telemetry import Off
from launcher.telemetry.spans import Tracing
from launcher.telemetry.switch import wanted

ENDPOINT = "http://127.0.0.1:4318"


@pytest.mark.parametrize(
    ("env", "on"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{ENDPOINT}/v1/traces"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "  "}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_SDK_DISABLED": "true"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_SDK_DISABLED": "TRUE "}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_SDK_DISABLED": "false"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_TRACES_EXPORTER": "none"}, False),
        ({"OTEL_SERVICE_NAME": "x", "TRACEPARENT": "00-1-2-01"}, False),  # no endpoint
    ],
)
def test_only_an_endpoint_not_disabled_turns_traces_on(env: dict[str, str], on: bool) -> None:
    assert wanted(env) is on


def _public(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in vars(cls).items()
        if callable(member) and not name.startswith("_")
    }


def test_off_and_tracing_offer_the_same_seams() -> None:
    off, on = _public(Off), _public(Tracing)
    assert set(off) == set(on)
    for name, signature in off.items():
        assert list(signature.parameters) == list(on[name].parameters), name


def _modules_after_start(env: dict[str, str]) -> list[str]:
    """The opentelemetry modules a fresh interpreter holds after `start()` under `env`."""
    code = (
        "import json, sys\n"
        "from launcher import telemetry\n"
        "t = telemetry.start()\n"
        "otel = sorted(m for m in sys.modules if m.startswith('opentelemetry'))\n"
        "print(json.dumps([t.on, otel]))\n"
    )
    clean = {"PATH": "/usr/bin:/bin", **env}
    out = subprocess.run(
        [sys.executable, "-c", code], env=clean, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    on, modules = json.loads(out.stdout)
    assert on is False
    return list(modules)


def test_off_imports_nothing_of_opentelemetry() -> None:
    assert _modules_after_start({}) == []
    disabled = {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_SDK_DISABLED": "true"}
    assert _modules_after_start(disabled) == []


def test_exporting_over_http_loads_no_protobuf_runtime_nor_otlp_exporter() -> None:
    """The OTLP/HTTP path writes its protobuf itself and posts with the stdlib: of the `otel`
    extra only the SDK is loaded (the exporter package and `requests` cost ~0.1 s)."""
    code = (
        "import json, sys\n"
        "from launcher import telemetry\n"
        "t = telemetry.start()\n"
        "heavy = ('opentelemetry.exporter', 'opentelemetry.proto', 'google.protobuf',\n"
        "         'requests', 'urllib3')\n"
        "print(json.dumps([t.on, sorted(m for m in sys.modules if m.startswith(heavy))]))\n"
        "telemetry.shutdown(0.1)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    on, heavy = json.loads(out.stdout)
    assert on is True
    assert heavy == []
