"""A conformance-suite client built on the project's own bridge, not a bare SDK client.

`npx conformance client --command "python tests/e2e/conformance_client.py" --scenario S`
appends the scenario server's URL to the command. This program connects through
`McpConnection` (streamable HTTP), lists the tools, calls each one with arguments
made from its input schema (elicitation is answered by the bridge with the
schema's defaults) and exits 0 when every call returned a non-error result.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from launcher.auth.tokens import TokenStore
from launcher.bridge.connection import McpConnection
from launcher.config.types import ServerSpec
from launcher.events import Event
from launcher.toolset.types import ToolDef

CALL_TIMEOUT_S = 120.0
"""Bounds a hung call only (sse-retry needs ~0.5 s of reconnect delay, elicitation a round
trip): the suite's checks judge the timing, not this clock."""
STARTUP_TIMEOUT_S = 120.0
"""Bounds a hung connect plus first tools/list against the suite's local server."""

SAMPLES: dict[str, Any] = {
    "string": "conformance",
    "integer": 2,
    "number": 3,
    "boolean": True,
    "array": [],
    "object": {},
}


def sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a tool: each property's default, else an enum member, else a typed sample."""
    args: dict[str, Any] = {}
    properties = schema.get("properties") or {}
    for name, prop in properties.items():
        if not isinstance(prop, dict):
            continue
        if "default" in prop:
            args[name] = prop["default"]
        elif prop.get("enum"):
            args[name] = prop["enum"][0]
        else:
            kind = prop.get("type", "string")
            args[name] = SAMPLES.get(kind if isinstance(kind, str) else "string", "conformance")
    return args


def log(record: dict[str, Any]) -> None:
    """One JSON line on stderr: the suite keeps the client's output for post-mortems."""
    sys.stderr.write(json.dumps(record, default=str) + "\n")
    sys.stderr.flush()


async def run(url: str, state_dir: Path) -> int:
    """Connect to `url`, call every listed tool; 0 when all calls succeeded."""
    spec = ServerSpec(
        name="conformance",
        type="http",
        url=url,
        startup_timeout=STARTUP_TIMEOUT_S,
        tool_timeout=CALL_TIMEOUT_S,
    )
    failures, _ = await call_every_tool(spec, state_dir)
    return 1 if failures else 0


async def call_every_tool(
    spec: ServerSpec,
    state_dir: Path,
    auth_store: TokenStore | None = None,
    log: Callable[[dict[str, Any]], None] = log,
) -> tuple[int, str | None]:
    """One connection to `spec`: call each listed tool with sample arguments, `log` each event
    and result. Returns the number of failures (a failed connection counts one) and the
    connection's error."""
    tools: list[ToolDef] = []

    async def on_tools(defs: list[ToolDef]) -> None:
        tools[:] = defs

    async def emit(event: Event) -> None:
        log(event.to_dict())

    connection = McpConnection(
        spec,
        on_tools=on_tools,
        emit=emit,
        log_path=state_dir / "conformance.log",
        workspace=state_dir,
        auth_store=auth_store,
    )
    failures = 0
    async with anyio.create_task_group() as tg:
        tg.start_soon(connection.run)
        await connection.ready.wait()
        if connection.state != "connected":
            log({"error": f"not connected: {connection.error}"})
            failures += 1
        for tool in list(tools) if connection.state == "connected" else []:
            args = sample_arguments(tool.input_schema)
            result = await connection.call(tool.name, args)
            log(
                {
                    "tool": tool.name,
                    "arguments": args,
                    "is_error": result.is_error,
                    "content": result.content,
                }
            )
            failures += int(result.is_error)
        connection.close()
    return failures, connection.error


def main(argv: list[str]) -> int:
    """Entry point: the server URL is the last argument."""
    if len(argv) < 2:
        sys.stderr.write("usage: conformance_client.py URL\n")
        return 2
    with tempfile.TemporaryDirectory(prefix="subagent-conformance-") as state:
        return anyio.run(run, argv[-1], Path(state))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
