"""The early face's answers equal the SDK server's, for every handshake protocol version.

The face (backend/early.py) answers before the SDK loads; the SDK server answers the same
requests once it is up. Each request is sent to both, in-process, and the answers compared
as JSON: a change on either side (ours or the SDK's) fails here, not at a host.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from launcher.backend import catalog
from launcher.backend.early import EarlyAnswers
from launcher.backend.pool import SubagentManager
from launcher.backend.server import SubagentServer
from launcher.backend.tasks.store import TaskStore
from launcher.backend.tasks.wire import install_tasks

AGENTS = {
    "triage.md": "---\nname: triage\ndescription: Triage open issues.\n---\nYou triage.\n",
    "writer.md": "---\nname: writer\ndescription: Writes   the\n  release notes.\n---\nWrite.\n",
}
VERSIONS = [*HANDSHAKE_PROTOCOL_VERSIONS, "2099-01-01"]
"""Every handshake version, and one the SDK does not know (negotiated down to the latest)."""


def _config_dir(tmp_path: Path) -> Path:
    agents = tmp_path / "cfg" / "agents"
    agents.mkdir(parents=True)
    for name, text in AGENTS.items():
        (agents / name).write_text(text)
    (tmp_path / "cfg" / "mcp.json").write_text('{"mcpServers": {}}')
    return tmp_path / "cfg"


async def sdk_answers(config_dir: Path, workspace: Path, lines: list[dict[str, Any]]) -> list[Any]:
    """What serve's SDK server answers to `lines` (None for a notification)."""
    out: list[Any] = []
    async with anyio.create_task_group() as tg:
        manager = SubagentManager(
            tg,
            config_dir=config_dir,
            workspace=workspace,
            state_home=workspace / "state",
            default_model=None,
            max_concurrent=1,
            spare_workers=0,
        )
        app = SubagentServer(manager, config_dir, workspace)
        options = install_tasks(
            app.server,
            TaskStore(manager, tg),
            app.start_spawn,
            app.server.create_initialization_options(),
        )
        send, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](10)
        write_stream, receive = anyio.create_memory_object_stream[SessionMessage](10)
        tg.start_soon(app.server.run, read_stream, write_stream, options)
        for line in lines:
            message = types.jsonrpc_message_adapter.validate_python(line, by_name=False)
            await send.send(SessionMessage(message))
            if "id" in line:
                got = await receive.receive()
                out.append(
                    json.loads(got.message.model_dump_json(by_alias=True, exclude_unset=True))
                )
            else:
                out.append(None)
        await send.aclose()
        tg.cancel_scope.cancel()
    return out


def early_answers(config_dir: Path, workspace: Path, lines: list[dict[str, Any]]) -> list[Any]:
    from launcher.config.discovery import load_config

    answers = EarlyAnswers(catalog.agents_of(load_config(config_dir, cwd=workspace)))
    return [answers.answer(json.dumps(line).encode()) for line in lines]


def handshake(version: str) -> list[dict[str, Any]]:
    return [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {"sampling": {}, "roots": {"listChanged": True}},
                "clientInfo": {"name": "host", "version": "1.0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": "p-3", "method": "ping"},
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/list",
            "params": {"_meta": {"progressToken": 7}},
        },
    ]


@pytest.mark.parametrize("version", VERSIONS)
def test_early_answers_equal_the_sdk_servers(version: str, tmp_path: Path) -> None:
    config_dir = _config_dir(tmp_path)
    lines = handshake(version)
    sdk = anyio.run(sdk_answers, config_dir, tmp_path, lines)
    early = early_answers(config_dir, tmp_path, lines)
    for line, ours, theirs in zip(lines, early, sdk, strict=True):
        if "id" in line:
            assert ours == theirs, line["method"]
    tools = {t["name"]: t for t in sdk[2]["result"]["tools"]}
    assert (
        "triage: Triage open issues."
        in tools["spawn_subagent"]["inputSchema"]["properties"]["agent"]["description"]
    )


def test_the_face_knows_the_sdks_handshake_versions() -> None:
    assert catalog.HANDSHAKE_VERSIONS == tuple(HANDSHAKE_PROTOCOL_VERSIONS)


@pytest.mark.parametrize(("version", "tasks"), [("2025-06-18", False), ("2025-11-25", True)])
def test_tasks_are_offered_only_to_a_version_that_has_them(
    version: str, tasks: bool, tmp_path: Path
) -> None:
    config_dir = _config_dir(tmp_path)
    for answers in (
        anyio.run(sdk_answers, config_dir, tmp_path, handshake(version)),
        early_answers(config_dir, tmp_path, handshake(version)),
    ):
        assert ("tasks" in answers[0]["result"]["capabilities"]) is tasks
        spawn = answers[2]["result"]["tools"][0]
        assert spawn["name"] == "spawn_subagent"
        assert (spawn.get("execution") == {"taskSupport": "optional"}) is tasks


def _modern_list(declared: bool) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN_PROTOCOL_VERSIONS[-1],
        "io.modelcontextprotocol/clientInfo": {"name": "host", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": (
            {"extensions": {"io.modelcontextprotocol/tasks": {}}} if declared else {}
        ),
    }
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}


@pytest.mark.parametrize("declared", [False, True])
def test_a_modern_request_is_left_to_the_sdk_whose_tools_carry_no_execution(
    declared: bool, tmp_path: Path
) -> None:
    config_dir = _config_dir(tmp_path)
    line = _modern_list(declared)
    (answer,) = anyio.run(sdk_answers, config_dir, tmp_path, [line])
    assert answer["result"]["tools"][0]["name"] == "spawn_subagent"
    assert all("execution" not in t for t in answer["result"]["tools"])  # not in that era
    assert early_answers(config_dir, tmp_path, [line]) == [None]


def test_a_request_the_face_cannot_answer_ends_early_answers_so_none_overtakes_it() -> None:
    answers = EarlyAnswers([("general-purpose", "all")])
    lines = handshake("2025-11-25")
    call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "list_agents"}}
    assert answers.answer(json.dumps(lines[0]).encode()) is not None
    assert answers.answer(json.dumps(lines[1]).encode()) is None  # a notification: queued
    assert answers.answer(json.dumps(lines[2]).encode()) is not None
    assert answers.answer(json.dumps(call).encode()) is None
    assert answers.answer(json.dumps(lines[3]).encode()) is None  # after the call: the SDK's


RESPONSE_MEMBERS = [
    {"error": {"code": 1, "message": "x"}},
    {"error": {"code": 1, "message": "x", "data": {"a": 1}}},
    {"error": 1},
    {"result": {}},
    {"result": {"a": 1}, "error": {"code": 1, "message": "x"}},
]


@pytest.mark.parametrize("extra", RESPONSE_MEMBERS, ids=json.dumps)
@pytest.mark.parametrize("method", ["initialize", "ping", "tools/list", "tools/call"])
def test_a_request_carrying_a_response_member_is_the_sdks_to_read(
    method: str, extra: dict[str, Any]
) -> None:
    # The SDK's parser may read such a line as a response (an error, then nothing runs);
    # the face takes and answers nothing of it, so no early run or answer can differ.
    taken: list[Any] = []
    answers = EarlyAnswers([("general-purpose", "all")], take=lambda m, _: bool(taken.append(m)))
    params: dict[str, Any] = {
        "initialize": handshake("2025-11-25")[0]["params"],
        "ping": {},
        "tools/list": {},
        "tools/call": {"name": "spawn_subagent", "arguments": {"prompt": "go"}},
    }[method]
    line = {"jsonrpc": "2.0", "id": 2, "method": method, "params": params, **extra}
    if method != "initialize":
        assert answers.answer(json.dumps(handshake("2025-11-25")[0]).encode()) is not None
    assert answers.answer(json.dumps(line).encode()) is None
    assert taken == []


def test_the_sdk_reads_a_call_with_an_error_member_as_an_error_response() -> None:
    # Why the face must not take such a call: the SDK path runs nothing for it.
    call = {"name": "spawn_subagent", "arguments": {"prompt": "go"}}
    line = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}
    line["error"] = {"code": 1, "message": "x"}
    parsed = types.jsonrpc_message_adapter.validate_json(json.dumps(line))
    assert isinstance(parsed, types.JSONRPCError)
