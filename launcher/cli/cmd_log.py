"""`subagent log`: the session store's command line."""

from __future__ import annotations

from typing import Annotated

import typer

from launcher.cli.logcmd import LOG_DEFAULT_N
from launcher.cli.options import (
    JsonFlag,
    exit_with,
)


def log(
    ref: Annotated[
        str | None, typer.Argument(help="Session ID (or `last`) to show; `prune` to delete old.")
    ] = None,
    n: Annotated[int, typer.Option("-n", min=1, help="How many sessions to list.")] = LOG_DEFAULT_N,
    query: Annotated[
        str | None, typer.Option("-q", "--query", help="Full-text search of what was said.")
    ] = None,
    usage: Annotated[
        bool, typer.Option("--usage", help="Token and time totals per model.")
    ] = False,
    older_than: Annotated[
        str | None, typer.Option("--older-than", help="With `prune`: an age such as 30d, 12h.")
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Stored sessions: list (newest first), show one, search (-q), totals (--usage), prune."""

    def body() -> int:
        from launcher.cli.logcmd import run_log

        return run_log(ref, n=n, query=query, usage=usage, older_than=older_than, json_out=json_out)

    exit_with(body)
