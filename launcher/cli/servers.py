"""`subagent servers`: the configured MCP servers, secrets masked; starts nothing."""

from __future__ import annotations

from launcher.cli.options import (
    ConfigDir,
    JsonFlag,
    ServersFrom,
    exit_with,
    load,
)


def servers(
    config_dir: ConfigDir = None, json_out: JsonFlag = False, servers_from: ServersFrom = None
) -> None:
    """List configured MCP servers with their launch spec, secrets masked (starts no server)."""

    def body() -> int:
        from launcher.cli.render import print_servers
        from launcher.cli.views import server_rows

        config = load(config_dir)
        rows = server_rows(config)
        if json_out:
            import json

            print(json.dumps(rows, indent=2))
        elif not rows:
            from launcher.cli.searched import nothing_found

            print(nothing_found(config, config_dir, "servers"))
        else:
            print_servers(rows)
        return 0

    exit_with(body)
