"""Loading the config for a command, typer-free: fast paths (`serve`) use it before typer.

A session command may re-execute itself a second time from here, after the console
script's early re-exec (cli/entry.py): which variables the config references is known only
once the config is read. It happens when no credential-named variable was set (so there was
no early re-exec) and the config references a set variable of a plain name, or when it
references one the early re-exec keeps for the interpreter (`SUBAGENT_*`, `PYTHON*`, `LC_*`:
procs/hidden.py KEEP_PREFIXES). Measured (bench/secret_reexec.py, `tools` on a 2-core
machine at load 10): this late re-exec costs 1.42-1.61x a run with nothing to hide, the
early one 1.18-1.21x. Removing the late one would mean an early re-exec of every session
command, nothing to hide or not (the early cost on every run), or reading the config before
typer with a second argument parser; it stays, paid only by the configs that need it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from launcher.config.types import Config


def load(config_dir: Path | None, *, session: bool = False, cwd: Path | None = None) -> Config:
    """The config, its warnings printed once; `session`: hide secrets before using them.

    A command that runs sessions must not hold secrets in its environment block, which
    the model's shell can read: it re-executes itself without them (procs/hidden.py), and
    the new process takes them back over a descriptor before the config is expanded.
    """
    from launcher.config.discovery import load_config

    cwd = cwd or Path.cwd()
    if session:
        from launcher.procs.hidden import restore

        restored = restore()
    config = load_config(config_dir, cwd=cwd)
    if session:
        from launcher.config.expand import referenced_names
        from launcher.procs.hidden import hide_referenced, reexec_hiding, secret_names

        inline = [s for agent in config.agents.values() for s in agent.servers]
        used = set().union(
            *(referenced_names(s.raw) for s in [*config.servers.values(), *inline]), set()
        )
        if not restored or hide_referenced(used):
            # Returns only if nothing is left to hide.
            reexec_hiding(secret_names(os.environ, used))
    from launcher.cli.render import for_terminal

    for warning in config.warnings:
        sys.stderr.write(f"subagent: warning: {for_terminal(warning)}\n")
    return config
