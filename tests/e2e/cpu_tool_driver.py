"""A launcher whose session runs a CPU-bound built-in tool: `python -m
tests.e2e.cpu_tool_driver CONFIG_DIR WORKSPACE`.

The session (with the config's servers) calls the real `grep` through the real thread
wrapper (tools/common.py `in_thread`), with an engine injected through grep's
`compile_pattern` parameter that spins in Python for ever; stdout says `spinning` once it
does. The run goes through the CLI's own signal handling and exit-code map, so SIGINT or
SIGTERM must end it (128 + N) with the session closed, however long the tool would run.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from launcher.assemble import assemble_session, plan_run
from launcher.cli.run import finish, guarded, run_async
from launcher.config.discovery import load_config
from launcher.tools.common import in_thread
from launcher.tools.search import grep_files
from launcher.tools.workspace import Workspace

CAP = 64 * 1024


class Spinning:
    """A pattern whose search never ends: pure Python work, the GIL taken and given back."""

    def lines(self, blob: bytes) -> Iterator[tuple[int, int, int]]:
        sys.stdout.write("spinning\n")
        sys.stdout.flush()
        count = 0
        while True:
            count += 1
        yield 0, 0, 0


def spinning(pattern: str, **_: Any) -> Spinning:
    return Spinning()


def main() -> int:
    config_dir, workspace = Path(sys.argv[1]), Path(sys.argv[2])
    config = load_config(config_dir, cwd=workspace)
    session = assemble_session(plan_run(config, "general-purpose", workspace=workspace))
    ws = Workspace(workspace)
    grep = in_thread("grep", lambda args: grep_files(ws, args, CAP, compile_pattern=spinning))

    async def body(_: Any) -> str:
        result = await grep({"pattern": "x"})
        return result.content

    async def run() -> str:
        return await session.run(body)

    def command() -> int:
        run_async(run)
        return 0

    return guarded(command)


if __name__ == "__main__":
    finish(main())
