"""The scripted model replays its YAML steps, one per complete() call."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from launcher.models.base import Message, ModelRequest
from launcher.models.scripted import ScriptedModel
from launcher.toolset.types import ToolDef

pytestmark = pytest.mark.anyio


def model_for(tmp_path: Path, text: str) -> ScriptedModel:
    path = tmp_path / "script.yaml"
    path.write_text(text, encoding="utf-8")
    return ScriptedModel.from_file(path)


def request(*tools: str, **kwargs: object) -> ModelRequest:
    return ModelRequest(
        system="sys",
        messages=[Message(role="user", content="go")],
        tools=[ToolDef(name=name) for name in tools],
        **kwargs,  # type: ignore[arg-type]
    )


async def test_call_step_issues_calls_even_for_tools_not_offered(tmp_path: Path) -> None:
    model = model_for(
        tmp_path,
        "steps:\n"
        "  - call:\n"
        "      - {tool: srv__list, args: {state: open}}\n"
        "      - {tool: never_offered}\n",
    )
    response = await model.complete(request("srv__list"))
    assert [(c.name, c.arguments) for c in response.tool_calls] == [
        ("srv__list", {"state": "open"}),
        ("never_offered", {}),
    ]
    assert response.text == ""


async def test_tool_call_ids_are_unique_across_turns(tmp_path: Path) -> None:
    model = model_for(
        tmp_path,
        "steps:\n  - call: [{tool: a}, {tool: b}]\n  - call: [{tool: a}]\n",
    )
    ids = [c.id for c in (await model.complete(request())).tool_calls]
    ids += [c.id for c in (await model.complete(request())).tool_calls]
    assert len(set(ids)) == 3


async def test_say_without_call_is_the_final_answer_and_is_streamed(tmp_path: Path) -> None:
    model = model_for(tmp_path, 'steps:\n  - say: "Two issues are open."\n')
    streamed: list[str] = []

    async def on_text(text: str) -> None:
        streamed.append(text)

    response = await model.complete(request(on_text=on_text))
    assert response.text == "Two issues are open."
    assert response.tool_calls == []
    assert streamed == ["Two issues are open."]


async def test_step_with_say_and_call_gives_text_then_calls(tmp_path: Path) -> None:
    model = model_for(tmp_path, "steps:\n  - say: looking\n    call: [{tool: ls}]\n")
    response = await model.complete(request())
    assert response.text == "looking"
    assert [c.name for c in response.tool_calls] == ["ls"]


async def test_tool_from_uses_resolve_tool(tmp_path: Path) -> None:
    model = model_for(
        tmp_path, "steps:\n  - call: [{tool_from: mcp-github/get_issue, args: {number: 1}}]\n"
    )
    seen: list[tuple[str, str]] = []

    def resolve(server: str, tool: str) -> str:
        seen.append((server, tool))
        return "resolved_name"

    response = await model.complete(request(resolve_tool=resolve))
    assert seen == [("mcp-github", "get_issue")]
    assert response.tool_calls[0].name == "resolved_name"
    assert response.tool_calls[0].arguments == {"number": 1}


async def test_tool_from_without_resolver_uses_the_naming_rule(tmp_path: Path) -> None:
    model = model_for(tmp_path, "steps:\n  - call: [{tool_from: my.server/get/issue}]\n")
    response = await model.complete(request())
    assert response.tool_calls[0].name == "my_server__get_issue"


async def test_sleep_delays_the_answer(tmp_path: Path) -> None:
    model = model_for(tmp_path, "steps:\n  - sleep: 0.2\n    say: done\n")
    started = anyio.current_time()
    response = await model.complete(request())
    assert anyio.current_time() - started >= 0.2
    assert response.text == "done"


async def test_sleep_is_cancellable(tmp_path: Path) -> None:
    model = model_for(tmp_path, "steps:\n  - sleep: 30\n    say: late\n")
    with anyio.move_on_after(0.1) as scope:
        await model.complete(request())
    assert scope.cancelled_caught


async def test_run_out_of_steps_ends_with_the_last_text_said(tmp_path: Path) -> None:
    model = model_for(tmp_path, "steps:\n  - say: first\n    call: [{tool: ls}]\n")
    await model.complete(request())
    response = await model.complete(request())
    assert response.text == "first"
    assert response.tool_calls == []


async def test_run_out_with_nothing_said_ends_with_empty_text(tmp_path: Path) -> None:
    model = model_for(tmp_path, "steps: []\n")
    response = await model.complete(request())
    assert (response.text, response.tool_calls) == ("", [])


async def test_offered_tool_names_are_recorded_per_turn(tmp_path: Path) -> None:
    model = model_for(tmp_path, "steps:\n  - call: [{tool: a}]\n  - say: end\n")
    await model.complete(request("a", "b"))
    await model.complete(request("c"))
    assert model.offered == [["a", "b"], ["c"]]
    assert model.turns == 2


async def test_args_are_fresh_copies_each_turn(tmp_path: Path) -> None:
    model = model_for(tmp_path, "steps:\n  - call: [{tool: a, args: {xs: [1]}}]\n")
    first = await model.complete(request())
    first.tool_calls[0].arguments["xs"].append(2)
    assert model.steps[0].calls[0].args == {"xs": [1]}


async def test_spec_names_the_script(tmp_path: Path) -> None:
    model = model_for(tmp_path, "steps: []\n")
    assert model.spec == f"scripted:{tmp_path / 'script.yaml'}"
