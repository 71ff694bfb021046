"""The `subagent tools` report: what a session offers, mutes and started (CONTRACT.md)."""

from __future__ import annotations

from typing import Any

from launcher.session import Session


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
    return {"agent": session.agent.name, "active": active, "muted": muted, "servers": servers}
