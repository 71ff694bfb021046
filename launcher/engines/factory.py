"""`--engine NAME` to its class, each engine imported only when chosen.

Apart from base.py so that the engines import base and nothing imports back up: the
factory names every engine, every engine names base.
"""

from __future__ import annotations

from collections.abc import Callable

from launcher.engines.base import Engine, EngineOptions
from launcher.errors import UsageError

ENGINES = ("local", "ray")


def engine_factory(name: str) -> Callable[[EngineOptions], Engine]:
    """The engine class for `--engine NAME`; UsageError for any other name."""
    if name == "local":
        from launcher.engines.local import LocalEngine

        return LocalEngine
    if name == "ray":
        from launcher.engines.ray_engine import RayEngine

        return RayEngine
    raise UsageError(f"unknown engine '{name}' (choose {' or '.join(ENGINES)})")
