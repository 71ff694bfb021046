"""The `subagent` console script: secrets leave the environment block before typer loads.

A command that runs sessions re-executes itself at once when credential-named variables
are set (procs/hidden.py), so the re-exec costs one bare interpreter start-up, not a
second import of the CLI; `--help`, `agents` and `servers` never re-execute. `log` and
`serve` with plain arguments run without typer at all (cli/log.py, cli/serve.py: parse_fast),
parsed from the option table typer's commands are built from (cli/spec.py).
"""

from __future__ import annotations

import sys

SESSION_COMMANDS = frozenset(("spawn", "tools", "serve", "check", "lock", "batch"))
"""Commands that start sessions, whose processes the model's shell can see."""


def main() -> None:
    """Console-script entry point."""
    from launcher.runtime import Runtime, install

    install(Runtime())  # the process's state, owned from here on (launcher/runtime.py)
    args = sys.argv[1:]
    _refuse_non_utf8(args)
    if args[:1] in (["--version"], ["-V"]):
        from launcher.cli.version import version_line

        print(version_line())
        sys.exit(0)
    if args[:1] == ["log"] and "--help" not in args:
        _fast_log(args[1:])
    if args and args[0] in SESSION_COMMANDS and "--help" not in args:
        from launcher.procs.hidden import reexec_early, restore

        if not restore():
            reexec_early(list(getattr(sys, "orig_argv", [])) or [sys.executable, *sys.argv])
        from launcher.procs.pyenv import drop_written_paths

        drop_written_paths(".")  # a model's module there must not be imported later
    if args[:1] == ["serve"] and "--help" not in args:
        _fast_serve(args[1:])
    from launcher.cli.app import main as app_main

    app_main()


def _fast_serve(args: list[str]) -> None:
    """Run `subagent serve` without typer when its arguments are plain; else return.

    A host waits for serve's first answer: typer's import would come before it.
    """
    from launcher.cli.serve import parse_fast, run_serve

    keywords = parse_fast(args)
    if keywords is not None:
        from launcher.cli.run import finish, guarded

        finish(guarded(lambda: run_serve(**keywords)))


def _fast_log(args: list[str]) -> None:
    """Run `subagent log` without typer when its arguments are plain; else return."""
    from launcher.cli.log import parse_fast, run_log

    keywords = parse_fast(args)
    if keywords is not None:
        from launcher.cli.run import finish, guarded

        finish(guarded(lambda: run_log(**keywords)))


ARG_SHOWN_CHARS = 80
"""A refused argument is shown up to this many characters (a prompt may be long)."""


def _refuse_non_utf8(args: list[str]) -> None:
    """Exit 2 naming the first argument that is not UTF-8; every command checks it here.

    The OS hands Python such bytes as lone surrogates, which fail wherever the string is
    first encoded (the store, a JSON line, a file name): before any command runs, not there.
    """
    for position, arg in enumerate(args, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = _escaped(arg)
            if len(shown) > ARG_SHOWN_CHARS:
                shown = shown[:ARG_SHOWN_CHARS] + "..."
            sys.stderr.write(
                f"subagent: argument {position} ('{shown}') is not valid UTF-8;"
                " subagent takes UTF-8 arguments\n"
            )
            sys.exit(2)


def _escaped(arg: str) -> str:
    """`arg` with its undecodable bytes as `\\xNN`, the way a shell's `$'...'` writes them."""
    try:
        raw = arg.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no byte decodes to: not from the OS's argv
        return arg.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")
