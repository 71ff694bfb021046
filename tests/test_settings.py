"""The settings table: every `SUBAGENT_*` variable once, read through it, drawn in the docs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from launcher import settings
from launcher.settings import SETTINGS

ROOT = Path(__file__).resolve().parents[1]
CONFIGURATION = ROOT / "docs" / "configuration.md"
MARKERS = {
    False: ("<!-- settings: generated", "<!-- end settings -->"),
    True: ("<!-- internal settings: generated", "<!-- end internal settings -->"),
}


def drawn(internal: bool) -> str:
    """The table between the page's markers (the marker lines left out)."""
    start, end = MARKERS[internal]
    text = CONFIGURATION.read_text(encoding="utf-8")
    body = text.split(start, 1)[1].split(end, 1)[0]
    return body.split("\n", 1)[1]


@pytest.mark.parametrize("internal", [False, True], ids=["users", "internal"])
def test_the_configuration_page_draws_the_table(internal: bool) -> None:
    # Regenerate with: python -c "from launcher import settings; print(settings.markdown())"
    assert drawn(internal) == settings.markdown(internal=internal)


def test_each_variable_is_one_row() -> None:
    names = [s.shown for s in SETTINGS]
    assert len(names) == len(set(names))
    assert all(s.name.startswith(settings.PREFIX) and s.doc and s.kind for s in SETTINGS)
    families = [s for s in SETTINGS if s.family]
    assert all(s.name.endswith("_") for s in families)


def known(name: str) -> bool:
    """Whether `name` is a row, or a member of a family row."""
    return any(
        name == s.name or (s.family and name.startswith(s.name) and name != s.name)
        for s in SETTINGS
    )


def test_every_variable_the_code_and_docs_name_is_a_row() -> None:
    # A variable named in a message, a docstring or a page but missing here is one the
    # table (and so the docs) forgot.
    places = [*(ROOT / "launcher").rglob("*.py"), *(ROOT / "docs").glob("*.md"), ROOT / "README.md"]
    unknown = {
        f"{name} ({path.relative_to(ROOT)})"
        for path in places
        for name in re.findall(r"\bSUBAGENT_[A-Z0-9_]*[A-Z0-9]\b", path.read_text(encoding="utf-8"))
        if not known(name)
    }
    assert unknown == set()


def test_a_setting_reads_the_mapping_it_is_given() -> None:
    env = {"SUBAGENT_HOME": "/h", "SUBAGENT_STORE": "", "SUBAGENT_TOKEN_GITHUB": " t "}
    assert settings.HOME.raw(env) == "/h"
    assert settings.STORE.raw(env) == "" and settings.MODEL.raw(env) is None
    assert settings.MODEL.text(env) == ""
    assert settings.TOKEN.text(env, "GITHUB") == " t "
    assert settings.TOKEN.key("GITHUB") == "SUBAGENT_TOKEN_GITHUB"
    assert settings.TOKEN.shown == "SUBAGENT_TOKEN_<SERVER>"
    with pytest.raises(ValueError):
        settings.TOKEN.key()  # a family needs its suffix
    with pytest.raises(ValueError):
        settings.HOME.key("X")
    handover = {"SUBAGENT_SECRETS_FD": "7"}
    assert settings.SECRETS_FD.take(handover) == "7" and handover == {}


@pytest.mark.parametrize(
    ("value", "store", "cgroup_off", "no_mechanism", "legacy"),
    [
        (None, True, False, False, False),
        ("0", False, False, False, False),
        ("off", True, True, False, False),
        (" None ", True, False, True, False),
        ("YES", True, False, False, True),
        ("1", True, False, False, True),
    ],
)
def test_the_switches_keep_their_meaning(
    value: str | None, store: bool, cgroup_off: bool, no_mechanism: bool, legacy: bool
) -> None:
    def env(setting: settings.Setting) -> dict[str, str]:
        return {} if value is None else {setting.name: value}

    assert settings.store_enabled(env(settings.STORE)) is store
    assert settings.cgroup_off(env(settings.CGROUP)) is cgroup_off
    assert settings.no_sandbox_mechanism(env(settings.SANDBOX_MECHANISM)) is no_mechanism
    assert settings.bash_sandbox(env(settings.BASH_SANDBOX)) is legacy


def test_the_table_is_cheap_to_import() -> None:
    # The console script's fast paths load it first: the standard library's os, no more.
    probe = (
        "import sys, launcher; before = set(sys.modules); import launcher.settings; "
        "print(sorted(set(sys.modules) - before))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert set(eval(out)) <= {"launcher.settings", "collections.abc"}
