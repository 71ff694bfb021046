"""A session's spans, in process: invoke_agent over chat and execute_tool, by the conventions.

A real Session and AgentLoop with the scripted model and built-in tools (no MCP server:
the SDK's spans and connect spans are e2e, tests/e2e/test_traces_tree.py), recorded by the
OTel SDK's in-memory exporter.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from launcher.assemble import assemble_session, plan_run, run_agent
from launcher.config.discovery import load_config
from launcher.run_plan import ModelChoice
from tests.telemetry_support import (
    all_text,
    named,
    parent_of,
    recording,
    span_id,
    trace_id,
    traceparent,
    write_scripted,
)

SCRIPT = """
steps:
  - call:
      - {tool: ls, args: {path: .}}
      - {tool: no_such_tool, args: {}}
  - call: [{tool: bash, args: {command: "echo TP=$TRACEPARENT"}}]
  - say: all done
"""


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUBAGENT_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("SUBAGENT_STORE", "0")
    monkeypatch.setenv("SUBAGENT_SANDBOX", "off")


async def _run(tmp_path: Path, script: str, *, agent: str = "general-purpose") -> str:
    config_dir, path = write_scripted(tmp_path, script)
    config = load_config(config_dir, cwd=tmp_path)
    plan = plan_run(config, agent, workspace=tmp_path, model=ModelChoice(f"scripted:{path}"))
    status = await run_agent(assemble_session(plan), "go")
    return str(status)


@pytest.mark.anyio
async def test_session_is_an_invoke_agent_span_over_chat_and_execute_tool(tmp_path: Path) -> None:
    with recording() as exporter:
        assert await _run(tmp_path, SCRIPT) == "completed"
    spans = exporter.get_finished_spans()
    (root,) = named(spans, "invoke_agent ")
    assert root.name == "invoke_agent general-purpose"
    assert root.parent is None and root.kind is SpanKind.INTERNAL
    attributes = dict(root.attributes or {})
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["gen_ai.agent.name"] == "general-purpose"
    session_id = attributes["gen_ai.agent.id"]
    assert session_id and attributes["gen_ai.conversation.id"] == session_id
    assert attributes["gen_ai.provider.name"] == "scripted"
    assert attributes["subagent.status"] == "completed"
    assert attributes["subagent.turns"] == 3 and attributes["subagent.tool_calls"] == 3
    assert attributes["gen_ai.usage.input_tokens"] == 0
    assert root.status.status_code is StatusCode.UNSET

    chats = named(spans, "chat ")
    assert len(chats) == 3
    for chat in chats:
        assert chat.kind is SpanKind.CLIENT
        assert parent_of(chat) == span_id(root) and trace_id(chat) == trace_id(root)
        assert chat.attributes is not None
        assert chat.attributes["gen_ai.operation.name"] == "chat"
        assert chat.attributes["gen_ai.provider.name"] == "scripted"
        assert chat.attributes["gen_ai.request.model"] == str(tmp_path / "script.yaml")
    reasons = [tuple(c.attributes["gen_ai.response.finish_reasons"]) for c in chats]  # type: ignore[index]
    assert reasons == [("tool_call",), ("tool_call",), ("stop",)]

    tools = {s.attributes["gen_ai.tool.name"]: s for s in named(spans, "execute_tool ")}  # type: ignore[index]
    assert set(tools) == {"ls", "no_such_tool", "bash"}
    for name, span in tools.items():
        assert span.name == f"execute_tool {name}"
        assert parent_of(span) == span_id(root)
        assert span.attributes is not None
        assert span.attributes["gen_ai.operation.name"] == "execute_tool"
        assert span.attributes["gen_ai.tool.call.id"]
    ls = tools["ls"].attributes
    assert ls is not None and ls["subagent.tool"] == "ls" and ls["subagent.vetoed"] is False
    assert "subagent.server" not in ls  # a built-in has no server
    assert tools["ls"].status.status_code is StatusCode.UNSET


@pytest.mark.anyio
async def test_a_vetoed_call_is_an_execute_tool_span_with_error_status(tmp_path: Path) -> None:
    with recording() as exporter:
        await _run(tmp_path, SCRIPT)
    (vetoed,) = [s for s in named(exporter.get_finished_spans(), "execute_tool no_such_tool")]
    assert vetoed.attributes is not None
    assert vetoed.attributes["subagent.vetoed"] is True
    assert vetoed.attributes["subagent.veto_reason"] == "not offered this turn"
    assert vetoed.attributes["error.type"] == "tool_error"
    assert vetoed.status.status_code is StatusCode.ERROR
    # Nothing ran under it: no child span at all.
    children = [s for s in exporter.get_finished_spans() if parent_of(s) == span_id(vetoed)]
    assert children == []


def _bash_output(tmp_path: Path) -> str:
    """What the bash call returned, from the session's own event record."""
    (record,) = list((tmp_path / "state").rglob("events.jsonl"))
    events = [json.loads(line) for line in record.read_text().splitlines()]
    (result,) = [e for e in events if e["type"] == "tool_result" and e["name"] == "bash"]
    return str(result["content"]).strip()


@pytest.mark.anyio
async def test_a_shell_command_gets_traceparent_of_its_tool_call(tmp_path: Path) -> None:
    with recording() as exporter:
        await _run(tmp_path, SCRIPT)
    (bash,) = named(exporter.get_finished_spans(), "execute_tool bash")
    assert _bash_output(tmp_path).startswith(f"TP={traceparent(bash)}-")


@pytest.mark.anyio
async def test_without_traces_a_shell_command_gets_no_traceparent(tmp_path: Path) -> None:
    assert os.environ.get("TRACEPARENT") is None
    await _run(tmp_path, SCRIPT)
    assert _bash_output(tmp_path) == "TP="


@pytest.mark.anyio
async def test_content_stays_out_of_spans_unless_asked(tmp_path: Path) -> None:
    with recording(content=False) as exporter:
        await _run(tmp_path, SCRIPT)
    text = all_text(exporter.get_finished_spans())
    for key in (
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    ):
        assert key not in text
    assert "all done" not in text  # the final answer is content


SECRET_SCRIPT = """
steps:
  - call: [{tool: bash, args: {command: "echo the key is kq8Zr2vLm9XcT4wPn7"}}]
  - say: "I saw kq8Zr2vLm9XcT4wPn7 and nothing else"
"""


@pytest.mark.anyio
async def test_content_when_asked_is_there_and_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEPLOY_API_TOKEN", "kq8Zr2vLm9XcT4wPn7")  # a secret-named variable
    with recording(content=True) as exporter:
        await _run(tmp_path, SECRET_SCRIPT)
    spans = exporter.get_finished_spans()
    assert "kq8Zr2vLm9XcT4wPn7" not in all_text(spans)
    (bash,) = named(spans, "execute_tool bash")
    assert bash.attributes is not None
    assert "echo the key is ****" in str(bash.attributes["gen_ai.tool.call.arguments"])
    assert "the key is ****" in str(bash.attributes["gen_ai.tool.call.result"])
    last = named(spans, "chat ")[-1]
    assert last.attributes is not None
    assert '"I saw **** and nothing else"' in str(last.attributes["gen_ai.output.messages"])
    assert '"role":"user"' in str(last.attributes["gen_ai.input.messages"])
    assert '"type":"tool_call_response"' in str(last.attributes["gen_ai.input.messages"])
    assert "gen_ai.system_instructions" in last.attributes
