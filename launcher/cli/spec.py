"""One declaration per option: typer's `Option` (cli/options.py: `annotated`) and the fast
paths' parser (`parse`) are both made from the same `Opt`, so they cannot drift.

Stdlib only: `serve` and `log` parse plain arguments with `parse` before typer loads (a
host waits for serve's first answer; typer's import would come first). Anything `parse`
does not take as typer would — an unknown option, a bad value, `--` — makes it return
None, and typer parses and reports it, with its own messages and exit code 2.
"""

from pathlib import Path
from typing import Any

from launcher import settings

KINDS: dict[str, type] = {"str": str, "int": int, "float": float, "path": Path, "flag": bool}
"""An option's kind and the Python type typer converts its value to."""


class Opt:
    """One command-line option: flags, keyword, kind, default, bounds, help."""

    __slots__ = (
        "default",
        "dest",
        "envvar",
        "flags",
        "help",
        "hi",
        "is_dir",
        "kind",
        "lo",
        "metavar",
        "repeat",
    )

    def __init__(
        self,
        dest: str,
        *flags: str,
        kind: str = "str",
        default: Any = None,
        lo: float | None = None,
        hi: float | None = None,
        repeat: bool = False,
        is_dir: bool = False,
        envvar: settings.Setting | None = None,
        help: str = "",
        metavar: str | None = None,
    ) -> None:
        self.dest = dest
        self.flags = flags
        self.kind = kind
        self.default = False if kind == "flag" else default
        self.lo, self.hi = lo, hi
        self.repeat = repeat
        self.is_dir = is_dir
        self.envvar = envvar
        self.help = help
        self.metavar = metavar

    def convert(self, value: str) -> Any:
        """`value` typed and checked as typer would, or ValueError (typer's message then)."""
        if value == "" and self.kind == "path":
            raise ValueError(value)
        typed: Any = KINDS[self.kind](value)
        if (self.lo is not None and not typed >= self.lo) or (
            self.hi is not None and not typed <= self.hi
        ):
            raise ValueError(value)  # `not >=`: NaN is out of every range, as typer says
        if self.is_dir and not typed.is_dir():
            raise ValueError(value)
        return typed


def parse(opts: tuple[Opt, ...], args: list[str], positional: str = "") -> dict[str, Any] | None:
    """`args` as keywords (each `Opt.dest`, and `positional` for one optional argument), or
    None for anything typer might read otherwise or refuse."""
    by_flag = {flag: opt for opt in opts for flag in opt.flags}
    out: dict[str, Any] = {o.dest: [] if o.repeat else o.default for o in opts}
    given: set[str] = set()
    if positional:
        out[positional] = None
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
        elif arg.startswith("-") and len(arg) > 2:
            name, eq, value = arg[:2], "=", arg[2:]  # `-n5`: a short option's value attached
        else:
            name, eq, value = arg, "", ""
        opt = by_flag.get(name)
        if opt is None:
            if arg.startswith("-") or not positional or out[positional] is not None:
                return None  # an unknown option, `--`, `-`, a second argument: typer's message
            out[positional] = arg
            continue
        if opt.kind == "flag":
            if eq:
                return None
            out[opt.dest] = True
            continue
        if not eq:
            if not rest:
                return None
            value = rest.pop(0)
        try:
            typed = opt.convert(value)
        except ValueError:
            return None
        given.add(opt.dest)
        if opt.repeat:
            out[opt.dest].append(typed)
        else:
            out[opt.dest] = typed
    for opt in opts:
        if opt.envvar is not None and opt.dest not in given and (raw := opt.envvar.text()):
            try:
                out[opt.dest] = opt.convert(raw)  # as click: an empty variable is unset
            except ValueError:
                return None
    return out


CONFIG_DIR = Opt(
    "config_dir",
    "--config-dir",
    kind="path",
    envvar=settings.CONFIG_DIR,
    help="Hermetic config directory.",
)
WORKSPACE = Opt(
    "workspace",
    "--workspace",
    kind="path",
    is_dir=True,
    help="Directory the file tools may touch (default: cwd).",
)
PROJECT = Opt(
    "project",
    "--project",
    kind="path",
    is_dir=True,
    help="Serve DIR's agents of every dialect, with DIR the workspace.",
)
NO_LOCK = Opt(
    "no_lock", "--no-lock", kind="flag", help="Ignore subagent.lock.json (offer unpinned tools)."
)
JSON = Opt("json_out", "--json", kind="flag", help="Machine-readable output.")

MAX_CONCURRENT_DEFAULT = 4
SPARES_DEFAULT = 1
TASK_TTL_DEFAULT_S = 3600.0
TASK_TTL_MIN_S = 0.001
TASK_TTL_MAX_S = 86400.0
SERVE: tuple[Opt, ...] = (
    Opt("model", "--model", help="Default model for sub-agents."),
    Opt(
        "max_concurrent",
        "--max-concurrent",
        kind="int",
        default=MAX_CONCURRENT_DEFAULT,
        lo=1,
        help="Sub-agents running at once.",
    ),
    Opt(
        "spares",
        "--spares",
        kind="int",
        default=SPARES_DEFAULT,
        lo=1,
        help="Workers kept started ahead of the next spawns (at most --max-concurrent).",
    ),
    Opt(
        "task_ttl",
        "--task-ttl",
        kind="float",
        default=TASK_TTL_DEFAULT_S,
        lo=TASK_TTL_MIN_S,
        hi=TASK_TTL_MAX_S,
        help="Seconds an ended MCP task's result is kept when the host names no ttl.",
    ),
    CONFIG_DIR,
    WORKSPACE,
    PROJECT,
    NO_LOCK,
    Opt(
        "scripted_dir",
        "--scripted-dir",
        kind="path",
        repeat=True,
        is_dir=True,
        metavar="DIR",
        help="Also accept a host's scripted:PATH model from DIR (repeatable).",
    ),
)
"""`serve`'s options the fast path reads; the others (`--http`, `--sandbox`, ...) go to typer."""

LOG_DEFAULT_N = 20
"""`subagent log` lists this many sessions unless `-n` says otherwise."""
LOG: tuple[Opt, ...] = (
    Opt("n", "-n", kind="int", default=LOG_DEFAULT_N, lo=1, help="How many sessions to list."),
    Opt("query", "-q", "--query", help="Full-text search of what was said."),
    Opt("usage", "--usage", kind="flag", help="Token and time totals per model."),
    Opt("older_than", "--older-than", help="With `prune`: an age such as 30d, 12h."),
    JSON,
)
"""Every option of `log` (its one argument is `ref`)."""
