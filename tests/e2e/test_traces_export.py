"""Traces over real OTLP/HTTP to a loopback receiver: spawn, nested sub-agents, batch, signals.

The receiver (otlp_receiver.py) decodes what the launcher's exporter posts. Spans are
read once the process has exited: what the exporter had not sent by then is lost, so
every check here is also a check that the process flushed before leaving.
"""

from __future__ import annotations

import json
import signal
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import (
    RUN_LIMIT_S,
    Subagent,
    closed_port,
    signal_as_user,
    stub,
    write_config,
)
from tests.e2e.model_stub import ModelStub, openai_stream
from tests.e2e.otlp_receiver import GrpcOtlpReceiver, OtlpReceiver, named
from tests.e2e.spawn_support import call_log

pytestmark = pytest.mark.e2e

PARENT_TRACE = "0af7651916cd43dd8448eb211c80319c"
PARENT_SPAN = "b7ad6b7169203331"
TRACEPARENT = f"00-{PARENT_TRACE}-{PARENT_SPAN}-01"
SIGNAL_LIMIT_S = 30.0
"""Bounds the wait for a signalled launcher: its shutdown ladder plus the flush."""


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as server:
        yield server


def _env(receiver: OtlpReceiver, **extra: str) -> dict[str, str | None]:
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, **extra}


def _scripted(tmp_path: Path, steps: str = "  - say: done\n") -> tuple[Path, Path]:
    """A config dir without servers, and a scripted model of `steps`."""
    script = tmp_path / "s.yaml"
    script.write_text(f"steps:\n{steps}")
    return write_config(tmp_path / "cfg", {}), script


def _header(headers: dict[str, str], name: str) -> str | None:
    return next((v for k, v in headers.items() if k.lower() == name), None)


def test_spawn_exports_its_tree_under_traceparent_and_carries_it_out(
    tmp_path: Path, subagent: Subagent, model: ModelStub, receiver: OtlpReceiver
) -> None:
    log = tmp_path / "lazy.calls"
    config = write_config(tmp_path / "cfg", {"lazy": stub("lazy", "--call-log", str(log))})
    model.enqueue(
        openai_stream(tool_calls=[("c1", "lazy__echo", {"text": "hi"})]),
        openai_stream(text="all done"),
    )
    run = subagent.run(
        "spawn", "--json", "--config-dir", str(config), "--ext", "lazy",
        "--model", "openai:stub-model", "--base-url", model.openai_base, "go",
        env=_env(receiver, TRACEPARENT=TRACEPARENT),
    )  # fmt: skip
    assert run.code == 0, run.stderr
    spans = receiver.snapshot()  # the process has exited: everything was sent before
    (root,) = named(spans, "invoke_agent general-purpose")
    assert (root.trace_id, root.parent_id) == (PARENT_TRACE, PARENT_SPAN)
    assert {s.trace_id for s in spans} == {PARENT_TRACE}
    assert {s.service for s in spans} == {"subagent"}
    assert root.attributes["gen_ai.provider.name"] == "openai"
    assert root.attributes["gen_ai.usage.input_tokens"] == 20

    # The model stub saw each request's chat span as its parent.
    chats = named(spans, "chat stub-model")
    assert len(chats) == 2 and len(model.requests) == 2
    for chat in chats:
        assert chat.parent_id == root.span_id
        assert chat.attributes["gen_ai.request.model"] == "stub-model"
    sent = {_header(r.headers, "traceparent") for r in model.requests}
    assert sent == {f"00-{PARENT_TRACE}-{chat.span_id}-01" for chat in chats}

    # The MCP server saw the SDK's tools/call span (under execute_tool) in `_meta`.
    (tool,) = named(spans, "execute_tool lazy__echo")
    (mcp_call,) = [s for s in spans if s.parent_id == tool.span_id]
    assert mcp_call.attributes["mcp.method.name"] == "tools/call"
    (received,) = call_log(log)
    assert received["meta"]["traceparent"] == f"00-{PARENT_TRACE}-{mcp_call.span_id}-01"
    (connect,) = named(spans, "connect lazy")
    assert connect.parent_id == root.span_id


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_spans_arrive_when_a_signal_ends_the_run(
    tmp_path: Path, subagent: Subagent, receiver: OtlpReceiver, signum: int
) -> None:
    config, script = _scripted(
        tmp_path, "  - call: [{tool: ls, args: {}}]\n  - sleep: 600\n    say: never\n"
    )
    proc = subagent.start(
        "spawn", "--json", "--config-dir", str(config), "--model", f"scripted:{script}", "go",
        env=_env(receiver),
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        for line in proc.stdout:  # the second turn started: the model is "thinking" 600 s
            event = json.loads(line)
            if event["type"] == "turn_start" and event["turn"] == 2:
                break
        signal_as_user(proc, signum)
        code = proc.wait(timeout=SIGNAL_LIMIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 128 + signum
    spans = receiver.snapshot()
    (root,) = named(spans, "invoke_agent general-purpose")
    assert root.attributes["subagent.status"] == "interrupted"
    assert len(named(spans, "chat ")) == 2  # the one cut short too
    (ls,) = named(spans, "execute_tool ls")
    assert ls.parent_id == root.span_id


def _agent(name: str, script: Path, tools: str, extra: str = "") -> str:
    return f"---\nname: {name}\nmodel: scripted:{script}\ntools: {tools}\n{extra}---\n{name}.\n"


def test_a_nested_sub_agent_is_a_child_invoke_agent_in_the_same_trace(
    tmp_path: Path, subagent: Subagent, receiver: OtlpReceiver
) -> None:
    parent_script = tmp_path / "parent.yaml"
    parent_script.write_text(
        "steps:\n  - call: [{tool: subagent, args: {agent: child, prompt: go}}]\n  - say: ok\n"
    )
    child_script = tmp_path / "child.yaml"
    child_script.write_text("steps:\n  - call: [{tool: ls, args: {}}]\n  - say: child ok\n")
    agents = {
        "parent": _agent(
            "parent", parent_script, "subagent", "allowed_subagents: [child]\nextensions: false\n"
        ),
        "child": _agent("child", child_script, "ls"),
    }
    config = write_config(tmp_path / "cfg", {}, agents)
    run = subagent.run(
        "spawn", "--json", "--config-dir", str(config), "parent", "go", env=_env(receiver)
    )
    assert run.code == 0, run.stderr
    spans = receiver.snapshot()
    (parent,) = named(spans, "invoke_agent parent")
    (child,) = named(spans, "invoke_agent child")
    (delegation,) = named(spans, "execute_tool subagent")
    assert parent.parent_id == ""
    assert child.trace_id == parent.trace_id
    assert child.parent_id == delegation.span_id and delegation.parent_id == parent.span_id
    (child_ls,) = named(spans, "execute_tool ls")
    assert child_ls.parent_id == child.span_id


def test_batch_is_a_span_and_each_task_a_linked_trace_of_its_own(
    tmp_path: Path, subagent: Subagent, receiver: OtlpReceiver
) -> None:
    config, script = _scripted(tmp_path)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        textwrap.dedent(
            """\
            {"id": "one", "prompt": "go"}
            {"id": "two", "prompt": "go"}
            """
        )
    )
    run = subagent.run(
        "batch", str(tasks), "--config-dir", str(config), "--model", f"scripted:{script}",
        "--jobs", "2", env=_env(receiver, TRACEPARENT=TRACEPARENT),
    )  # fmt: skip
    assert run.code == 0, run.stderr
    spans = receiver.snapshot()
    (batch,) = named(spans, "batch tasks.jsonl")
    assert (batch.trace_id, batch.parent_id) == (PARENT_TRACE, PARENT_SPAN)
    assert batch.attributes["subagent.batch.completed"] == 2
    runs = named(spans, "invoke_agent general-purpose")
    assert len(runs) == 2
    for task_run in runs:
        assert task_run.parent_id == "" and task_run.trace_id != batch.trace_id
        assert task_run.links == [(batch.trace_id, batch.span_id)]
    assert runs[0].trace_id != runs[1].trace_id


def test_disabled_sdk_exports_nothing(
    tmp_path: Path, subagent: Subagent, receiver: OtlpReceiver
) -> None:
    config, script = _scripted(tmp_path)
    env = _env(receiver, OTEL_SDK_DISABLED="true")
    run = subagent.run(
        "spawn", "--config-dir", str(config), "--model", f"scripted:{script}", "go", env=env
    )
    assert run.code == 0, run.stderr
    assert receiver.posts == 0
    assert "traces" not in run.stderr


BLOCK_SDK = """
import sys


class NoOtelSdk:
    \"\"\"As if the `otel` extra were not installed: the SDK and exporters cannot be imported.\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name.startswith(("opentelemetry.sdk", "opentelemetry.exporter")):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoOtelSdk())
"""


def test_endpoint_without_the_extra_says_so_once_and_runs(
    tmp_path: Path, subagent: Subagent, receiver: OtlpReceiver
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCK_SDK)
    config, script = _scripted(tmp_path, "  - call: [{tool: ls, args: {}}]\n  - say: done\n")
    run = subagent.run(
        "spawn", "--config-dir", str(config), "--model", f"scripted:{script}", "go",
        env=_env(receiver, PYTHONPATH=str(site)),
    )  # fmt: skip
    assert run.code == 0, run.stderr
    said = [line for line in run.stderr.splitlines() if "traces" in line]
    assert said == [
        "subagent: traces: OTEL_EXPORTER_OTLP_ENDPOINT is set, but exporting needs the "
        "OpenTelemetry SDK: pip install 'subagent[otel]'"
    ]
    assert receiver.posts == 0


def test_help_with_an_endpoint_set_imports_nothing_of_opentelemetry(
    subagent: Subagent, receiver: OtlpReceiver
) -> None:
    proc = subprocess.run(
        [*subagent.argv(["--help"])],
        env={**subagent.env(_env(receiver)), "PYTHONPROFILEIMPORTTIME": "1"},
        capture_output=True,
        text=True,
        timeout=RUN_LIMIT_S,
        cwd=subagent.cwd,
    )
    assert proc.returncode == 0, proc.stderr
    imported = [line for line in proc.stderr.splitlines() if "| opentelemetry" in line]
    assert imported == []
    assert receiver.posts == 0


def test_a_collector_that_is_down_is_said_once_and_costs_the_run_nothing(
    tmp_path: Path, subagent: Subagent
) -> None:
    config, script = _scripted(tmp_path, "  - call: [{tool: ls, args: {}}]\n  - say: done\n")
    with closed_port() as port:
        run = subagent.run(
            "spawn", "--config-dir", str(config), "--model", f"scripted:{script}", "go",
            env={"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}"},
        )  # fmt: skip
    assert run.code == 0, run.stderr
    said = [line for line in run.stderr.splitlines() if line.startswith("subagent: traces:")]
    assert len(said) == 1, run.stderr
    assert "later trouble exporting is not shown" in said[0]


def test_spawn_exports_its_tree_over_grpc_when_asked(tmp_path: Path, subagent: Subagent) -> None:
    log = tmp_path / "lazy.calls"
    config = write_config(tmp_path / "cfg", {"lazy": stub("lazy", "--call-log", str(log))})
    script = tmp_path / "s.yaml"
    script.write_text(
        "steps:\n"
        "  - call: [{tool: lazy__echo, args: {text: hi}}, {tool: ls, args: {}}]\n"
        "  - say: done\n"
    )
    with GrpcOtlpReceiver() as receiver:
        run = subagent.run(
            "spawn", "--config-dir", str(config), "--ext", "lazy",
            "--model", f"scripted:{script}", "go",
            env=_env(receiver, OTEL_EXPORTER_OTLP_PROTOCOL="grpc", TRACEPARENT=TRACEPARENT),
        )  # fmt: skip
        assert run.code == 0, run.stderr
        assert "traces" not in run.stderr
        spans = receiver.snapshot()  # the process has exited: everything was sent before
    assert receiver.posts >= 1
    (root,) = named(spans, "invoke_agent general-purpose")
    assert (root.trace_id, root.parent_id) == (PARENT_TRACE, PARENT_SPAN)
    assert {s.trace_id for s in spans} == {PARENT_TRACE}
    assert {s.service for s in spans} == {"subagent"}
    (connect,) = named(spans, "connect lazy")
    (echo,) = named(spans, "execute_tool lazy__echo")
    (ls,) = named(spans, "execute_tool ls")
    chats = named(spans, "chat ")
    assert len(chats) == 2
    for child in (connect, echo, ls, *chats):
        assert child.parent_id == root.span_id
    (mcp_call,) = [s for s in spans if s.parent_id == echo.span_id]
    assert mcp_call.attributes["mcp.method.name"] == "tools/call"
    assert mcp_call.scope == "mcp-python-sdk"


def test_a_tool_named_after_a_secret_leaves_no_form_of_it_in_any_span(
    tmp_path: Path, subagent: Subagent, receiver: OtlpReceiver
) -> None:
    from launcher.secrets import secret_forms

    secret = "Zq7TraceToolSecret9xYw3kP"
    # The server's tool is named after a `${VAR}` of its own config: the session masks it.
    config = write_config(tmp_path / "cfg", {"srv": stub("lazy", "--at", "0:t${TRACE_TOOL_WORD}")})
    script = tmp_path / "s.yaml"
    script.write_text(f"steps:\n  - call: [{{tool: srv__t{secret}, args: {{}}}}]\n  - say: done\n")
    run = subagent.run(
        "spawn", "--json", "--config-dir", str(config), "--ext", "srv",
        "--model", f"scripted:{script}", "go", env=_env(receiver, TRACE_TOOL_WORD=secret),
    )  # fmt: skip
    assert run.code == 0, run.stderr
    spans = receiver.snapshot()
    assert named(spans, "execute_tool ") and named(spans, "MCP send tools/call")  # both traced
    text = "\n".join(
        json.dumps([s.name, s.attributes, s.events, s.status_message], default=str) for s in spans
    )
    leaked = sorted(form for form in secret_forms(secret) if form in text)
    assert leaked == [], f"secret forms in spans: {leaked}"
