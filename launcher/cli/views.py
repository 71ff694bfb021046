"""Rows and `--json` shapes of `agents`, `servers`, `tools` and `log` (CONTRACT.md), computed once.

The human renderers in `render.py` print these same rows.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from launcher.config.types import Config
    from launcher.session import Session


def agent_rows(config: Config) -> list[dict[str, Any]]:
    """One JSON-able row per agent (broken agent files included, with their error)."""
    # Imported here: `subagent log` loads this module and must not pay for config parsing.
    from launcher.budget import Limits, limits_of, resolve_limits
    from launcher.config.sandbox_field import agent_sandbox
    from launcher.tools.sandbox import describe
    from launcher.toolset.scope import ToolScope

    rows: list[dict[str, Any]] = []
    for spec in config.agents.values():
        scope = ToolScope(spec)
        servers = {**config.servers, **{s.name: s for s in spec.servers}}
        rows.append(
            {
                "name": spec.name,
                "description": spec.description,
                "source": str(spec.source) if spec.source else None,
                "dialect": spec.dialect if spec.source else "built-in",
                "display_name": spec.display_name,
                "model": spec.model,
                "builtins": list(scope.builtin_names()),
                "servers": list(scope.servers_to_start(servers)),
                "selectors": [s.raw for s in spec.tools or () if s.kind in ("ext", "name")],
                "disallowed_tools": list(dict.fromkeys(s.raw for s in spec.disallowed_tools)),
                "isolated": spec.isolated,
                "extensions": spec.extensions
                if isinstance(spec.extensions, bool)
                else list(spec.extensions),
                "memory": spec.memory,
                "max_turns": spec.max_turns,
                # What a run of it is held to when the request asks for nothing less.
                "limits": resolve_limits(limits_of(spec), Limits())[0].as_dict(),
                "sandbox": describe(agent_sandbox(spec, config.sandbox)),
                "isolation": spec.isolation,
                "background": spec.background,
                "hooks": [
                    {
                        "event": hook.event,
                        "matcher": hook.matcher,
                        "command": " ".join((hook.command, *(hook.args or ()))),
                        "source": str(hook.source) if hook.source else None,
                    }
                    for hook in spec.hooks
                ],
            }
        )
    for name, error in config.broken_agents.items():
        if name not in config.agents:
            rows.append(
                {
                    "name": name,
                    "description": "",
                    "source": broken_source(name, error),
                    "builtins": [],
                    "servers": [],
                    "error": error,
                }
            )
    return rows


def broken_source(name: str, error: str) -> str | None:
    """The file of a broken agent, read from its error text (`PATH[:LINE]: ...`).

    Discovery keys a broken file by its stem, so its path ends in `NAME.md`.
    """
    marker = f"{name}.md"
    end = error.find(marker + ":")
    return error[: end + len(marker)] if end > 0 else None


def server_rows(config: Config) -> dict[str, dict[str, Any]]:
    """Each configured server's launch spec, with every `${VAR}` secret masked; an
    `"auth": "oauth"` server also gets its login state under `login` (never a token)."""
    from launcher.config.shown import masked_launch_spec

    rows = {name: masked_launch_spec(spec) for name, spec in config.servers.items()}
    for name, status in oauth_status(config).items():
        rows[name]["login"] = status
    return rows


def oauth_status(config: Config) -> dict[str, dict[str, Any]]:
    """Each OAuth server's stored login (`logged_in`, `expires_at`, `scopes`) and, when a
    `SUBAGENT_TOKEN_<SERVER>` variable overrides it, that variable's name (`token_env`)."""
    names = [n for n, s in config.servers.items() if s.auth == "oauth"]
    if not names:
        return {}
    import os

    from launcher.auth.tokens import TokenStore, env_token, token_env_name
    from launcher.state import state_home

    store = TokenStore(state_home())
    return {
        name: {
            **store.status(name),
            "token_env": token_env_name(name) if env_token(name, os.environ) else None,
        }
        for name in names
    }


def tools_report(session: Session) -> dict[str, Any]:
    """The contract's JSON object for `subagent tools --json`, read from a live session."""
    active = [
        {"name": e.name, "server": e.server, "tool": e.tool, "description": e.description}
        for e in session.active()
    ]
    muted = [
        {"name": e.name, "server": e.server, "tool": e.tool, "reason": reason}
        for e, reason in session.muted()
        if e.server is not None
    ]
    servers = {
        name: {"state": st.state, "tools": st.tools, "error": st.error}
        for name, st in session.status().items()
    }
    # Past the agent's `tool_search` threshold the next turn offers the built-ins and
    # `tool_search`; the active tools are still in scope, found and loaded on demand.
    on_demand = {"threshold": session.ondemand.threshold, "deferred": session.offer().deferred}
    return {
        "agent": session.agent.name,
        "active": active,
        "muted": muted,
        "servers": servers,
        "on_demand": on_demand,
    }


def log_table_rows(
    sessions: list[dict[str, Any]], now: float | None = None
) -> list[dict[str, str]]:
    """`subagent log`'s table: id, agent, status, turns, tokens, age, the prompt's first line."""
    now = time.time() if now is None else now
    return [
        {
            "id": s["id"],
            "agent": s["agent"],
            "status": s["status"],
            "turns": str(s["turns"]),
            "tokens": str(s["input_tokens"] + s["output_tokens"]),
            "cost": "-" if s.get("cost_usd") is None else f"{s['cost_usd']:.4f}",
            "age": age(now - s["started"]),
            "prompt": first_line(s["prompt"]),
            **({"match": match_line(s["match"])} if "match" in s else {}),
        }
        for s in sessions
    ]


def match_line(snippet: str, width: int = 72) -> str:
    """A search snippet on one line, the first `[match]` in view: `…the [crash] when…`."""
    text = " ".join(snippet.split())
    if len(text) <= width:
        return text
    start = max(0, text.find("[") - width // 3)
    piece = text[start : start + width - 2]
    return ("…" if start else "") + piece + "…"


def age(seconds: float) -> str:
    """A short age: 45s, 12m, 3h, 9d."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{max(0, int(seconds))}s"


def first_line(text: str, width: int = 60) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"
