"""`subagent log`: read the session store. Its body imports what it uses: `--help` lists
`log` and its fast path parses without loading the store, its errors or `json`.

The console script parses plain arguments with `parse_fast` before typer loads
(cli/entry.py), so typer is imported only inside `command()`, which builds the typer
signature; both are made from one table, cli/spec.py's LOG.
"""

import sys
from collections.abc import Callable
from typing import Any

from launcher.cli.spec import LOG, LOG_DEFAULT_N, parse

__all__ = ["LOG_DEFAULT_N"]
LOG_MAX_N = 2**63 - 1
"""SQLite's largest integer: a larger LIMIT cannot even be bound."""
REF_HELP = "Session ID (or `last`) to show; `prune` to delete old."


def parse_fast(args: list[str]) -> dict[str, Any] | None:
    """`log`'s arguments as run_log's keywords, or None for anything unusual (typer decides).

    The console script runs `log` through this before typer loads: typer coerces every
    option through pydantic, whose import alone would double the command's time.
    """
    return parse(LOG, args, positional="ref")


def command() -> Callable[..., None]:
    """The typer command `log`, built on demand so that the fast path never imports typer;
    its options are cli/spec.py's LOG, which the fast path reads too."""
    from typing import Annotated

    import typer

    from launcher.cli.options import exit_with, parameters, with_parameters

    def log(**given: Any) -> None:
        """Stored sessions: list (newest first), show one, search (-q), totals (--usage), prune."""

        def body() -> int:
            return run_log(**given)

        exit_with(body)

    ref = Annotated[str | None, typer.Argument(help=REF_HELP)]
    with_parameters(log, [("ref", ref, None), *parameters(LOG)])
    return log


def run_log(
    ref: str | None,
    *,
    n: int,
    query: str | None,
    usage: bool,
    older_than: str | None,
    json_out: bool,
) -> int:
    """List, show, search, total or prune the stored sessions; 0, 2 on bad usage, 1 if the
    store cannot be read (locked for too long, damaged)."""
    import sqlite3

    from launcher.errors import RunError
    from launcher.state import state_home
    from launcher.store.db import db_path

    try:
        return _run_log(
            ref, n=n, query=query, usage=usage, older_than=older_than, json_out=json_out
        )
    except sqlite3.Error as exc:
        raise RunError(f"session store {db_path(state_home())}: {exc}") from exc


def _run_log(
    ref: str | None,
    *,
    n: int,
    query: str | None,
    usage: bool,
    older_than: str | None,
    json_out: bool,
) -> int:
    from launcher.cli import render, views
    from launcher.errors import UsageError
    from launcher.state import state_home
    from launcher.store import query as q
    from launcher.store.db import connect
    from launcher.store.runlock import mark_interrupted

    if not 1 <= n <= LOG_MAX_N:
        raise UsageError(f"-n {n}: expected a count from 1 to {LOG_MAX_N}")
    if ref == "prune":
        if older_than is None:
            raise UsageError("log prune: --older-than AGE is required (e.g. 30d)")
        seconds = q.parse_age(older_than)
    elif older_than is not None:
        raise UsageError("--older-than goes with `subagent log prune`")
    home = state_home()
    conn = connect(home, create=ref == "prune")
    if conn is None:
        return _empty(ref, usage=usage, json_out=json_out)
    try:
        if ref == "prune":
            from launcher.store.prune import prune_sessions

            pruned = prune_sessions(conn, home, seconds)
            for problem in pruned.left:
                sys.stderr.write(f"subagent: log prune: could not remove {problem}\n")
            deleted = len(pruned.deleted)
            _out({"deleted": deleted}, json_out, lambda: print(f"deleted {deleted} sessions"))
        elif usage:
            rows = q.usage_by_model(conn)
            _out(rows, json_out, lambda: render.print_usage(rows))
        elif ref is not None:
            conv = q.conversation(conn, q.resolve_id(conn, ref))
            mark_interrupted(home, [conv])
            collapse = sys.stdout.isatty()
            _out(conv, json_out, lambda: render.print_conversation(conv, collapse=collapse))
        else:
            sessions = q.search(conn, query, n) if query else q.recent(conn, n)
            mark_interrupted(home, sessions)
            empty = f"no stored session matches {query!r}" if query else "no stored sessions"
            rows = views.log_table_rows(sessions)
            _out(sessions, json_out, lambda: render.print_log_table(rows, empty=empty))
    finally:
        conn.close()
    return 0


def _empty(ref: str | None, *, usage: bool, json_out: bool) -> int:
    """No logs.db yet: an empty list, or the same error as an unknown id."""
    from launcher.errors import UsageError

    if ref is not None:
        raise UsageError(f"no stored session {ref!r} (nothing stored yet)")
    if json_out:
        print("[]")
    elif usage:
        print("no stored sessions")
    else:
        print("no stored sessions")
    return 0


def _out(data: Any, json_out: bool, human: Any) -> None:
    if json_out:
        import json

        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        human()
