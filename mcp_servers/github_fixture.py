"""The `--fixture FILE` of `python -m mcp_servers.github`: read, check and complete it.

A user's CI serves its own repository data this way (no token, no network). The schema
(README "Stub servers for your CI"), with defaults for every optional field:

    {"default_repo": "OWNER/NAME",            optional: the first repository
     "repos": {"OWNER/NAME": {
        "description": "...",                 optional
        "issues": [{"number": 1, "title": "...", "state": "open" | "closed",
                    "labels": [], "author": "", "body": "",
                    "comments": [{"id": 1, "author": "", "body": "..."}]}],
        "pull_requests": [{... as an issue ..., "merged": false, "head": "", "base": "main"}]}}}

Only `repos`, and each item's `number` and `title`, are required.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STATES = ("open", "closed")


class FixtureError(ValueError):
    """A fixture file that cannot be served; the message names the file and the field."""


def load_fixture(path: Path) -> dict[str, Any]:
    """The fixture at `path`, checked, with every optional field filled in."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FixtureError(f"{path}: cannot read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise FixtureError(f"{path}: not UTF-8 text") from exc
    except json.JSONDecodeError as exc:
        raise FixtureError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from exc
    return _Checker(path).fixture(data)


class _Checker:
    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, message: str) -> FixtureError:
        return FixtureError(f"{self.path}: field '{where}': {message}")

    def typed(self, value: Any, kind: type | tuple[type, ...], where: str, what: str) -> Any:
        # bool is an int in Python; a fixture's `"number": true` is still wrong.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.fail(where, f"expected {what}, got {json.dumps(value)[:40]}")
        return value

    def fixture(self, data: Any) -> dict[str, Any]:
        self.typed(data, dict, "(top level)", "an object")
        if "repos" not in data:
            raise self.fail("repos", "missing (an object of OWNER/NAME -> repository)")
        repos = self.typed(data["repos"], dict, "repos", "an object")
        if not repos:
            raise self.fail("repos", "has no repository")
        checked = {name: self.repo(body, f"repos.{name}") for name, body in repos.items()}
        default = data.get("default_repo", next(iter(checked)))
        self.typed(default, str, "default_repo", "a string")
        if default not in checked:
            raise self.fail("default_repo", f"'{default}' is not one of repos")
        return {"default_repo": default, "repos": checked}

    def repo(self, body: Any, where: str) -> dict[str, Any]:
        self.typed(body, dict, where, "an object")
        issues = self.items(body.get("issues", []), f"{where}.issues", pull=False)
        pulls = self.items(body.get("pull_requests", []), f"{where}.pull_requests", pull=True)
        numbers = [item["number"] for item in [*issues, *pulls]]
        duplicate = next((n for n in numbers if numbers.count(n) > 1), None)
        if duplicate is not None:
            raise self.fail(where, f"number {duplicate} is used twice (issues and PRs share)")
        description = self.typed(body.get("description", ""), str, f"{where}.description", "text")
        return {"description": description, "issues": issues, "pull_requests": pulls}

    def items(self, value: Any, where: str, *, pull: bool) -> list[dict[str, Any]]:
        self.typed(value, list, where, "a list")
        return [self.item(item, f"{where}[{i}]", pull=pull) for i, item in enumerate(value)]

    def item(self, item: Any, where: str, *, pull: bool) -> dict[str, Any]:
        self.typed(item, dict, where, "an object")
        for key in ("number", "title"):
            if key not in item:
                raise self.fail(f"{where}.{key}", "missing")
        number = self.typed(item["number"], int, f"{where}.number", "an integer")
        if number < 1:
            raise self.fail(f"{where}.number", "must be 1 or more")
        state = item.get("state", "open")
        if state not in STATES:
            raise self.fail(f"{where}.state", f"expected open or closed, got {state!r}")
        out = {
            **item,
            "number": number,
            "title": self.typed(item["title"], str, f"{where}.title", "text"),
            "state": state,
            "labels": self.strings(item.get("labels", []), f"{where}.labels"),
            "author": self.typed(item.get("author", ""), str, f"{where}.author", "text"),
            "body": self.typed(item.get("body", ""), str, f"{where}.body", "text"),
            "comments": self.comments(item.get("comments", []), f"{where}.comments"),
        }
        if pull:
            out["merged"] = self.typed(item.get("merged", False), bool, f"{where}.merged", "bool")
            out["head"] = self.typed(item.get("head", ""), str, f"{where}.head", "text")
            out["base"] = self.typed(item.get("base", "main"), str, f"{where}.base", "text")
        return out

    def strings(self, value: Any, where: str) -> list[str]:
        self.typed(value, list, where, "a list of strings")
        return [self.typed(v, str, f"{where}[{i}]", "a string") for i, v in enumerate(value)]

    def comments(self, value: Any, where: str) -> list[dict[str, Any]]:
        self.typed(value, list, where, "a list")
        out = []
        for i, comment in enumerate(value):
            at = f"{where}[{i}]"
            self.typed(comment, dict, at, "an object")
            if "id" not in comment:
                raise self.fail(f"{at}.id", "missing")
            out.append(
                {
                    "id": self.typed(comment["id"], int, f"{at}.id", "an integer"),
                    "author": self.typed(comment.get("author", ""), str, f"{at}.author", "text"),
                    "body": self.typed(comment.get("body", ""), str, f"{at}.body", "text"),
                }
            )
        return out
