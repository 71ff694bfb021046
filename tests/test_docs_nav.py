"""The manual's navigation (mkdocs.yml) lists every page in docs/, and only those; the
docs tooling is pinned in the `docs` extra."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def nav_pages(nav: list[object]) -> list[str]:
    out: list[str] = []
    for entry in nav:
        values = entry.values() if isinstance(entry, dict) else [entry]
        for value in values:
            out.extend(nav_pages(value) if isinstance(value, list) else [str(value)])
    return out


def test_nav_lists_every_page_once() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    listed = nav_pages(config["nav"])
    pages = sorted(p.name for p in (REPO / "docs").glob("*.md"))
    assert sorted(listed) == pages
    assert len(listed) == len(set(listed))
    assert config["strict"] is True


def test_docs_tools_are_pinned() -> None:
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["docs"]
    names = {r.split("==")[0] for r in extra}
    assert {"mkdocs", "mkdocs-material"} <= names
    assert all("==" in r for r in extra)


def test_the_readme_stays_short() -> None:
    # The reference lives in docs/; the README is what a newcomer reads first.
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= 250
    assert lines[0] == "# subagent"
    headings = [line for line in lines if line.startswith("## ")]
    assert headings[:2] == ["## Install", "## Quick start"]
