"""Whether a process traces: the standard variables, read without importing OpenTelemetry."""

from __future__ import annotations

from collections.abc import Mapping

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
"""Either one switches export on (the traces-only one wins where both are set)."""
FLUSH_LIMIT_S = 5.0
"""How long a process that ends may spend sending its last spans (5 s, however it ends)."""


def wanted(env: Mapping[str, str]) -> bool:
    """Whether `env` asks for traces: an endpoint set, the SDK not disabled, no `none` exporter."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if env.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return False
    return any(env.get(name, "").strip() for name in ENDPOINT_VARIABLES)


def endpoint_variable(env: Mapping[str, str]) -> str:
    """The name of the endpoint variable that is set (for messages)."""
    return next(
        (name for name in ENDPOINT_VARIABLES if env.get(name, "").strip()), ENDPOINT_VARIABLES[-1]
    )
