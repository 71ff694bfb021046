"""serve's early face on hostile wires: the replay's id, invalid UTF-8, huge and deep lines.

The early face reads every host line for serve's whole life (it hands lines to the SDK
server after the SDK loads), so each case is checked before the hand-over (the face
answers) and after it (the SDK server answers).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import write_config
from tests.e2e.test_serve_early import Host, request

pytestmark = pytest.mark.e2e

REPLAY_ID = "subagent-early-initialize"
"""The id serve replays the early `initialize` under (backend/handover.py)."""
HUGE_LINE_BYTES = 64_000_000
"""The issue's 64 MB line: the old quadratic reader took 93 s on it, the SDK's 1.6 s."""
HUGE_LINE_WAIT_S = 60.0
"""From the start of the write to the last answer: linear reading and two JSON parses of
64 MB take seconds even on a loaded machine; the quadratic reader took minutes (93 s on an
idle machine, 204 s on a loaded one), which this bound tells apart."""
INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "host", "version": "1"},
}


def list_agents(rid: int | str, **params: Any) -> dict[str, Any]:
    return request(rid, "tools/call", {"name": "list_agents", "arguments": {}, **params})


def answers(host: Host, count: int, deadline: float | None = None) -> dict[Any, dict[str, Any]]:
    """The next `count` answers by id (each id at most once), all before `deadline` if given."""
    got: dict[Any, dict[str, Any]] = {}
    for _ in range(count):
        answer = host.next(max(0.0, deadline - time.monotonic())) if deadline else host.next()
        assert answer.get("id") not in got, f"answered twice: {answer}"
        got[answer.get("id")] = answer
    return got


@pytest.fixture
def host(tmp_path: Path) -> Any:
    config = write_config(tmp_path / "cfg", {})
    host = Host(tmp_path, config)
    yield host
    host.close()
    assert host.answers.empty(), "nothing may be answered twice"


def test_an_initialize_with_the_replay_id_is_answered_and_so_is_a_later_request(
    host: Host,
) -> None:
    host.send(request(REPLAY_ID, "initialize", INIT))
    first = host.next()
    assert first["id"] == REPLAY_ID and first["result"]["protocolVersion"] == "2025-06-18"
    # After the hand-over the SDK answers: a request under the same id is not the replay's.
    host.send(
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        list_agents(REPLAY_ID),
        request(2, "ping"),
    )
    later = answers(host, 2)
    assert "general-purpose" in later[REPLAY_ID]["result"]["content"][0]["text"]
    assert later[2]["result"] == {}


def test_a_call_under_the_replay_id_after_an_early_initialize_is_answered(host: Host) -> None:
    host.send(
        request(1, "initialize", INIT),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        list_agents(REPLAY_ID),
        request(REPLAY_ID, "ping"),
    )
    got = [host.next() for _ in range(3)]
    assert got[0]["id"] == 1
    assert [a["id"] for a in got[1:]] == [REPLAY_ID, REPLAY_ID]
    called, pinged = sorted((a["result"] for a in got[1:]), key=lambda r: "content" not in r)
    assert "general-purpose" in called["content"][0]["text"]
    assert pinged == {}


def test_invalid_utf8_in_a_string_is_answered_with_replacement_characters(host: Host) -> None:
    # Before the hand-over: the early face answers, as the SDK would.
    init = json.dumps(request(1, "initialize", INIT)).encode()
    init = init.replace(b'"name": "host"', b'"name": "h\xffost"')
    host.send_raw(init + b"\n")
    assert host.next()["result"]["protocolVersion"] == "2025-06-18"
    # After it: the SDK server answers, with U+FFFD where the bytes were invalid.
    call = json.dumps(request(2, "tools/call", {"name": "no_such_TOOL", "arguments": {}}))
    host.send_raw(
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n'
        + call.encode().replace(b"_TOOL", b"\xc3\x28tool")
        + b"\n"
        + json.dumps(request(3, "ping")).encode()
        + b"\n"
    )
    got = answers(host, 2)
    assert got[2]["result"]["isError"] is True
    assert "no_such\ufffd(tool" in got[2]["result"]["content"][0]["text"]
    assert got[3]["result"] == {}


def test_a_64_mb_line_is_read_in_linear_time_and_the_next_request_is_answered(
    host: Host,
) -> None:
    host.send(request(1, "initialize", INIT))
    assert host.next()["id"] == 1
    huge = list_agents(2, _meta={"pad": "x" * HUGE_LINE_BYTES})
    lines = ({"jsonrpc": "2.0", "method": "notifications/initialized"}, huge, request(3, "ping"))
    # The write blocks while serve reads: it runs beside the wait, which bounds both.
    deadline = time.monotonic() + HUGE_LINE_WAIT_S
    writer = threading.Thread(target=host.send, args=lines, daemon=True)
    writer.start()
    got = answers(host, 2, deadline)
    writer.join(timeout=HUGE_LINE_WAIT_S)
    assert "general-purpose" in got[2]["result"]["content"][0]["text"]
    assert got[3]["result"] == {}


def test_a_line_nested_past_the_stack_does_not_end_serves_input(host: Host) -> None:
    host.send_raw(b"[" * 200_000 + b"\n")
    host.send(request(1, "initialize", INIT), request(2, "ping"))
    got = answers(host, 2)
    assert got[1]["result"]["protocolVersion"] == "2025-06-18"
    assert got[2]["result"] == {}


@pytest.mark.parametrize("field", ["prompt", "agent", "model"])
def test_a_lone_surrogate_escape_gets_an_error_answer(host: Host, field: str) -> None:
    host.send(
        request(1, "initialize", INIT), {"jsonrpc": "2.0", "method": "notifications/initialized"}
    )
    assert host.next()["id"] == 1
    call = request(4, "tools/call", {"name": "spawn_subagent", "arguments": {"prompt": "go"}})
    call["params"]["arguments"][field] = "LONE"
    # Valid JSON (a \ud800 escape), which the SDK's parser refuses.
    line = json.dumps(call).replace('"LONE"', '"\\ud800"').encode()
    host.send_raw(line + b"\n" + json.dumps(request(9, "ping")).encode() + b"\n")
    got = answers(host, 2)
    assert got[4]["error"]["code"] == -32700
    assert got[9]["result"] == {}


def test_a_line_that_never_ends_is_dropped_past_the_limit_and_serve_keeps_answering(
    host: Host,
) -> None:
    from launcher.backend.early import MAX_LINE_BYTES

    host.send(
        request(1, "initialize", INIT), {"jsonrpc": "2.0", "method": "notifications/initialized"}
    )
    assert host.next()["id"] == 1
    # No newline yet: the error comes while the line is still open, so it is not buffered.
    chunk = b"x" * 2**20
    for _ in range(MAX_LINE_BYTES // len(chunk) + 2):
        host.send_raw(chunk)
    dropped = host.next()
    assert dropped["id"] is None and dropped["error"]["code"] == -32700
    assert f"over {MAX_LINE_BYTES // 2**20} MiB" in dropped["error"]["message"]
    host.send_raw(b"still the same line\n" + json.dumps(request(3, "ping")).encode() + b"\n")
    assert answers(host, 1) == {3: {"jsonrpc": "2.0", "id": 3, "result": {}}}
