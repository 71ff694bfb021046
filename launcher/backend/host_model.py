"""Which `model` a host may name in `spawn_subagent`: a `scripted:` file only from serve's
own directories, and no error that shows what a file holds.

A `scripted:PATH` model reads PATH, and its parse errors would tell the host about that
file: so a host's spec is refused unless PATH (symlinks resolved) lies inside serve's
config dir, its workspace or a directory the operator allowed (`serve --scripted-dir`),
and a script there that does not parse is reported by line only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from launcher.errors import ConfigError, UsageError

SCRIPTED = "scripted:"
OWN_WORDS = ("cannot read script", "empty script")
"""Script errors worded wholly by us (an OS reason at most): safe to pass on."""


def scripted_path(spec: str, workspace: Path) -> Path:
    """The file a `scripted:` spec names, as the worker opens it (relative to the workspace)."""
    path = Path(spec[len(SCRIPTED) :]).expanduser()
    return (path if path.is_absolute() else workspace / path).resolve()


def check_host_model(spec: str | None, *, roots: Sequence[Path], workspace: Path) -> None:
    """Refuse a host's `scripted:` spec outside `roots`, or one whose script does not parse.

    Every message names the spec and the rule, never a byte of the file.
    """
    if not spec or not spec.startswith(SCRIPTED):
        return
    path = scripted_path(spec, workspace)
    if not any(path.is_relative_to(root.resolve()) for root in roots):
        where = ", ".join(dict.fromkeys(str(r) for r in roots))
        raise UsageError(
            f"model '{spec}': a scripted model from the host must be a file inside {where} "
            "(start serve with --scripted-dir DIR to allow another directory)"
        )
    from launcher.models.scripted import load_script

    try:
        load_script(path)
    except ConfigError as exc:
        if exc.message.startswith(OWN_WORDS):
            raise UsageError(f"model '{spec}': {exc.message}") from None
        # The parser's field names and values come from the file: say where, not what.
        line = f" (line {exc.line})" if exc.line else ""
        raise UsageError(
            f"model '{spec}': not a usable script{line}: run `subagent spawn --model {spec}` "
            "on this machine for the details"
        ) from None


def scripted_roots(
    config_dir: Path | None, workspace: Path, extra: Sequence[Path] = ()
) -> list[Path]:
    """The directories a host's `scripted:` file may come from: the config dir (or, when
    discovered, the user config dir), the workspace, and what the operator added."""
    config = config_dir or Path("~/.config/subagent").expanduser()
    return [config, workspace, *extra]
