"""Loads the SDK side of the bridge (`launcher.bridge.sdk`) off the event loop, once.

The SDK import costs more than half a second; done in a worker thread it overlaps the
stdio server's own start-up instead of delaying it.
"""

from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING, cast

import anyio

from launcher.bridge.seam import SdkModule

if TYPE_CHECKING:
    from launcher.bridge import sdk as _real

    _HELD_TO_THE_SEAM: SdkModule = _real  # the type checker holds the module to the Protocol

_sdk: SdkModule | None = None
_sdk_lock = threading.Lock()


def _import_sdk() -> SdkModule:
    global _sdk
    # One importer at a time: threads importing one package at once can see it half-made.
    with _sdk_lock:
        if _sdk is None:
            _sdk = cast(SdkModule, importlib.import_module("launcher.bridge.sdk"))
        return _sdk


async def load_sdk() -> SdkModule:
    """`launcher.bridge.sdk`, imported in a worker thread the first time (the loop runs on)."""
    return _sdk if _sdk is not None else await anyio.to_thread.run_sync(_import_sdk)


async def describe_startup_error(exc: Exception) -> str:
    """A failed start's reason, in the SDK's terms when the SDK could be loaded at all."""
    try:
        sdk = await load_sdk()
    except Exception:
        return f"{type(exc).__name__}: {exc}"
    return sdk.describe_startup_error(exc)
