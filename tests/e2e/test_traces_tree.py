"""The span tree of one session with real MCP servers, on the OTel SDK's in-memory exporter.

A driver process (trace_driver.py) runs a session against the lazy stub in both protocol
eras with a scripted model: `invoke_agent` holds one `connect {server}` per server (the
SDK's start-up requests under it), the chat and execute_tool spans, the SDK's own
`tools/call` client span under its execute_tool span (whose id the server receives in
`_meta.traceparent`), a vetoed call with no MCP span, and the late tool's re-list as a
`tools/list_changed` event.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.conftest import RUN_LIMIT_S, cli_env, legacy_stub, stub, write_config
from tests.e2e.spawn_support import call_log

AGENT = """---
name: prober
tools: ext:modern, ext:legacy
disallowed_tools: ext:modern/sleep
---
Probe agent.
"""

SCRIPT = """
steps:
  - call:
      - {tool: modern__echo, args: {text: hi}}
      - {tool: legacy__echo, args: {text: old}}
      - {tool: modern__sleep, args: {seconds: 0}}
  - say: done
"""


def _spans(tmp_path: Path) -> tuple[list[dict[str, Any]], Path]:
    log = tmp_path / "modern.calls"
    config = write_config(
        tmp_path / "cfg",
        {
            "modern": stub("lazy", "--at", "1:late", "--call-log", str(log)),
            "legacy": legacy_stub("lazy"),
        },
        {"prober": AGENT},
    )
    script = tmp_path / "s.yaml"
    script.write_text(SCRIPT)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.e2e.trace_driver",
            str(config),
            str(script),
            "prober",
            "modern__late",
        ],
        capture_output=True,
        text=True,
        env=cli_env(tmp_path / "state"),
        cwd=Path(__file__).resolve().parents[2],
        timeout=RUN_LIMIT_S,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout), log


def _one(spans: list[dict[str, Any]], name: str) -> dict[str, Any]:
    found = [s for s in spans if s["name"] == name]
    assert len(found) == 1, (name, [s["name"] for s in spans])
    return found[0]


def _children(spans: list[dict[str, Any]], parent: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in spans if s["parent_id"] == parent["span_id"]]


def test_one_session_gives_the_tree_of_the_conventions(tmp_path: Path) -> None:
    spans, log = _spans(tmp_path)
    root = _one(spans, "invoke_agent prober")
    assert root["parent_id"] == "" and root["attributes"]["gen_ai.agent.name"] == "prober"
    assert {s["trace_id"] for s in spans} == {root["trace_id"]}  # one trace, nothing orphaned

    # connect {server}: one per server, whatever its era, under the session's span
    for server, era in (("modern", "2026-07-28"), ("legacy", "2025-11-25")):
        connect = _one(spans, f"connect {server}")
        assert connect["parent_id"] == root["span_id"]
        assert connect["attributes"]["subagent.server"] == server
        assert connect["attributes"]["mcp.protocol.version"] == era
        assert connect["attributes"]["network.transport"] == "pipe"
        assert connect["attributes"]["subagent.tools"] >= 2
        start_up = {s["attributes"].get("mcp.method.name") for s in _children(spans, connect)}
        assert "tools/list" in start_up, (server, start_up)
    legacy_start = _children(spans, _one(spans, "connect legacy"))
    assert "initialize" in {s["attributes"].get("mcp.method.name") for s in legacy_start}

    # execute_tool {name}, the SDK's tools/call client span its child
    echo = _one(spans, "execute_tool modern__echo")
    assert echo["parent_id"] == root["span_id"]
    assert echo["attributes"]["subagent.server"] == "modern"
    assert echo["attributes"]["subagent.tool"] == "echo"
    assert echo["attributes"]["subagent.vetoed"] is False and echo["status"] == "UNSET"
    (mcp_call,) = _children(spans, echo)
    assert mcp_call["attributes"]["mcp.method.name"] == "tools/call"
    assert mcp_call["kind"] == "CLIENT" and mcp_call["scope"] == "mcp-python-sdk"
    (legacy_call,) = _children(spans, _one(spans, "execute_tool legacy__echo"))
    assert legacy_call["attributes"]["mcp.method.name"] == "tools/call"

    # the server got that span as its parent, in params._meta
    (received,) = [c for c in call_log(log) if c["tool"] == "echo"]
    traceparent = received["meta"]["traceparent"]
    assert traceparent.startswith(f"00-{root['trace_id']}-{mcp_call['span_id']}-")

    # a vetoed call: error status, and nothing reached a server
    vetoed = _one(spans, "execute_tool modern__sleep")
    assert vetoed["attributes"]["subagent.vetoed"] is True
    assert vetoed["status"] == "ERROR"
    assert _children(spans, vetoed) == []
    assert [c["tool"] for c in call_log(log)] == ["echo"]

    # the late tool's re-list: an event on the session's span
    changes = [attrs for name, attrs in root["events"] if name == "tools/list_changed"]
    assert {"subagent.server": "modern", "subagent.tools.added": ["modern__late"]}.items() <= (
        changes[0].items()
    ), changes

    # chat {model} for each model request, and the run's end on the session's span
    assert len([s for s in spans if s["name"].startswith("chat ")]) == 2
    assert root["attributes"]["subagent.status"] == "completed"
    assert root["attributes"]["subagent.tool_calls"] == 3
