"""Release hygiene: a changelog that names the version the package reports, and no
placeholder address anywhere a user would copy it from."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import launcher

REPO = Path(__file__).resolve().parents[1]
PLACEHOLDERS = ("your-" + "org", "example-" + "org", "OWNER/" + "subagent")
"""Addresses that stand in for a real one (split so this file does not match itself)."""


def tracked_text_files() -> list[Path]:
    names = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, timeout=60
    ).stdout.split(b"\0")
    return [REPO / n.decode() for n in names if n and (REPO / n.decode()).is_file()]


def test_no_placeholder_address_in_any_tracked_file() -> None:
    found = []
    for path in tracked_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [f"{path.relative_to(REPO)}: {p}" for p in PLACEHOLDERS if p in text]
    assert found == []


def test_the_changelog_keeps_an_unreleased_section_and_names_this_version() -> None:
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert headings[0] == "Unreleased"
    assert launcher.__version__ in headings
    assert "Version policy" in text
    # The manual shows the same file, included whole.
    assert (REPO / "docs" / "changelog.md").read_text().strip() == '--8<-- "CHANGELOG.md"'
