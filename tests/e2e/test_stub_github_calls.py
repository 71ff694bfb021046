"""The github stub serves its fixture data, persists writes and flags unknown issues."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from tests.e2e.conftest import parse_events
from tests.e2e.stub_client import connect_stub, list_names, result_text

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


CALL_TIMEOUT_S = 10.0
ALL_TOOLS = {
    "list_issues",
    "get_issue",
    "create_issue",
    "add_issue_comment",
    "list_pull_requests",
    "get_pull_request",
    "search_issues",
}


async def test_github_stub_reads_fixture_and_persists_writes(tmp_path: Path) -> None:
    marker, call_log = tmp_path / "marker", tmp_path / "calls.jsonl"
    args = ("--marker", str(marker), "--call-log", str(call_log))
    async with connect_stub("github", *args, era="legacy", errlog=tmp_path / "err.log") as (
        client,
        _,
    ):
        with anyio.fail_after(CALL_TIMEOUT_S):
            assert set(await list_names(client)) == ALL_TOOLS
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["get_issue"].input_schema["required"] == ["number"]

            open_issues = await client.call_tool("list_issues", {"state": "open"})
            numbers = [i["number"] for i in open_issues.structured_content["issues"]]
            assert numbers == [1, 3]
            assert json.loads(result_text(open_issues))[0]["title"].startswith("Crash")

            created = await client.call_tool(
                "create_issue", {"title": "New from test", "body": "hello"}
            )
            number = created.structured_content["issue"]["number"]
            assert number == 6  # after issues 1-3 and pull requests 4-5
            await client.call_tool("add_issue_comment", {"number": number, "body": "first!"})

            fetched = await client.call_tool("get_issue", {"number": number})
            issue = fetched.structured_content["issue"]
            assert (issue["title"], issue["state"]) == ("New from test", "open")
            assert [c["body"] for c in issue["comments"]] == ["first!"]

            found = await client.call_tool("search_issues", {"query": "label:bug is:open"})
            assert {(i["repo"], i["number"]) for i in found.structured_content["issues"]} == {
                ("acme/widgets", 1),
                ("acme/gadgets", 1),
            }
            pr = await client.call_tool("get_pull_request", {"number": 5})
            assert pr.structured_content["pull_request"]["head"] == "fix/zero-size"

    assert marker.exists()
    logged = parse_events(call_log.read_text())
    assert [entry["tool"] for entry in logged] == [
        "list_issues",
        "create_issue",
        "add_issue_comment",
        "get_issue",
        "search_issues",
        "get_pull_request",
    ]
    assert logged[1]["arguments"] == {"title": "New from test", "body": "hello"}
    assert all(isinstance(entry["ts"], float) for entry in logged)


async def test_github_stub_unknown_issue_is_an_error_result(tmp_path: Path) -> None:
    async with connect_stub("github", era="modern", errlog=tmp_path / "err.log") as (client, _):
        with anyio.fail_after(CALL_TIMEOUT_S):
            missing = await client.call_tool("get_issue", {"number": 999})
            bad_repo = await client.call_tool("list_issues", {"repo": "nobody/nothing"})

    assert missing.is_error is True
    assert "issue #999 not found" in result_text(missing)
    assert bad_repo.is_error is True
    assert "nobody/nothing" in result_text(bad_repo)
