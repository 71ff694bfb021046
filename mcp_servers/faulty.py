"""Stub server that misbehaves on request: `python -m mcp_servers.faulty --crash-on-call`.

Always has an `ok` tool; each flag adds one failure mode (they combine):
crash at start, exit mid-call, hang, ignore SIGTERM and stdin EOF, leave a grandchild,
junk on stdout, a huge result (one line, or `--big-text` numbered lines), a flood without
a newline, an invalid input schema, JSON-RPC or is_error failures, a hostile tool list
from a JSON file (`--tools-from FILE`: [{"name": ..., "schema": ...}]), an environment
variable's value (raw and encoded) on stderr and in a tool result.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, quote_plus

import anyio

from mcp_servers._common import CallLog, add_common_flags, early_start
from mcp_servers._table import ToolOutput, ToolRpcError, ToolSpec, ToolTable

if TYPE_CHECKING:
    from mcp_servers._stub import StubServer

CRASH_AT_START_STATUS = 3
CRASH_ON_CALL_STATUS = 4
JUNK_LINE = "this line is not JSON-RPC (faulty --junk-stdout)"
EOF_IGNORED_LINE = "faulty: stdin closed; ignoring EOF until SIGKILL"
FAIL_CODE = -32000
# Passes the SDK's wire model (top-level type is "object") but is no valid JSON Schema.
NESTED_INVALID_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"value": {"type": 42}}}
# Fails the SDK's wire model itself: an SDK client rejects the whole tools/list result.
WIRE_INVALID_SCHEMA: dict[str, Any] = {"type": 42}
_NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}

FLOOD_CHUNK = 1024 * 1024
# Held so the grandchild's Popen is not collected (and warned about) while we run.
_grandchild: subprocess.Popen[bytes] | None = None
# The running server, for tools that write to the protocol stdout themselves (flood).
_server: StubServer | None = None


def _log(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


async def _ok(arguments: dict[str, Any]) -> ToolOutput:
    return ToolOutput("ok")


async def _crash(arguments: dict[str, Any]) -> ToolOutput:
    _log("faulty: crashing mid-call")
    os._exit(CRASH_ON_CALL_STATUS)


async def _hang(arguments: dict[str, Any]) -> ToolOutput:
    await anyio.sleep_forever()
    raise AssertionError("unreachable")


async def _fail(arguments: dict[str, Any]) -> ToolOutput:
    raise ToolRpcError(FAIL_CODE, "fail: this tool always answers with a JSON-RPC error")


async def _fail_result(arguments: dict[str, Any]) -> ToolOutput:
    return ToolOutput("fail_result: this tool always reports an error", is_error=True)


def _huge(size: int) -> Callable[[dict[str, Any]], Awaitable[ToolOutput]]:
    async def huge(arguments: dict[str, Any]) -> ToolOutput:
        return ToolOutput("x" * size)

    return huge


def big_text(size: int) -> str:
    """Exactly `size` bytes of numbered 100-byte lines (`00000001 ....`), the last maybe cut."""
    lines = (f"{i:08d} " + "." * 90 + "\n" for i in range(1, size // 100 + 2))
    return "".join(lines)[:size]


def _big_text(size: int) -> Callable[[dict[str, Any]], Awaitable[ToolOutput]]:
    async def big(arguments: dict[str, Any]) -> ToolOutput:
        return ToolOutput(big_text(size))

    return big


def _flood(size: int) -> Callable[[dict[str, Any]], Awaitable[ToolOutput]]:
    async def flood(arguments: dict[str, Any]) -> ToolOutput:
        assert _server is not None
        # No newline: the reply below lands at the end of one `size`-byte line.
        for start in range(0, size, FLOOD_CHUNK):
            await _server.write_raw("x" * min(FLOOD_CHUNK, size - start))
        return ToolOutput("flooded")

    return flood


def _leak_forms(value: str) -> str:
    raw = value.encode()
    forms = [
        value,
        quote(value, safe=""),
        quote_plus(value),
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode(),
        base64.b64encode(b"x" + raw + b"yz").decode(),  # embedded, off the 3-byte grid
    ]
    return " ".join(forms)


def _echo_env(name: str) -> Callable[[dict[str, Any]], Awaitable[ToolOutput]]:
    async def echo_env(arguments: dict[str, Any]) -> ToolOutput:
        return ToolOutput(f"{name}: {_leak_forms(os.environ.get(name, ''))}")

    return echo_env


def _stderr_env(name: str) -> None:
    """The variable's value on stderr, raw and encoded, each cut in two across writes."""
    for form in _leak_forms(os.environ.get(name, "")).split(" "):
        half = len(form) // 2
        sys.stderr.write(f"faulty: {name}={form[:half]}")
        sys.stderr.flush()
        time.sleep(0.05)
        sys.stderr.write(f"{form[half:]}\n")
        sys.stderr.flush()


def build_table(args: argparse.Namespace) -> ToolTable:
    """The `ok` tool plus one tool per failure mode asked for."""
    table = ToolTable([ToolSpec("ok", "Answer 'ok'.", _ok, _NO_ARGS)])
    if args.crash_on_call:
        table.add(ToolSpec("crash", "Exit the server process mid-call.", _crash, _NO_ARGS))
    if args.hang_on_call:
        table.add(ToolSpec("hang", "Never return.", _hang, _NO_ARGS))
    if args.huge_result is not None:
        desc = f"Return {args.huge_result} bytes of text."
        table.add(ToolSpec("huge", desc, _huge(args.huge_result), _NO_ARGS))
    if args.big_text is not None:
        desc = f"Return {args.big_text} bytes of numbered lines."
        table.add(ToolSpec("big_text", desc, _big_text(args.big_text), _NO_ARGS))
    if args.flood is not None:
        desc = f"Write {args.flood} bytes to stdout without a newline, then answer."
        table.add(ToolSpec("flood", desc, _flood(args.flood), _NO_ARGS))
    if args.invalid_schema == "nested":
        desc = "Announced with an invalid inputSchema."
        table.add(ToolSpec("bad_schema", desc, _ok, NESTED_INVALID_SCHEMA))
    elif args.invalid_schema == "type":
        desc = "Announced with inputSchema {'type': 42}."
        table.add(ToolSpec("bad_schema", desc, _ok, _NO_ARGS, WIRE_INVALID_SCHEMA))
    if args.echo_env:
        desc = "Return the --echo-env variable's value, raw and encoded."
        table.add(ToolSpec("echo_env", desc, _echo_env(args.echo_env), _NO_ARGS))
    if args.error_call:
        table.add(ToolSpec("fail", "Answer with a JSON-RPC error.", _fail, _NO_ARGS))
        table.add(ToolSpec("fail_result", "Answer with is_error true.", _fail_result, _NO_ARGS))
    if args.tools_from:
        with open(args.tools_from, encoding="utf-8") as file:
            for item in json.load(file):
                schema = item.get("schema", _NO_ARGS)
                table.add(ToolSpec(item["name"], "Hostile (--tools-from).", _ok, schema))
    return table


def _spawn_grandchild(pidfile: str) -> None:
    global _grandchild
    # Same process group as us (no new session), detached from the protocol pipes.
    _grandchild = subprocess.Popen(
        ["sleep", "300"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with open(pidfile, "w") as f:
        f.write(f"{_grandchild.pid}\n")


def _spawn_escapee(pidfile: str, how: str) -> None:
    """A `sleep 300` that leaves our process group: setsid() in a child of ours, or a
    double fork whose middle process exits at once (the sleeper is then nobody's child)."""
    null = subprocess.DEVNULL
    if how == "setsid":
        pid = subprocess.Popen(
            ["sleep", "300"], stdin=null, stdout=null, stderr=null, start_new_session=True
        ).pid
        with open(pidfile, "w") as f:
            f.write(f"{pid}\n")
        return
    middle = os.fork()
    if middle == 0:  # no threads yet: forking here is safe
        os.setsid()
        sleeper = subprocess.Popen(["sleep", "300"], stdin=null, stdout=null, stderr=null)
        with open(pidfile, "w") as f:
            f.write(f"{sleeper.pid}\n")
        os._exit(0)
    os.waitpid(middle, 0)


async def _write_junk(server: StubServer) -> None:
    await server.wait_initialized()
    await server.write_raw_line(JUNK_LINE)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse flags, misbehave as asked, and serve over stdio."""
    parser = argparse.ArgumentParser(prog="python -m mcp_servers.faulty", description=__doc__)
    add_common_flags(parser)
    flag = parser.add_argument
    flag("--crash-at-start", action="store_true", help="exit 3 before speaking MCP")
    flag("--crash-on-call", action="store_true", help="tool `crash` exits mid-call")
    flag("--hang-on-call", action="store_true", help="tool `hang` never returns")
    flag("--ignore-sigterm", action="store_true", help="ignore SIGTERM and stdin EOF")
    flag("--grandchild", metavar="PIDFILE", help="spawn `sleep 300`, write its pid here")
    flag(
        "--escape",
        nargs=2,
        metavar=("HOW", "PIDFILE"),
        help="a `sleep 300` that leaves "
        "our group, HOW = setsid or double-fork; its pid goes to PIDFILE",
    )
    flag("--junk-stdout", action="store_true", help="write a non-JSON line after init")
    flag("--huge-result", type=int, metavar="BYTES", help="tool `huge` returns BYTES of text")
    flag("--big-text", type=int, metavar="BYTES", help="tool `big_text`: BYTES in numbered lines")
    flag("--flood", type=int, metavar="BYTES", help="tool `flood` writes BYTES, no newline")
    flag(
        "--invalid-schema",
        nargs="?",
        const="nested",
        choices=["nested", "type"],
        help="tool `bad_schema` has a bad schema: nested (default) or type (`{type: 42}`)",
    )
    flag("--error-call", action="store_true", help="tools `fail` and `fail_result`")
    flag("--tools-from", metavar="FILE", help='add tools [{"name", "schema"}] from a JSON file')
    flag("--echo-env", metavar="VAR", help="VAR's value (raw, encoded) on stderr and `echo_env`")
    args = parser.parse_args(argv)
    early_start(args)
    if args.echo_env:
        _stderr_env(args.echo_env)
    if args.crash_at_start:
        _log("faulty: crashing at start as asked (--crash-at-start)")
        sys.exit(CRASH_AT_START_STATUS)
    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.grandchild:
        _spawn_grandchild(args.grandchild)
    if args.escape:
        if args.escape[0] not in ("setsid", "double-fork"):
            parser.error("--escape HOW must be setsid or double-fork")
        _spawn_escapee(args.escape[1], args.escape[0])

    from mcp_servers import _stub  # the SDK import costs ~1.5 s; the marker is already there

    global _server
    server = _server = _stub.StubServer(
        "faulty", build_table(args), call_log=CallLog(args.call_log), page_size=args.pages
    )
    _stub.run(server, _write_junk if args.junk_stdout else None)
    if args.ignore_sigterm:
        _log(EOF_IGNORED_LINE)
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main(sys.argv[1:])
