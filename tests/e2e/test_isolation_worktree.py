"""`isolation: worktree` end to end: batch and spawn runs that edit one repository at once."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.batch_support import results
from tests.e2e.conftest import Subagent, cli_env, write_config
from tests.worktree_support import branches, git, make_repo, worktree_paths

pytestmark = pytest.mark.e2e

BATCH_LIMIT_S = 120.0
"""Four short tasks, each a Python worker, on a loaded 2-core box."""
README = "# project\n\nline to edit\n"


def script(root: Path, name: str, calls: list[dict]) -> str:
    """A scripted model: one turn of `calls`, then a final answer."""
    path = root / f"{name}.yaml"
    steps = [{"call": calls}] if calls else []
    path.write_text(json.dumps({"steps": [*steps, {"say": f"{name} done"}]}))
    return f"scripted:{path}"


def test_a_batch_of_three_editing_one_file_leaves_three_branches_and_the_checkout_untouched(
    tmp_path: Path, subagent: Subagent
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": README})
    config = write_config(tmp_path / "cfg", {})
    edits = {
        "t0": [{"tool": "write", "args": {"path": "README.md", "content": "t0 was here\n"}}],
        "t1": [
            {
                "tool": "edit",
                "args": {"path": "README.md", "old": "line to edit", "new": "t1 was here"},
            }
        ],
        "t2": [{"tool": "write", "args": {"path": "README.md", "content": "t2 was here\n"}}],
        "t3": [{"tool": "read", "args": {"path": "README.md"}}],  # changes nothing
    }
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "".join(
            json.dumps({"id": i, "prompt": "edit", "model": script(tmp_path, i, calls)}) + "\n"
            for i, calls in edits.items()
        )
    )
    out = tmp_path / "results.jsonl"

    run = subagent.run(
        "batch",
        str(tasks),
        "--config-dir",
        str(config),
        "--workspace",
        str(repo),
        "--out",
        str(out),
        "--jobs",
        "4",
        "--isolation",
        "worktree",
        timeout=BATCH_LIMIT_S,
    )

    assert run.code == 0, run.stderr
    rows = {r["id"]: r for r in results(out)}
    assert sorted(rows) == ["t0", "t1", "t2", "t3"]
    assert all(r["status"] == "completed" for r in rows.values()), rows
    # The user's checkout: the same file, nothing staged, nothing new.
    assert (repo / "README.md").read_text() == README
    assert git(repo, "status", "--porcelain") == ""
    kept = {i: rows[i]["worktree"] for i in ("t0", "t1", "t2")}
    assert sorted(w["branch"] for w in kept.values()) == branches(repo)
    assert len(branches(repo)) == 3
    for task_id, tree in kept.items():
        assert tree["changed"] is True and tree["branch"].startswith(f"subagent/{task_id}-")
        assert "README.md" in tree["diffstat"] and "1 file changed" in tree["diffstat"]
        assert f"worktree: branch {tree['branch']}" in rows[task_id]["result"]
        text = (Path(tree["path"]) / "README.md").read_text()
        assert f"{task_id} was here" in text  # each run's own edit, in its own repository
        assert git(repo, "show", f"{tree['branch']}:README.md") == text  # and on its branch
        assert git(Path(tree["path"]), "diff", "--cached", "--stat").rstrip() == tree["diffstat"]
    # The unchanged run left nothing: no repository, no branch.
    assert rows["t3"]["worktree"]["changed"] is False
    assert rows["t3"]["worktree"]["path"] is None
    # No linked worktree: each run had a repository of its own, borrowing the user's objects.
    assert worktree_paths(repo) == [repo.resolve()]
    assert git(repo, "fsck", "--no-dangling").strip() == ""


def test_batch_isolation_outside_a_repository_is_exit_2_before_any_task(
    tmp_path: Path, subagent: Subagent
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    config = write_config(tmp_path / "cfg", {})
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "a", "prompt": "p"}) + "\n")

    run = subagent.run(
        "batch",
        str(tasks),
        "--config-dir",
        str(config),
        "--workspace",
        str(plain),
        "--isolation",
        "worktree",
    )

    assert run.code == 2, run.stderr
    assert "needs a git repository" in run.stderr and str(plain) in run.stderr
    assert "Traceback" not in run.stderr
    assert subagent.sessions() == []


def test_spawn_isolation_reports_the_branch_and_an_agent_field_isolates_too(
    tmp_path: Path, subagent: Subagent
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": README})
    agent = "---\nname: careful\nisolation: worktree\n---\nYou edit carefully.\n"
    config = write_config(tmp_path / "cfg", {}, {"careful": agent})
    write = [{"tool": "write", "args": {"path": "NEW.md", "content": "new\n"}}]
    base = ("spawn", "--config-dir", str(config), "--workspace", str(repo), "--json")

    edited = subagent.run(
        *base, "--isolation", "worktree", "--model", script(tmp_path, "w", write), "go"
    )
    looked = subagent.run(*base, "--agent", "careful", "--model", script(tmp_path, "r", []), "go")

    assert edited.code == 0, edited.stderr
    events = edited.json_lines()
    assert [e["type"] for e in events][-2:] == ["session_end", "worktree"]
    tree = events[-1]
    assert tree["changed"] is True and "NEW.md" in tree["diffstat"]
    assert (Path(tree["path"]) / "NEW.md").read_text() == "new\n"
    assert git(repo, "show", f"{tree['branch']}:NEW.md") == "new\n"
    assert not (repo / "NEW.md").exists()
    assert looked.code == 0, looked.stderr
    end = looked.json_lines()[-1]
    assert end["type"] == "worktree" and end["changed"] is False and end["path"] is None
    assert branches(repo) == [tree["branch"]]
    listed = subagent.run("agents", "--config-dir", str(config), "--json").json()
    assert {a["name"]: a["isolation"] for a in listed}["careful"] == "worktree"


def test_spawn_isolation_outside_a_repository_is_exit_2(tmp_path: Path, subagent: Subagent) -> None:
    config = write_config(tmp_path / "cfg", {})
    plain = tmp_path / "plain"
    plain.mkdir()
    run = subagent.run(
        "spawn",
        "--config-dir",
        str(config),
        "--workspace",
        str(plain),
        "--isolation",
        "worktree",
        "--model",
        script(tmp_path, "s", []),
        "go",
    )
    assert run.code == 2, run.stderr
    assert f"{plain} is not in one" in run.stderr
    assert subagent.sessions() == []
    resumed = subagent.run("spawn", "--resume", "last", "--isolation", "worktree", "more")
    assert resumed.code == 2, resumed.stderr
    assert "--resume continues in the stored workspace: drop --isolation" in resumed.stderr
    wrong = subagent.run("spawn", "--isolation", "container", "go")
    assert wrong.code == 2 and "--isolation: expected worktree, got 'container'" in wrong.stderr


def test_check_runs_an_isolated_agent_in_a_worktree(tmp_path: Path, subagent: Subagent) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": README})
    agent = "---\nname: careful\nisolation: worktree\n---\nYou edit carefully.\n"
    config = write_config(tmp_path / "cfg", {}, {"careful": agent})
    write = [{"tool": "write", "args": {"path": "README.md", "content": "changed\n"}}]
    script(config, "edit", write)
    (config / "checks").mkdir()
    (config / "checks" / "edits.yaml").write_text(
        "agent: careful\nrun:\n  scripted: ../edit.yaml\n  prompt: edit\n  calls: [write]\n"
    )

    run = subagent.run("check", "--config-dir", str(config), "--workspace", str(repo))

    assert run.code == 0, run.stdout + run.stderr
    assert (repo / "README.md").read_text() == README
    assert git(repo, "status", "--porcelain") == ""
    (kept,) = branches(repo)  # the check's run changed the file: its worktree is kept
    assert kept.startswith("subagent/careful-")


@pytest.mark.anyio
async def test_a_served_isolated_agent_tells_the_host_its_branch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": README})
    agent = "---\nname: careful\nisolation: worktree\n---\nYou edit carefully.\n"
    config = write_config(tmp_path / "cfg", {}, {"careful": agent})
    write = [{"tool": "write", "args": {"path": "README.md", "content": "served\n"}}]
    model = script(config, "served", write)  # a host's scripted: file lives in the config dir
    env = cli_env(tmp_path / "state")
    argv = ["-m", "launcher.cli", "serve", "--config-dir", str(config), "--workspace", str(repo)]
    params = StdioServerParameters(command=sys.executable, args=argv, env=env, cwd=str(tmp_path))
    with anyio.fail_after(BATCH_LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog), read_timeout_seconds=BATCH_LIMIT_S
        ) as client:
            result = await client.call_tool(
                "spawn_subagent", {"prompt": "edit", "agent": "careful", "model": model}
            )
    assert not result.is_error, result
    text = result.content[0].text
    tree = dict(result.structured_content or {})["worktree"]
    assert text.startswith("served done\n\nworktree: branch subagent/careful-")
    assert tree["changed"] is True and "README.md" in tree["diffstat"]
    assert (Path(tree["path"]) / "README.md").read_text() == "served\n"
    assert git(repo, "show", f"{tree['branch']}:README.md") == "served\n"
    assert (repo / "README.md").read_text() == README
