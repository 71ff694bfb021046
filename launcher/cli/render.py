"""Human output, derived only from the event stream and the tools report."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from launcher.events import (
    AgentEnd,
    Event,
    HookDecision,
    ServerState,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnStart,
)

_ERASE_LINE = "\r\x1b[2K"


class LiveLine:
    """One terminal line rewritten in place (on stderr); `clear()` erases it if shown."""

    def __init__(self, out: TextIO = sys.stderr) -> None:
        self.out = out
        self.shown = False

    def show(self, line: str) -> None:
        self.out.write(_ERASE_LINE + line)
        self.out.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.out.write(_ERASE_LINE)
            self.out.flush()
            self.shown = False


class ProgressLine(LiveLine):
    """A one-line live status of servers while they connect (terminal only, on stderr)."""

    def __init__(self, out: TextIO = sys.stderr) -> None:
        super().__init__(out)
        self.states: dict[str, tuple[str, int]] = {}

    async def __call__(self, event: Event) -> None:
        if isinstance(event, ServerState):
            self.states[event.server] = (event.state, event.tools)
            parts = [f"{name}: {state} ({n})" for name, (state, n) in self.states.items()]
            self.show("  ".join(parts))


def for_terminal(text: str) -> str:
    """`text` with every control, format or unprintable character escaped (`\\x1b`,
    `\\u202e`): file-supplied text must not set titles, clear or recolour the screen."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else _escape(char) for char in text)


def _escape(char: str) -> str:
    code = ord(char)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def print_agents(rows: list[dict[str, Any]], out: TextIO = sys.stdout) -> None:
    """`subagent agents` for people: each agent, its source, built-ins and servers."""
    for row in (_printable(row) for row in rows):
        dialect = f", {row['dialect']}" if row.get("dialect") not in (None, "built-in") else ""
        out.write(f"{row['name']}  ({row['source'] or 'built-in'}{dialect})\n")
        if row["description"]:
            out.write(f"    {row['description']}\n")
        out.write(f"    built-ins: {', '.join(row['builtins']) or 'none'}\n")
        out.write(f"    servers: {', '.join(row['servers']) or 'none'}\n")
        if row.get("hooks"):
            hooks = (f"{h['event']} {h['matcher'] or '*'}" for h in row["hooks"])
            out.write(f"    hooks: {', '.join(hooks)}\n")
        if row.get("error"):
            out.write(f"    error: {row['error']}\n")


def _printable(value: Any) -> Any:
    if isinstance(value, str):
        return for_terminal(value)
    if isinstance(value, dict):
        return {key: _printable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_printable(item) for item in value]
    return value


def print_servers(rows: dict[str, dict[str, Any]], out: TextIO = sys.stdout) -> None:
    """`subagent servers` for people: one line a server, its transport and target."""
    for name, spec in rows.items():
        if spec.get("type") == "http":
            line = f"{name}  http  {spec.get('url')}"
            if "login" in spec:
                machine = (spec.get("oauth") or {}).get("grant_type") == "client_credentials"
                line += f"  oauth: {describe_oauth(spec['login'], machine=machine)}"
        else:
            argv = " ".join([str(spec.get("command"))] + [str(a) for a in spec.get("args", [])])
            line = f"{name}  stdio  {argv}"
        out.write(f"{line}  ({spec.get('source')})\n" if spec.get("source") else line + "\n")


def describe_oauth(
    status: dict[str, Any], now: float | None = None, *, machine: bool = False
) -> str:
    """An OAuth server's login for people: `logged in, expires in 59m, scopes mcp read`;
    `machine`: a client-credentials server, which needs no login."""
    from launcher.cli.views import age

    if status.get("logged_in"):
        parts = ["logged in"]
    else:
        parts = ["client credentials, no login needed" if machine else "not logged in"]
    expires_at = status.get("expires_at")
    if status.get("logged_in") and expires_at is not None:
        left = expires_at - (time.time() if now is None else now)
        parts.append(f"expires in {age(left)}" if left > 0 else "access token expired (refreshes)")
    if status.get("logged_in") and status.get("scopes"):
        parts.append("scopes " + " ".join(status["scopes"]))
    if status.get("token_env"):
        parts.append(f"{status['token_env']} is set and used instead")
    return ", ".join(parts)


def print_tools_table(report: dict[str, Any], out: TextIO = sys.stdout) -> None:
    """`subagent tools` for people: active tools, muted tools with reasons, server states."""
    rows = [
        (t["name"], t["server"] or "(built-in)", "active", _short(t["description"]))
        for t in report["active"]
    ]
    rows += [(t["name"], t["server"], "muted", t["reason"]) for t in report["muted"]]
    widths = [
        max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(("TOOL", "SERVER", "STATE"))
    ]
    header = ("TOOL", "SERVER", "STATE", "NOTE")
    out.write(
        "  ".join(h.ljust(w) for h, w in zip(header, [*widths, 0], strict=True)).rstrip() + "\n"
    )
    for row in rows:
        cells = [c.ljust(w) for c, w in zip(row[:3], widths, strict=True)] + [row[3]]
        out.write("  ".join(cells).rstrip() + "\n")
    deferred = report.get("on_demand", {}).get("deferred", 0)
    if deferred:
        out.write(f"\n{deferred} active tools are offered on demand, through tool_search\n")
    if report["servers"]:
        out.write("\nSERVERS\n")
        for name, st in report["servers"].items():
            line = f"  {name}: {st['state']}, {st['tools']} tools"
            if st["error"]:
                line += f" — {st['error']}"
            out.write(line + "\n")


def _short(text: str, limit: int = 60) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class SpawnRenderer:
    """`subagent spawn` for people: streamed text, a line per tool call, a usage line."""

    def __init__(self, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> None:
        self.out = out
        self.err = err
        self.mid_line = False

    async def __call__(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.out.write(event.text)
            self.out.flush()
            self.mid_line = not event.text.endswith("\n")
        elif isinstance(event, TurnStart):
            self._newline()
        elif isinstance(event, ToolCallEvent):
            self._newline()
            self.err.write(f"→ {event.name}\n")
        elif isinstance(event, ToolResultEvent):
            status = "error" if event.is_error else "ok"
            self.err.write(f"← {event.name}: {status} {_short(event.content, 80)}\n")
        elif isinstance(event, AgentEnd):
            self._newline()
            usage = event.usage
            self.err.write(
                f"[{event.status}] turns={usage.get('turns', 0)} "
                f"tool_calls={usage.get('tool_calls', 0)} "
                f"tokens in={usage.get('input_tokens', 0)} out={usage.get('output_tokens', 0)} "
                f"{usage.get('duration_s', 0):.1f}s\n"
            )
            if event.error:
                self.err.write(f"error: {event.error}\n")
        elif isinstance(event, ServerState) and event.state == "failed":
            self._newline()
            self.err.write(f"server {event.server} failed: {event.error}\n")
        elif isinstance(event, HookDecision):
            self._hook(event)
        self.err.flush()

    def _hook(self, event: HookDecision) -> None:
        """A hook that decided something, or told the user something (`systemMessage`)."""
        if event.decision in ("none", "allow") and not event.message:
            return
        self._newline()
        tool = f" {event.tool}" if event.tool else ""
        reason = f": {_short(event.reason or '', 80)}" if event.reason else ""
        self.err.write(f"hook {event.event}{tool} {event.decision}{reason}\n")
        if event.message:
            self.err.write(f"hook: {event.message}\n")

    def _newline(self) -> None:
        if self.mid_line:
            self.out.write("\n")
            self.out.flush()
            self.mid_line = False


class BatchBar(LiveLine):
    """`subagent batch`'s live line on a terminal: done / failed / running, rate."""

    def __call__(self, progress: Any) -> None:
        self.show(
            f"done {progress.completed}  failed {progress.failed}  running {progress.running}"
            f"  skipped {progress.skipped}  {progress.rate():.2f}/s"
        )


def print_batch_summary(progress: Any, out: TextIO = sys.stderr) -> None:
    """The end of `subagent batch`: counts, time, and every bad input line."""
    import time

    elapsed = time.monotonic() - progress.started
    out.write(
        f"batch: {progress.completed} completed, {progress.failed} failed, "
        f"{progress.skipped} skipped (already done), {len(progress.bad)} bad line(s) "
        f"in {elapsed:.1f} s\n"
    )
    for bad in progress.bad:
        out.write(f"batch: {bad} (not run)\n")
    for task_id, error in progress.failures.items():
        out.write(f"batch: {task_id} failed: {_first_line(error)}\n")
    for task_id, error in progress.failed_before.items():
        out.write(f"batch: {task_id} failed in an earlier run: {_first_line(error)}\n")
    if progress.not_started:
        out.write(
            f"batch: not started (--max-cost-total reached): {', '.join(progress.not_started)}; "
            "a re-run runs them\n"
        )
    failed = [*progress.failures, *progress.failed_before]
    if failed:
        out.write(f"batch: failed: {', '.join(failed)}\n")
        if progress.failed_before:
            out.write("batch: --retry-failed runs the earlier failures again\n")


def _first_line(text: str, limit: int = 300) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(no error text)"
    return line if len(line) <= limit else line[: limit - 3] + "..."


def print_lock_report(results: list[Any], path: Any, out: TextIO = sys.stdout) -> None:
    """`subagent lock`: per agent, what changed against the previous lock, then the file."""
    from launcher.check.pins import format_drift

    for result in results:
        servers = ", ".join(
            f"{name} {pin.version or '?'}" for name, pin in sorted(result.current.servers.items())
        )
        count = f"{len(result.current.tools)} tools" + (f" from {servers}" if servers else "")
        drift = result.drift
        if result.previous is None:
            state = "new pin"
        else:
            state = f"{len(drift)} changes" if drift else "unchanged"
        out.write(f"{result.agent}: {state}, {count}\n")
        for line in drift:
            out.write(f"  {format_drift(line)}\n")
    out.write(f"wrote {path}\n")


def print_withheld(results: list[Any], err: TextIO = sys.stderr) -> None:
    """`subagent lock`: one line per server some of whose tools a secret kept out of the pin
    (it names no tool: the names are what hold the secret)."""
    for result in results:
        for server, count in result.current.withheld.items():
            tools, its, it_is = (
                ("1 tool", "its", "it is")
                if count == 1
                else (f"{count} tools", "their", "they are")
            )
            err.write(
                f"subagent: lock: agent '{result.agent}': {tools} of server '{server}' left out "
                f"of the lock: a secret (a ${{VAR}} value or a credential) is in {its} name, "
                f"description or input schema; under the lock {it_is} muted (not in lock)\n"
            )


LOG_COLUMNS = ("id", "agent", "status", "turns", "tokens", "cost", "age", "prompt")
COLLAPSED_LINES = 6
"""On a terminal, `log ID` shows this many lines of each tool result (the rest: a count)."""


def print_log_table(
    rows: list[dict[str, str]], out: TextIO = sys.stdout, *, empty: str = "no stored sessions"
) -> None:
    """`subagent log` for people: one line a session, newest first; a search (`-q`) shows
    the matching text under MATCH instead of the prompt."""
    if not rows:
        out.write(empty + "\n")
        return
    last = "match" if any("match" in r for r in rows) else "prompt"
    widths = [max([len(c)] + [len(r[c]) for r in rows]) for c in LOG_COLUMNS[:-1]]
    header = [c.upper().ljust(w) for c, w in zip(LOG_COLUMNS[:-1], widths, strict=True)]
    out.write("  ".join([*header, last.upper()]) + "\n")
    for row in rows:
        cells = [row[c].ljust(w) for c, w in zip(LOG_COLUMNS[:-1], widths, strict=True)]
        out.write("  ".join([*cells, row.get(last, "")]).rstrip() + "\n")


def print_conversation(conv: dict[str, Any], *, collapse: bool, out: TextIO = sys.stdout) -> None:
    """`subagent log ID` for people: the header, then every message; long results collapsed."""
    out.write(
        f"session {conv['id']}  agent {conv['agent']}  model {conv['model'] or '?'}"
        f"  status {conv['status']}\n"
        f"turns {conv['turns']}  tokens {conv['input_tokens']} in / {conv['output_tokens']} out"
        f"  tool calls {conv['tool_calls']}  {conv['duration_s']}s\n"
    )
    for m in conv["messages"]:
        if m["role"] == "user":
            out.write(f"\n[{m['turn']}] user:\n{_indent(m['content'], collapse=False)}\n")
        elif m["role"] == "assistant":
            if m["content"]:
                out.write(f"\n[{m['turn']}] assistant:\n{_indent(m['content'], collapse=False)}\n")
            for call in m["tool_calls"]:
                out.write(f"  → {call['name']}({_short(str(call.get('arguments')), 100)})\n")
        else:
            mark = "✗" if m["is_error"] else "←"
            out.write(f"  {mark} {m['name']}:\n{_indent(m['content'], collapse=collapse)}\n")


def _indent(text: str, *, collapse: bool) -> str:
    lines = text.splitlines() or [""]
    if collapse and len(lines) > COLLAPSED_LINES:
        rest = len(lines) - COLLAPSED_LINES
        lines = [*lines[:COLLAPSED_LINES], f"… {rest} more lines (--json shows all)"]
    return "\n".join("    " + line for line in lines)


USAGE_COLUMNS = (
    ("AGENT", "agent"),
    ("MODEL", "model"),
    ("SESSIONS", "sessions"),
    ("TURNS", "turns"),
    ("INPUT", "input_tokens"),
    ("OUTPUT", "output_tokens"),
    ("TOOL_CALLS", "tool_calls"),
    ("SECONDS", "duration_s"),
    ("COST_USD", "cost_usd"),
)


def print_usage(rows: list[dict[str, Any]], out: TextIO = sys.stdout) -> None:
    """`subagent log --usage` for people: totals per agent and model, in aligned columns."""
    cells = [[head for head, _ in USAGE_COLUMNS]] + [
        [str(r[key]) if r[key] not in (None, "") else "?" for _, key in USAGE_COLUMNS] for r in rows
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(USAGE_COLUMNS))]
    for row in cells:
        out.write("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() + "\n")


class CheckBar(LiveLine):
    """`subagent check`'s live line on a terminal: done of total, failed, running."""

    def __call__(self, progress: Any) -> None:
        self.show(
            f"check: {progress.done}/{progress.total} done  failed {progress.failed}"
            f"  running {progress.running}"
        )


def print_check_table(report: dict[str, Any], out: TextIO = sys.stdout) -> None:
    """`subagent check`: one row per check (the first failing expectation), then totals."""
    rows = report["checks"]
    width = max([len("CHECK"), *(len(r["name"]) for r in rows)])
    agent_width = max([len("AGENT"), *(len(r["agent"]) for r in rows)])
    out.write(f"{'CHECK':<{width}}  {'AGENT':<{agent_width}}  RESULT  TIME   FIRST FAILURE\n")
    for r in rows:
        result = "PASS" if r["status"] == "passed" else "FAIL"
        row = (
            f"{r['name']:<{width}}  {r['agent']:<{agent_width}}  {result:<6}  "
            f"{r['duration_s']:>4.1f}s  {r['failure'] or ''}"
        )
        out.write(row.rstrip() + "\n")
    out.write(f"{report['passed']} passed, {report['failed']} failed\n")
