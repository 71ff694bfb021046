"""OAuth for remote servers, on the MCP SDK's providers: one room.

- `login`: `subagent login`, the interactive authorization-code flow.
- `session`: a session's provider: stored tokens only, refreshed under the store lock.
- `machine`: the client_credentials grant (no login).
- `flow`: the provider base every one of them shares: the first failure kept as `failure`.
- `storage`: the SDK's TokenStorage over our TokenStore.
- `loopback`: the redirect receiver on 127.0.0.1.
"""
