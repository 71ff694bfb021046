"""A sub-agent's MCP server asks for input, and the host answers: through `input_required`
(2026-07-28: a foreground call's retry, or a task's tasks/get + tasks/update) and through
`elicitation/create` (2025-11-25: on the foreground call, or on tasks/result). With no way
to ask, the worker answers as it always has (the form's defaults).

The asker stub asks "What is your name?" and returns `answer: NAME`; the session's record
shows what the sub-agent got.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.serve_http_support import (
    LIMIT_S,
    http_client,
    http_config,
    http_serve,
    task_until,
    tool_results,
)
from tests.e2e.serve_tasks_support import (
    CreatedTask,
    StatusLog,
    TaskObserver,
    legacy_task_call,
    request,
)

pytestmark = pytest.mark.e2e

TASKS = "io.modelcontextprotocol/tasks"
QUESTION = "What is your name?"


def ask_args(tmp_path: Path) -> dict[str, Any]:
    return {"prompt": "go", "ext": ["asker"], "model": f"scripted:{tmp_path / 'ask.yaml'}"}


class Host:
    """A host that answers each elicitation with a name, and remembers what it was asked."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.asked: list[dict[str, Any]] = []

    async def answer(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.model_dump(by_alias=True, exclude_none=True))
        return types.ElicitResult(action="accept", content={"answer": self.name})


@pytest.mark.anyio
async def test_modern_foreground_call_gets_input_required_and_its_retry_answers(
    tmp_path: Path,
) -> None:
    host = Host("Ada")
    with http_serve(tmp_path) as serve, anyio.fail_after(LIMIT_S):
        # The SDK client retries an input_required call itself, with the callback's answers.
        async with http_client(
            serve.url, mode="2026-07-28", elicitation_callback=host.answer
        ) as client:
            done = await client.call_tool("spawn_subagent", ask_args(tmp_path))
    assert done.content[0].text == "asked"
    assert [a["message"] for a in host.asked] == [QUESTION]
    assert tool_results(serve.home, done.structured_content["session_id"]) == ["answer: Ada"]


@pytest.mark.anyio
async def test_modern_input_required_is_the_raw_wire_result_with_sealed_state(
    tmp_path: Path,
) -> None:
    with http_serve(tmp_path) as serve, anyio.fail_after(LIMIT_S):
        async with http_client(
            serve.url, mode="2026-07-28", elicitation_callback=Host("x").answer
        ) as client:
            first = await client.session.call_tool(
                "spawn_subagent", ask_args(tmp_path), allow_input_required=True
            )
            assert isinstance(first, types.InputRequiredResult)
            ((key, asked),) = first.input_requests.items()
            assert asked.method == "elicitation/create"
            assert asked.params.message == QUESTION
            # The state is sealed: it is not the sub-agent's id in clear.
            assert first.request_state and not first.request_state.startswith("sa-")
            answer = types.ElicitResult(action="accept", content={"answer": "Lin"})
            done = await client.session.call_tool(
                "spawn_subagent",
                ask_args(tmp_path),
                input_responses={key: answer},
                request_state=first.request_state,
                allow_input_required=True,
            )
    assert isinstance(done, types.CallToolResult)
    assert done.content[0].text == "asked"
    assert tool_results(serve.home, done.structured_content["session_id"]) == ["answer: Lin"]


@pytest.mark.anyio
async def test_legacy_foreground_call_gets_an_elicitation_on_http(tmp_path: Path) -> None:
    host = Host("Grace")
    with http_serve(tmp_path) as serve, anyio.fail_after(LIMIT_S):
        async with http_client(serve.url, mode="legacy", elicitation_callback=host.answer) as c:
            done = await c.call_tool("spawn_subagent", ask_args(tmp_path))
    assert [a["message"] for a in host.asked] == [QUESTION]
    assert tool_results(serve.home, done.structured_content["session_id"]) == ["answer: Grace"]


@pytest.mark.anyio
async def test_legacy_foreground_call_gets_an_elicitation_on_stdio(tmp_path: Path) -> None:
    host = Host("Hopper")
    config = http_config(tmp_path)
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state")}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "launcher.cli", "serve", "--config-dir", str(config)],
        env=env,
        cwd=str(tmp_path),
    )
    with (tmp_path / "serve.err").open("w") as errlog, anyio.fail_after(LIMIT_S):
        async with Client(
            stdio_client(params, errlog=errlog),
            read_timeout_seconds=LIMIT_S,
            mode="legacy",
            elicitation_callback=host.answer,
        ) as client:
            done = await client.call_tool("spawn_subagent", ask_args(tmp_path))
    assert [a["message"] for a in host.asked] == [QUESTION]
    home = tmp_path / "state"
    assert tool_results(home, done.structured_content["session_id"]) == ["answer: Hopper"]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_host_that_cannot_be_asked_leaves_the_answer_to_the_worker(
    tmp_path: Path, mode: str
) -> None:
    with http_serve(tmp_path) as serve, anyio.fail_after(LIMIT_S):
        async with http_client(serve.url, mode=mode) as client:  # no elicitation capability
            done = await client.call_tool("spawn_subagent", ask_args(tmp_path))
    assert done.content[0].text == "asked"
    # What a sub-agent always did without a host: the form accepted with its defaults.
    assert tool_results(serve.home, done.structured_content["session_id"]) == ["answer: (default)"]


@pytest.mark.anyio
async def test_modern_task_waits_in_input_required_until_tasks_update_answers(
    tmp_path: Path,
) -> None:
    extension = TaskObserver(TASKS, "notifications/tasks", StatusLog(), claim=True)
    with http_serve(tmp_path) as serve, anyio.fail_after(LIMIT_S):
        async with http_client(
            serve.url,
            mode="2026-07-28",
            extensions=[extension],
            elicitation_callback=Host("unused").answer,  # declares the capability
        ) as client:
            task = await client.session.call_tool(
                "spawn_subagent", ask_args(tmp_path), allow_claimed=True
            )
            assert isinstance(task, CreatedTask)
            got = await task_until(client, task.task_id, "input_required", "completed")
            assert got["status"] == "input_required"
            ((key, asked),) = got["inputRequests"].items()
            assert asked["method"] == "elicitation/create"
            assert asked["params"]["message"] == QUESTION
            answer = {"action": "accept", "content": {"answer": "Turing"}}
            ack = await request(
                client, "tasks/update", {"taskId": task.task_id, "inputResponses": {key: answer}}
            )
            assert ack["resultType"] == "complete"
            got = await task_until(client, task.task_id, "completed", "cancelled")
    session = got["result"]["structuredContent"]["session_id"]
    assert tool_results(serve.home, session) == ["answer: Turing"]


@pytest.mark.anyio
async def test_legacy_task_asks_through_tasks_result(tmp_path: Path) -> None:
    host = Host("Lovelace")
    with http_serve(tmp_path) as serve, anyio.fail_after(LIMIT_S):
        async with http_client(serve.url, mode="legacy", elicitation_callback=host.answer) as c:
            created = await legacy_task_call(c, "spawn_subagent", ask_args(tmp_path), 60_000)
            task_id = created["task"]["taskId"]
            got = await task_until(c, task_id, "input_required", "completed", "failed")
            assert got["status"] == "input_required"
            result = await request(c, "tasks/result", {"taskId": task_id})
    assert result["content"][0]["text"] == "asked"
    (asked,) = host.asked
    assert asked["message"] == QUESTION
    assert asked["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
    session = result["structuredContent"]["session_id"]
    assert tool_results(serve.home, session) == ["answer: Lovelace"]


ASKED_SECRET = "asker-secret-0123456789abc"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_an_input_request_is_masked(tmp_path: Path, mode: str) -> None:
    # A hostile model (or server) writes a secret of serve's into the question it asks.
    script = tmp_path / "leak.yaml"
    question = f"is {ASKED_SECRET} yours?"
    script.write_text(
        "steps:\n"
        f"  - call: [{{tool: asker__ask, args: {{question: '{question}'}}}}]\n"
        "  - say: asked\n"
    )
    host = Host("Ada")
    args = {**ask_args(tmp_path), "model": f"scripted:{script}"}
    with (
        http_serve(tmp_path, env={"ASKER_SECRET": ASKED_SECRET}) as serve,
        anyio.fail_after(LIMIT_S),
    ):
        async with http_client(serve.url, mode=mode, elicitation_callback=host.answer) as client:
            done = await client.call_tool("spawn_subagent", args)
    assert done.content[0].text == "asked"
    assert [a["message"] for a in host.asked] == ["is **** yours?"]
