"""`init --ci`'s install line: a real address when the install records one, else none."""

from __future__ import annotations

import importlib.metadata
import json
from email.message import Message

import pytest

from launcher.cli import init_files


class FakeDist:
    """A distribution whose metadata and direct_url.json are given."""

    def __init__(self, urls: list[str], direct: dict[str, object] | None) -> None:
        self.metadata = Message()
        for url in urls:
            self.metadata["Project-URL"] = url
        self.direct = direct

    def read_text(self, name: str) -> str | None:
        assert name == "direct_url.json"
        return None if self.direct is None else json.dumps(self.direct)


@pytest.mark.parametrize(
    ("urls", "direct", "want"),
    [
        (["Repository, https://git.example/acme/subagent"], None,
         "subagent @ git+https://git.example/acme/subagent"),
        ([], {"url": "https://git.example/acme/subagent",
              "vcs_info": {"vcs": "git", "commit_id": "ab12"}},
         "subagent @ git+https://git.example/acme/subagent@ab12"),
        # An editable or local install: a file: URL means nothing on a runner.
        ([], {"url": "file:///home/me/subagent", "dir_info": {"editable": True}}, None),
        ([], None, None),
    ],
)  # fmt: skip
def test_install_requirement(
    monkeypatch: pytest.MonkeyPatch, urls: list[str], direct: dict[str, object] | None,
    want: str | None,
) -> None:  # fmt: skip
    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: FakeDist(urls, direct))
    assert init_files.install_requirement() == want


def test_the_workflow_installs_the_known_requirement_directly() -> None:
    text = init_files.workflow_yaml("subagent @ git+https://git.example/a/b@ab12")
    assert 'pip install "subagent @ git+https://git.example/a/b@ab12"' in text
    assert "vars.SUBAGENT_REQUIREMENT" not in text
