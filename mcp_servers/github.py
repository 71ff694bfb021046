"""GitHub-like stub server over fixture data: `python -m mcp_servers.github [--fixture FILE]`.

`--fixture FILE` serves your own repositories (schema: mcp_servers/github_fixture.py);
without it, the shipped `fixtures/github.json`. A bad fixture exits 2 with the field named.

Writes (create_issue, add_issue_comment) live in memory for the process's lifetime.
`--lazy SECONDS` registers the write tools that long after the client's initialization
and then sends list_changed (in either protocol era).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from mcp_servers._common import CallLog, add_common_flags, early_start
from mcp_servers._table import ToolHandler, ToolOutput, ToolSpec, ToolTable
from mcp_servers.github_fixture import FixtureError, load_fixture

if TYPE_CHECKING:
    from mcp_servers._stub import StubServer

FIXTURE = Path(__file__).parent / "fixtures" / "github.json"

_REPO = {"type": "string", "description": "OWNER/NAME; defaults to the default repository"}
_NUMBER = {"type": "integer", "minimum": 1, "description": "issue or pull request number"}
_STATE = {"type": "string", "enum": ["open", "closed", "all"], "default": "open"}


class NotFoundError(LookupError):
    """A repository, issue or pull request that does not exist."""


class GithubData:
    """The fixture's repositories, issues and pull requests, mutable in memory."""

    def __init__(self, fixture: dict[str, Any]) -> None:
        self.default_repo: str = fixture["default_repo"]
        self.repos: dict[str, Any] = copy.deepcopy(fixture["repos"])
        self._next_comment_id = 1 + max(
            (c["id"] for r in self.repos.values() for item in _items(r) for c in item["comments"]),
            default=0,
        )

    def repo(self, name: str | None) -> dict[str, Any]:
        """The repository `name` (or the default one)."""
        key = name or self.default_repo
        if key not in self.repos:
            raise NotFoundError(f"repository {key!r} not found")
        return self.repos[key]

    def issue(self, number: int, repo: str | None) -> dict[str, Any]:
        """Issue `number` of `repo`."""
        for issue in self.repo(repo)["issues"]:
            if issue["number"] == number:
                return issue
        raise NotFoundError(f"issue #{number} not found in {repo or self.default_repo}")

    def pull_request(self, number: int, repo: str | None) -> dict[str, Any]:
        """Pull request `number` of `repo`."""
        for pr in self.repo(repo)["pull_requests"]:
            if pr["number"] == number:
                return pr
        raise NotFoundError(f"pull request #{number} not found in {repo or self.default_repo}")

    def create_issue(self, title: str, body: str, repo: str | None) -> dict[str, Any]:
        """Open a new issue; numbers continue after the highest issue or PR number."""
        target = self.repo(repo)
        number = 1 + max((item["number"] for item in _items(target)), default=0)
        issue = {
            "number": number, "title": title, "state": "open", "labels": [],
            "author": "stub-user", "body": body, "comments": [],
        }  # fmt: skip
        target["issues"].append(issue)
        return issue

    def add_comment(self, number: int, body: str, repo: str | None) -> dict[str, Any]:
        """Append a comment to issue `number`."""
        comment = {"id": self._next_comment_id, "author": "stub-user", "body": body}
        self.issue(number, repo)["comments"].append(comment)
        self._next_comment_id += 1
        return comment

    def search(self, query: str) -> list[dict[str, Any]]:
        """Issues of every repo matching all words; `is:`, `label:`, `repo:` qualifiers."""
        hits = []
        for repo_name, repo in self.repos.items():
            for issue in repo["issues"]:
                if _matches(query, repo_name, issue):
                    hits.append({"repo": repo_name, **_summary(issue)})
        return hits


def _items(repo: dict[str, Any]) -> list[dict[str, Any]]:
    return [*repo["issues"], *repo["pull_requests"]]


def _summary(item: dict[str, Any]) -> dict[str, Any]:
    keys = ("number", "title", "state", "labels", "author")
    return {k: item[k] for k in keys if k in item} | {"comments": len(item["comments"])}


def _matches(query: str, repo_name: str, issue: dict[str, Any]) -> bool:
    text = f"{issue['title']} {issue['body']}".lower()
    for word in query.lower().split():
        key, _, value = word.partition(":")
        if key == "is" and value in ("open", "closed"):
            ok = issue["state"] == value
        elif key == "label" and value:
            ok = value in (label.lower() for label in issue["labels"])
        elif key == "repo" and value:
            ok = repo_name.lower() == value
        else:
            ok = word in text
        if not ok:
            return False
    return True


def _by_state(items: list[dict[str, Any]], state: str) -> list[dict[str, Any]]:
    return [_summary(i) for i in items if state == "all" or i["state"] == state]


def _json(key: str, value: Any) -> ToolOutput:
    return ToolOutput(json.dumps(value, indent=2), structured={key: value})


def _guarded(fn: Callable[[dict[str, Any]], ToolOutput]) -> ToolHandler:
    """Turn NotFoundError into an error result the model can read."""

    async def handler(arguments: dict[str, Any]) -> ToolOutput:
        try:
            return fn(arguments)
        except NotFoundError as exc:
            return ToolOutput(f"Not found: {exc}", is_error=True)
        except (KeyError, TypeError, ValueError) as exc:
            return ToolOutput(f"Bad arguments: {exc!r}", is_error=True)

    return handler


def _schema(properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


class GithubTools:
    """The tool handlers over one GithubData; each takes the call's arguments."""

    def __init__(self, data: GithubData) -> None:
        self.data = data

    def list_issues(self, a: dict[str, Any]) -> ToolOutput:
        issues = self.data.repo(a.get("repo"))["issues"]
        return _json("issues", _by_state(issues, a.get("state", "open")))

    def get_issue(self, a: dict[str, Any]) -> ToolOutput:
        return _json("issue", self.data.issue(int(a["number"]), a.get("repo")))

    def list_pull_requests(self, a: dict[str, Any]) -> ToolOutput:
        prs = self.data.repo(a.get("repo"))["pull_requests"]
        return _json("pull_requests", _by_state(prs, a.get("state", "open")))

    def get_pull_request(self, a: dict[str, Any]) -> ToolOutput:
        return _json("pull_request", self.data.pull_request(int(a["number"]), a.get("repo")))

    def search_issues(self, a: dict[str, Any]) -> ToolOutput:
        return _json("issues", self.data.search(str(a["query"])))

    def create_issue(self, a: dict[str, Any]) -> ToolOutput:
        title, body = str(a["title"]), str(a.get("body", ""))
        return _json("issue", self.data.create_issue(title, body, a.get("repo")))

    def add_issue_comment(self, a: dict[str, Any]) -> ToolOutput:
        comment = self.data.add_comment(int(a["number"]), str(a["body"]), a.get("repo"))
        return _json("comment", comment)


_STRING = {"type": "string"}


def read_tools(tools: GithubTools) -> list[ToolSpec]:
    """The read-only tools, present from the start."""
    by_repo_state = _schema({"repo": _REPO, "state": _STATE})
    by_number = _schema({"number": _NUMBER, "repo": _REPO}, ["number"])
    return [
        ToolSpec(
            "list_issues",
            "List issues of a repository, filtered by state (default: open).",
            _guarded(tools.list_issues),
            by_repo_state,
        ),
        ToolSpec(
            "get_issue",
            "Get one issue with its body and comments.",
            _guarded(tools.get_issue),
            by_number,
        ),
        ToolSpec(
            "list_pull_requests",
            "List pull requests of a repository, filtered by state (default: open).",
            _guarded(tools.list_pull_requests),
            by_repo_state,
        ),
        ToolSpec(
            "get_pull_request",
            "Get one pull request with its body and comments.",
            _guarded(tools.get_pull_request),
            by_number,
        ),
        ToolSpec(
            "search_issues",
            "Search issues of all repositories: words match title and body; "
            "qualifiers is:open, is:closed, label:NAME, repo:OWNER/NAME.",
            _guarded(tools.search_issues),
            _schema({"query": _STRING}, ["query"]),
        ),
    ]


def write_tools(tools: GithubTools) -> list[ToolSpec]:
    """The tools that change data (registered late under `--lazy`)."""
    return [
        ToolSpec(
            "create_issue",
            "Open a new issue in a repository.",
            _guarded(tools.create_issue),
            _schema({"title": _STRING, "body": _STRING, "repo": _REPO}, ["title"]),
        ),
        ToolSpec(
            "add_issue_comment",
            "Add a comment to an issue.",
            _guarded(tools.add_issue_comment),
            _schema({"number": _NUMBER, "body": _STRING, "repo": _REPO}, ["number", "body"]),
        ),
    ]


def make_late_writes(
    tools: list[ToolSpec], delay: float
) -> Callable[[StubServer], Awaitable[None]]:
    """Background task registering `tools` `delay` seconds after initialization."""

    async def register_late(server: StubServer) -> None:
        await server.wait_initialized()
        await anyio.sleep(delay)
        for tool in tools:
            server.table.add(tool)
        await server.tools_changed()

    return register_late


def main(argv: Sequence[str] | None = None) -> None:
    """Parse flags and serve over stdio."""
    parser = argparse.ArgumentParser(prog="python -m mcp_servers.github", description=__doc__)
    add_common_flags(parser)
    parser.add_argument(
        "--lazy",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="register the write tools SECONDS after initialization",
    )
    parser.add_argument(
        "--fixture",
        type=Path,
        default=FIXTURE,
        help="your repositories' JSON (see github_fixture.py)",
    )
    args = parser.parse_args(argv)
    try:
        fixture = load_fixture(args.fixture)
    except FixtureError as exc:
        # Before the marker: a server that cannot serve its data never "started".
        sys.stderr.write(f"{parser.prog}: bad --fixture: {exc}\n")
        sys.exit(2)
    early_start(args)

    from mcp_servers import _stub  # the SDK import costs ~1.5 s; the marker is already there

    data = GithubData(fixture)
    tools = GithubTools(data)
    table = ToolTable(read_tools(tools))
    background = None
    if args.lazy > 0:
        background = make_late_writes(write_tools(tools), args.lazy)
    else:
        for tool in write_tools(tools):
            table.add(tool)
    server = _stub.StubServer(
        "github",
        table,
        call_log=CallLog(args.call_log),
        page_size=args.pages,
        instructions=f"GitHub-like fixture data; default repository {data.default_repo}.",
    )
    _stub.run(server, background)


if __name__ == "__main__":
    main(sys.argv[1:])
