"""A stub MCP server (stdio) whose one tool asks its client for input, in both eras.

    python -m mcp_servers.asker [--pidfile F]

Tool `ask(question)`: asks the client a form elicitation, `question` as its message and
one string field `answer` (default `(default)`, so an answer taken from the defaults
shows), and returns `answer: X`, or `the user said decline|cancel`. In the handshake era
it sends `elicitation/create`; in 2026-07-28 it returns `input_required` and reads the
answer from the client's retry.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_servers._common import write_pidfile

ASK_KEY = "answer"
"""The input request's key in the 2026-07-28 era."""
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string", "default": "(default)"}},
    "required": ["answer"],
}
TOOL = types.Tool(
    name="ask",
    description="Ask the user a question and return the answer.",
    input_schema={
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
    },
)


def _text(result: types.ElicitResult) -> str:
    if result.action == "accept":
        return f"answer: {(result.content or {}).get('answer')}"
    return f"the user said {result.action}"


async def _list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[TOOL])


async def _call_tool(
    ctx: Any, params: types.CallToolRequestParams
) -> types.CallToolResult | types.InputRequiredResult:
    question = str((params.arguments or {}).get("question", "?"))
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        responses = params.input_responses or {}
        if ASK_KEY not in responses:
            request = types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=question, requested_schema=SCHEMA)
            )
            return types.InputRequiredResult(input_requests={ASK_KEY: request})
        answer = types.ElicitResult.model_validate(
            responses[ASK_KEY].model_dump(by_alias=True, exclude_none=True)
        )
    else:
        answer = await ctx.session.elicit_form(question, SCHEMA, related_request_id=ctx.request_id)
    return types.CallToolResult(content=[types.TextContent(type="text", text=_text(answer))])


async def serve() -> None:
    server: Server[Any] = Server("asker", on_list_tools=_list_tools, on_call_tool=_call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main(argv: list[str] | None = None) -> None:
    """Entry point."""
    import warnings

    warnings.simplefilter("ignore")  # the SDK's deprecation notes are noise on stderr
    parser = argparse.ArgumentParser(prog="python -m mcp_servers.asker")
    parser.add_argument("--pidfile", help="write this process's pid here")
    args = parser.parse_args(argv)
    if args.pidfile:
        write_pidfile(Path(args.pidfile))
    anyio.run(serve)


if __name__ == "__main__":
    main()
