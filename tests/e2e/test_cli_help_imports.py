"""`subagent --help` stays fast: it imports neither the MCP SDK, httpx, nor the bridge, and
`--help` (the group's or a command's) imports nothing `import typer` does not, beyond the
CLI's own signature modules: every other import belongs in a command's body."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import RUN_LIMIT_S, Subagent, write_config

pytestmark = pytest.mark.e2e

HEAVY = ("mcp", "mcp_types", "httpx", "httpx2", "launcher.bridge", "launcher.session")


SIGNATURES = {
    "launcher",
    "launcher.cli",
    "launcher.cli.__main__",
    "launcher.cli.entry",
    "launcher.cli.app",
    "launcher.cli.group",
    "launcher.cli.placeholders",
    "launcher.cli.options",
    "launcher.cli.loading",
    "launcher.cli.spec",
    "launcher.settings",
    "launcher.runtime",
}
"""What `--help` may load of the launcher besides the command modules: the entry point, the
app and its group, and what every signature shares (options and their table, the settings
table their variables are named from, and the typer-free loader), and the process's
`Runtime` the entry installs first (a stdlib-only leaf)."""


def _imported(args: list[str], subagent: Subagent, *, how: tuple[str, ...] = ()) -> set[str]:
    """Top-level and dotted module names `python -X importtime -m launcher.cli ARGS` imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *(how or ("-m", "launcher.cli")), *args],
        capture_output=True,
        text=True,
        env=subagent.env(),
        cwd=subagent.cwd,
        timeout=RUN_LIMIT_S,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
    assert lines, "no -X importtime output"
    return {line.rsplit("|", 1)[1].strip() for line in lines}


def _within(modules: set[str], rooms: tuple[str, ...]) -> set[str]:
    """The modules that are one of `rooms` or inside one."""
    return {m for m in modules if any(m == r or m.startswith(r + ".") for r in rooms)}


def _scripted_spawn_imports(tmp_path: Path, subagent: Subagent) -> set[str]:
    """What a plain `spawn` of a one-step scripted model imports (it does run an agent)."""
    config = write_config(tmp_path / "cfg", {})
    script = tmp_path / "s.yaml"
    script.write_text("steps:\n  - say: done\n")
    args = ["spawn", "--config-dir", str(config), "--model", f"scripted:{script}", "go"]
    modules = _imported(args, subagent)
    assert "launcher.agent" in modules
    return modules


def _heavy(modules: set[str]) -> set[str]:
    return _within(modules, HEAVY)


def test_help_imports_no_sdk_httpx_or_bridge(tmp_path: Path, subagent: Subagent) -> None:
    # An OAuth server: `servers` reads its login state from the token store, still light.
    remote = {"type": "http", "url": "http://127.0.0.1:9/mcp", "auth": "oauth"}
    config = str(write_config(tmp_path / "cfg", {"remote": remote}))
    for args in (
        ["--help"],
        ["tools", "--help"],
        ["login", "--help"],
        ["logout", "--help"],
        ["servers", "--config-dir", config],
        ["logout", "remote", "--config-dir", config],
    ):
        modules = _imported(args, subagent)
        assert "typer" in modules  # the parse sees real imports
        assert _heavy(modules) == set(), args
    # `servers` really loaded the config code and the token store, yet nothing heavy came.
    modules = _imported(["servers", "--config-dir", config], subagent)
    assert {"launcher.config.discovery", "launcher.auth.tokens"} <= modules


def test_command_help_imports_no_pydantic(subagent: Subagent) -> None:
    # typer coerces an unset --help (None) of the group through a pydantic adapter; the
    # group's own bool flag avoids that import on every `subagent COMMAND --help`.
    for args in (
        ["--help"],
        ["spawn", "--help"],
        ["tools", "--help"],
        ["serve", "--help"],
        ["login", "--help"],
    ):
        modules = _imported(args, subagent)
        assert "typer" in modules
        assert {m for m in modules if m.split(".")[0] == "pydantic"} == set(), args


def test_help_imports_nothing_beyond_typer_and_the_signatures(subagent: Subagent) -> None:
    from launcher.cli.app import app
    from launcher.cli.group import command_name

    # What the interpreter, `-m` (runpy) and typer load anyway: the baseline of bench/cli_help.py.
    baseline = _imported([], subagent, how=("-c", "import runpy, typer"))
    commands = {command_name(info): info.callback.__module__ for info in app.registered_commands}
    allowed = SIGNATURES | set(commands.values())
    for args in (["--help"], *([name, "--help"] for name in commands)):
        modules = _imported(args, subagent)
        extra = {m for m in modules - baseline if m not in allowed and m.split(".")[0] != "typer"}
        assert extra == set(), (
            f"`subagent {' '.join(args)}` imported {sorted(extra)}: "
            "move them into the body of the command that uses them"
        )
    # The listing built no command: every signature module loaded, none of their bodies' needs.
    modules = _imported(["--help"], subagent)
    assert set(commands.values()) <= modules
    assert not {"json", "secrets", "launcher.state", "launcher.errors"} & modules


def test_without_an_endpoint_nothing_of_opentelemetry_is_imported(
    tmp_path: Path, subagent: Subagent
) -> None:
    # Traces are off without OTEL_EXPORTER_OTLP_ENDPOINT: neither the OTel SDK nor its API
    # is loaded, by `--help` or by a plain spawn that runs an agent and a tool.
    assert _within(_imported(["--help"], subagent), ("opentelemetry",)) == set()
    modules = _scripted_spawn_imports(tmp_path, subagent)
    assert "launcher.telemetry" in modules  # the seams are there, and only the switch
    assert _within(modules, ("opentelemetry",)) == set()
    assert _within(modules, ("launcher.telemetry",)) == {
        "launcher.telemetry",
        "launcher.telemetry.switch",
    }
