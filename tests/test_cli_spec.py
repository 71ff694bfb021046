"""One CLI specification: every option of cli/spec.py's tables parses the same through the
fast path and through typer; what the fast path refuses, typer reports (exit 2, its words).

The cases are generated from the tables, so an option added there is tested both ways.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from launcher.cli import log as log_command
from launcher.cli import run, spec
from launcher.cli import serve as serve_command
from launcher.cli.app import app, click_command

HERE = str(Path(__file__).resolve().parent)


def good_values(opt: spec.Opt) -> list[str]:
    """Values typer takes for `opt`."""
    if opt.kind == "path":
        return [HERE] if opt.is_dir else ["cfg", HERE]
    if opt.kind == "int":
        low = int(opt.lo or 0)
        return [str(low), str(low + 2), f"+{low + 1}", f" {low + 3}"]
    if opt.kind == "float":
        low, high = opt.lo or 0.0, opt.hi or 1e9
        return [repr(low), repr(high), "1e2" if 100 <= high else repr(high / 2)]
    return ["x", "two words", "-dash", "a=b"]


def bad_values(opt: spec.Opt) -> list[str]:
    """Values typer refuses for `opt` (exit 2)."""
    if opt.kind == "path":
        return ["/nonexistent/dir", HERE + "/test_cli_spec.py"] if opt.is_dir else []
    bad = ["x", ""]
    if opt.lo is not None:
        bad += [repr(opt.lo - 1)] if opt.kind == "float" else [str(int(opt.lo) - 1)]
    if opt.hi is not None:
        bad += [repr(opt.hi * 2), "inf"]
    if opt.kind == "float":
        bad += ["nan"]
    return bad if opt.kind in ("int", "float") else []


def spellings(opt: spec.Opt, value: str) -> list[list[str]]:
    """Every way a command line can give `opt` the value `value`."""
    out: list[list[str]] = []
    for flag in opt.flags:
        out.append([flag, value])
        if flag.startswith("--"):
            out.append([f"{flag}={value}"])
        elif value and not value.startswith(" "):
            out.append([flag + value])  # `-n5`
    return out


def cases(table: tuple[spec.Opt, ...]) -> tuple[list[list[str]], list[list[str]]]:
    """(argument lists typer takes, argument lists typer refuses) for every option."""
    good: list[list[str]] = [[]]
    bad: list[list[str]] = []
    for opt in table:
        if opt.kind == "flag":
            good += [[flag] for flag in opt.flags] + [[*opt.flags, *opt.flags]]
            bad += [[f"{flag}=1"] for flag in opt.flags if flag.startswith("--")]
            continue
        for value in good_values(opt):
            good += spellings(opt, value)
        for value in bad_values(opt):
            bad += spellings(opt, value)
        bad += [[flag] for flag in opt.flags]  # the value missing
        if opt.repeat:
            good.append([opt.flags[0], good_values(opt)[0], f"{opt.flags[0]}={HERE}"])
    # All at once (less `--project`, which names the workspace and config itself).
    valued = [o for o in table if o.kind != "flag" and o is not spec.PROJECT]
    everything = [arg for o in valued for arg in spellings(o, good_values(o)[-1])[0]]
    good.append([arg for opt in table if opt.kind == "flag" for arg in opt.flags] + everything)
    bad += [["--unknown"], ["-z"]]
    return good, bad


SERVE_GOOD, SERVE_BAD = cases(spec.SERVE)
SERVE_BAD += [["--", "x"], ["x"]]
LOG_GOOD, LOG_BAD = cases(spec.LOG)
LOG_GOOD += [["last"], ["prune", "--older-than", "30d"], ["--json", "ID", "-q", "w"]]
LOG_BAD += [["a", "b"]]
LOG_UNUSUAL = [["--", "x"], ["-"], ["--", "-n"]]
"""Command lines typer takes that the fast path leaves to it (rare: not worth a rule)."""


def typer_serve(args: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, Any, str]:
    seen: dict[str, Any] = {}

    def record(**keywords: Any) -> int:
        seen.update(keywords)
        return 0

    monkeypatch.setattr(serve_command, "run_serve", record)
    monkeypatch.setattr(run, "finish", lambda code: None)  # the command leaves by os._exit
    result = CliRunner().invoke(app, ["serve", *args])
    return result.exit_code, seen, result.output


def typer_log(args: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, Any, str]:
    seen: dict[str, Any] = {}

    def record(ref: str | None, **keywords: Any) -> int:
        seen.update(ref=ref, **keywords)
        return 0

    monkeypatch.setattr(log_command, "run_log", record)
    result = CliRunner().invoke(app, ["log", *args])
    return result.exit_code, seen, result.output


@pytest.fixture(autouse=True)
def _no_config_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SUBAGENT_CONFIG_DIR", raising=False)


@pytest.mark.parametrize("args", SERVE_GOOD, ids=repr)
def test_serve_parses_every_option_as_typer_does(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, seen, output = typer_serve(args, monkeypatch)
    assert code == 0, output
    assert serve_command.parse_fast(args) == seen


@pytest.mark.parametrize("args", LOG_GOOD, ids=repr)
def test_log_parses_every_option_as_typer_does(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, seen, output = typer_log(args, monkeypatch)
    assert code == 0, output
    assert log_command.parse_fast(args) == seen


@pytest.mark.parametrize("args", SERVE_BAD, ids=repr)
def test_serve_leaves_what_typer_refuses_to_typer(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert serve_command.parse_fast(args) is None
    code, _, output = typer_serve(args, monkeypatch)
    assert code == 2 and "Error" in output, output


@pytest.mark.parametrize("args", LOG_BAD, ids=repr)
def test_log_leaves_what_typer_refuses_to_typer(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert log_command.parse_fast(args) is None
    code, _, output = typer_log(args, monkeypatch)
    assert code == 2 and "Error" in output, output


@pytest.mark.parametrize("args", LOG_UNUSUAL, ids=repr)
def test_log_leaves_the_unusual_to_typer(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert log_command.parse_fast(args) is None
    code, _, output = typer_log(args, monkeypatch)
    assert code == 0, output


@pytest.mark.parametrize("value", ["from-env", ""])
def test_an_options_variable_is_read_as_typer_reads_it(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUBAGENT_CONFIG_DIR", value)
    code, seen, output = typer_serve([], monkeypatch)
    assert code == 0, output
    assert serve_command.parse_fast([]) == seen
    assert seen["config_dir"] == (Path(value) if value else None)


@pytest.mark.parametrize(("name", "table"), [("serve", spec.SERVE), ("log", spec.LOG)])
def test_typers_options_are_the_tables(name: str, table: tuple[spec.Opt, ...]) -> None:
    # Every option typer knows is either the table's (same flags, default, bounds) or
    # one the fast path never takes (so typer parses any command line naming it).
    command = click_command().commands[name]
    by_dest = {o.dest: o for o in table}
    for param in command.params:
        if param.param_type_name != "option" or param.name == "help":
            continue
        opt = by_dest.pop(str(param.name), None)
        if opt is None:
            assert all(
                (log_command.parse_fast if name == "log" else serve_command.parse_fast)(
                    [flag, HERE]
                )
                is None
                for flag in param.opts
            ), param.opts
            continue
        assert tuple(param.opts) == opt.flags
        assert param.multiple == opt.repeat
        default = param.default if not opt.repeat else None
        assert default == (None if opt.repeat else opt.default)
        assert (param.min, param.max) == (opt.lo, opt.hi)
        assert param.envvar == (opt.envvar.name if opt.envvar else None)
    assert by_dest == {}, f"in the table, not in typer's {name}: {sorted(by_dest)}"


ERRORS = [
    (["serve", "--bogus"], "No such option: --bogus"),
    (["serve", "--model"], "Option '--model' requires an argument."),
    (["serve", "--max-concurrent", "0"], "Invalid value for '--max-concurrent'"),
    (["serve", "--spares", "0"], "Invalid value for '--spares'"),
    (["log", "--bogus"], "No such option: --bogus"),
    (["log", "-n"], "Option '-n' requires an argument."),
    (["log", "a", "b"], "Got unexpected extra argument(s) (b)"),
]


@pytest.mark.parametrize(("argv", "words"), ERRORS, ids=repr)
def test_the_console_script_reports_bad_arguments_as_typer_does(
    argv: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The real entry point, fast path first: the error is typer's own, word for word.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "SUBAGENT_HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "launcher.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert f"Error: {words}" in proc.stderr and "Traceback" not in proc.stderr
    with pytest.raises(SystemExit) as typers:  # typer alone, in this process
        click_command()(argv, prog_name="subagent")
    assert typers.value.code == 2
    assert proc.stderr == capsys.readouterr().err
