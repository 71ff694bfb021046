"""`subagent agents`: the agents found and their resolved scope; starts nothing."""

from __future__ import annotations

from launcher.cli.options import (
    ConfigDir,
    JsonFlag,
    ServersFrom,
    exit_with,
    load,
)


def agents(
    config_dir: ConfigDir = None, json_out: JsonFlag = False, servers_from: ServersFrom = None
) -> None:
    """List agents with their source file and resolved scope (starts no server)."""

    def body() -> int:
        from launcher.cli.render import print_agents
        from launcher.cli.views import agent_rows

        config = load(config_dir)
        rows = agent_rows(config)
        if json_out:
            import json

            print(json.dumps(rows, indent=2))
        else:
            print_agents(rows)
            if all(row.get("source") is None for row in rows):
                from launcher.cli.searched import nothing_found

                print(f"(built-in agents only: {nothing_found(config, config_dir, 'agents')})")
        return 0

    exit_with(body)
