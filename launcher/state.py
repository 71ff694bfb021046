"""Where subagent keeps what outlives a process: `SUBAGENT_HOME`."""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

DEFAULT_HOME = Path("~/.local/state/subagent")


def state_home(env: dict[str, str] | None = None) -> Path:
    """`SUBAGENT_HOME`, else ~/.local/state/subagent."""
    env = dict(os.environ) if env is None else env
    value = env.get("SUBAGENT_HOME")
    return Path(value).expanduser() if value else DEFAULT_HOME.expanduser()


def new_session_id() -> str:
    """Sortable and unique: UTC time plus random hex."""
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)
