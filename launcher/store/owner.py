"""Who started a stored session, so serve lets a host resume only what it started.

A session a user runs (`spawn`, `batch`, `check`) has no owner: the user may resume any
session with `spawn --resume`. A session started through serve records the serve's
identity, derived from its config dir and its workspace (a restarted serve with the same
two is the same serve), and room for the caller that asked, once serve has callers of
its own (HTTP): a host may resume a session only when every part matches its own.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

DIGEST_CHARS = 32
"""Hex characters of the identity kept (128 bits): unique across every serve of a store."""


@dataclass(frozen=True)
class Owner:
    """The starter of a session through serve: which serve, and which of its callers
    (None while serve has one host on stdio, which is every caller it has)."""

    serve: str
    caller: str | None = None

    @classmethod
    def of_serve(cls, config_dir: Path | None, workspace: Path) -> Owner:
        """The identity of a serve with this config dir (None: discovered from the
        workspace) and workspace, both resolved; stable across restarts."""
        config = str(config_dir.resolve()) if config_dir is not None else ""
        key = f"{config}\0{workspace.resolve()}".encode()
        return cls(serve="serve-" + hashlib.sha256(key).hexdigest()[:DIGEST_CHARS])

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON object (serve's job line to its worker)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> Owner | None:
        """The record a job line carries; None for none (or a malformed one)."""
        if not isinstance(data, dict) or not isinstance(data.get("serve"), str):
            return None
        caller = data.get("caller")
        return cls(serve=data["serve"], caller=caller if isinstance(caller, str) else None)
