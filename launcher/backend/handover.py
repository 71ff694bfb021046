"""The hand-over from the early face to the SDK server: the streams `Server.run` reads and writes.

In place of the SDK's `stdio_server()`: the early face already owns the wire. The SDK server
first gets the `initialize` the face answered (so its session knows the client's version and
capabilities; that answer is dropped, the host has one), then every queued line and every
live one, in arrival order.

The replay is kept out of the host's id space by time, not by choosing an id: no host line
reaches the SDK until the replay's answer has come back, so the one answer dropped is the
replay's whatever ids the host uses (a host may send any string or integer, so no value of
its own would do).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from launcher.backend.early import EarlyFace

log = logging.getLogger(__name__)

REPLAY_ID = "subagent-early-initialize"
"""The id of the replayed `initialize`; a host may use it too (see the module's docstring)."""


def _replayed(request: dict[str, Any]) -> SessionMessage:
    message = {**request, "id": REPLAY_ID}
    return SessionMessage(types.jsonrpc_message_adapter.validate_python(message, by_name=False))


def _is_replay_answer(message: Any) -> bool:
    return isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and (
        message.id == REPLAY_ID
    )


@asynccontextmanager
async def early_streams(face: EarlyFace) -> AsyncIterator[tuple[Any, Any]]:
    """(read_stream, write_stream) for `Server.run`, fed from and written to the early face."""
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    replay_out = anyio.Event()  # the SDK answered the replay (set at once when there is none)

    async def pump_in() -> None:
        async with read_writer:
            answered = await anyio.to_thread.run_sync(face.hand_over)
            if answered is None:
                replay_out.set()
            else:
                await read_writer.send(_replayed(answered))
                await replay_out.wait()  # until then no host request is in the SDK
            while True:
                line = await anyio.to_thread.run_sync(face.lines.get, abandon_on_cancel=True)
                if line is None:
                    return
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception as exc:  # a malformed line: the SDK treats it as from its stdio
                    refusal = _refusal(line)
                    if refusal is None:
                        await read_writer.send(exc)
                    else:  # a request the SDK would never answer: its caller waits no more
                        await anyio.to_thread.run_sync(face.write, refusal)
                    continue
                await read_writer.send(SessionMessage(message))

    async def pump_out() -> None:
        async with write_reader:
            async for session_message in write_reader:
                message = session_message.message
                if not replay_out.is_set() and _is_replay_answer(message):
                    replay_out.set()
                    if isinstance(message, types.JSONRPCError):
                        # The face answered an initialize the SDK refuses: never seen in
                        # the equality tests; logged so a future SDK change is visible.
                        log.error("the SDK refused the replayed initialize: %s", message.error)
                    continue
                data = message.model_dump_json(by_alias=True, exclude_unset=True)
                await anyio.to_thread.run_sync(face.write, data.encode() + b"\n")

    async with anyio.create_task_group() as tg:
        tg.start_soon(pump_in)
        tg.start_soon(pump_out)
        yield read_stream, write_stream
        tg.cancel_scope.cancel()


def _refusal(line: str) -> bytes | None:
    """For valid JSON the SDK cannot take (a lone surrogate escape, which its parser
    refuses) that is a request with an id: a parse error under that id, as HTTP answers.
    None for anything else (the SDK's own handling stands)."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or "method" not in message:
        return None
    rid = message.get("id")
    if isinstance(rid, bool) or not isinstance(rid, str | int):
        return None
    error = {"code": -32700, "message": "Parse error: not a valid JSON-RPC message"}
    answer = {"jsonrpc": "2.0", "id": rid, "error": error}
    # ensure_ascii: an id holding a lone surrogate goes back as the same escape.
    return json.dumps(answer, separators=(",", ":")).encode() + b"\n"
