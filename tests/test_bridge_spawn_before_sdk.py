"""A connection spawns its stdio server before the MCP SDK is imported, so the SDK's
import (over half a second) overlaps the server's start-up in a fresh process."""

from __future__ import annotations

import json
import subprocess
import sys

RUN_LIMIT_S = 60.0

FRESH_PROCESS = """
import json, sys, tempfile, pathlib
import anyio
import launcher.bridge.connection as connection
import launcher.bridge.transport as transport
from launcher.config.types import ServerSpec

imported_early = "mcp" in sys.modules
sdk_at_spawn = []
real_spawn = transport.spawn_server

async def spy(*args, **kwargs):
    sdk_at_spawn.append("mcp" in sys.modules)
    return await real_spawn(*args, **kwargs)

transport.spawn_server = spy

async def main():
    async def ignore(_):
        return None
    root = pathlib.Path(tempfile.mkdtemp())
    spec = ServerSpec(name="quick", command=sys.executable, args=("-c", "pass"))
    conn = connection.McpConnection(
        spec, on_tools=ignore, emit=ignore, log_path=root / "quick.log", workspace=root
    )
    await conn.run()

anyio.run(main)
print(json.dumps({"imported_early": imported_early, "sdk_at_spawn": sdk_at_spawn,
                  "sdk_after": "mcp" in sys.modules}))
"""


def test_stdio_server_is_spawned_before_the_sdk_is_imported() -> None:
    out = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS],
        capture_output=True,
        text=True,
        timeout=RUN_LIMIT_S,
        check=True,
    )

    seen = json.loads(out.stdout.splitlines()[-1])
    assert seen == {"imported_early": False, "sdk_at_spawn": [False], "sdk_after": True}
