"""The threat model's one module: the protected set, putting it back, which `.git` to believe."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from launcher.errors import ToolError
from launcher.tools.files import edit_file, write_file
from launcher.tools.sandbox.gitdirs import worktree_git_dirs
from launcher.tools.workspace import Workspace
from launcher.trust import config_places, linked_worktree, protected_set
from launcher.trust.guard import Guard
from tests.worktree_support import make_repo


def test_the_config_places_come_from_the_config_readers() -> None:
    places = config_places()
    for name in (".subagent", ".claude", ".pi", ".agents", ".mcp.json", ".vscode/mcp.json"):
        assert name in places
    for name in (".cursor", ".codex", ".gemini", ".opencode"):
        assert name in places
    assert ".claude/agents" not in places  # covered by .claude


def test_a_missing_git_is_protected_whole_an_existing_one_in_parts(tmp_path: Path) -> None:
    plain = {p.rel for p in protected_set(tmp_path).places}
    assert ".git" in plain
    repo = make_repo(tmp_path / "repo", {"a": "a\n"})
    rels = {p.rel for p in protected_set(repo).places}
    assert {".git/config", ".git/hooks", ".git/info", ".git/commondir"} <= rels
    assert ".git" not in rels and ".git/objects" not in rels
    bare = {p.rel for p in protected_set(repo, write_config=True).places}
    assert ".claude" not in bare and ".git/hooks" in bare


def test_what_the_model_changed_is_put_back(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".claude/hooks/check.sh": "user\n"})
    guard = Guard(protected_set(repo))
    (repo / ".claude/hooks/check.sh").write_text("model\n")
    (repo / ".claude/hooks/check.sh").chmod(0o755)
    (repo / ".subagent").mkdir()
    (repo / ".subagent/mcp.json").write_text("{}")
    (repo / ".git/hooks/post-checkout").write_text("#!/bin/sh\n")
    (repo / "evil").mkdir()
    (repo / "evil/mcp.json").write_text("{}")
    (repo / ".vscode").symlink_to("evil")  # .vscode/mcp.json would read evil/mcp.json
    assert sorted(guard.restore()) == [".claude", ".git/hooks", ".subagent", ".vscode/mcp.json"]
    assert (repo / ".claude/hooks/check.sh").read_text() == "user\n"
    for gone in (".subagent", ".git/hooks/post-checkout", ".vscode"):
        assert not os.path.lexists(repo / gone), gone
    assert (repo / "evil/mcp.json").exists()  # not a protected place: left alone
    assert guard.restore() == []


def test_putting_back_never_writes_through_a_link(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a": "a\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    guard = Guard(protected_set(repo))
    os.rename(repo / ".git", tmp_path / "moved")
    (repo / ".git").symlink_to(outside)
    guard.restore()
    assert list(outside.iterdir()) == []
    assert (repo / ".git").is_dir() and not (repo / ".git").is_symlink()
    assert (repo / ".git/config").read_text() == (tmp_path / "moved/config").read_text()


@pytest.mark.parametrize("target", ["home", "root", "no-back-link"])
def test_a_git_file_is_believed_only_with_gits_back_link(tmp_path: Path, target: str) -> None:
    repo = make_repo(tmp_path / "repo", {"a": "a\n"})
    linked = tmp_path / "linked"
    subprocess.run(["git", "worktree", "add", "-q", "-b", "f", str(linked)], cwd=repo, check=True)
    assert linked_worktree(linked) is not None
    dirs = worktree_git_dirs(linked)
    common = repo / ".git"
    assert set(dirs) == {
        common / "worktrees/linked",
        common / "objects",
        common / "refs",
        common / "logs",
    }
    plain = tmp_path / "plain"
    plain.mkdir()
    gitdir = {"home": tmp_path, "root": Path("/"), "no-back-link": common / "worktrees/linked"}
    (plain / ".git").write_text(f"gitdir: {gitdir[target]}\n")
    assert linked_worktree(plain) is None
    assert worktree_git_dirs(plain) == ()


def test_the_file_tools_refuse_protected_places(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".claude/settings.json": "{}\n", "a.txt": "x\n"})
    ws = Workspace(repo, protected_set(repo))
    (repo / "link.json").symlink_to(".claude/settings.json")
    for path in (".mcp.json", ".claude/settings.json", "link.json", "./.git/hooks/pre-commit"):
        with pytest.raises(ToolError, match="protected"):
            write_file(ws, {"path": path, "content": "evil"}, 1000)
    with pytest.raises(ToolError, match="protected"):
        edit_file(ws, {"path": ".claude/settings.json", "old": "{}", "new": "[]"}, 1000)
    assert (repo / ".claude/settings.json").read_text() == "{}\n"
    assert not (repo / ".mcp.json").exists()
    write_file(ws, {"path": "b.txt", "content": "fine"}, 1000)
    assert (repo / "b.txt").read_text() == "fine"


def test_a_deep_or_locked_tree_the_model_made_is_removed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".claude/settings.json": "{}\n"})
    guard = Guard(protected_set(repo))
    deep = repo / ".subagent"
    deep.mkdir()
    fd = os.open(deep, os.O_RDONLY)
    try:
        for _ in range(3000):  # deeper than Python's recursion limit
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)
    (deep / "mcp.json").write_text("{}")
    locked = repo / ".claude" / "agents"
    locked.mkdir()
    (locked / "evil.md").write_text("---\nname: evil\n---\n")
    locked.chmod(0)
    assert sorted(guard.restore()) == [".claude", ".subagent"]
    assert not deep.exists() and not os.path.lexists(locked)
    assert (repo / ".claude/settings.json").read_text() == "{}\n"
    assert [p.name for p in repo.iterdir() if p.name.startswith(".subagent")] == []


def test_an_unchanged_file_too_large_to_copy_stays(tmp_path: Path) -> None:
    from launcher.trust import snapshot as guard_module

    repo = make_repo(tmp_path / "repo", {".claude/big.bin": "x" * 4096, ".claude/s.json": "{}"})
    limit = guard_module.MAX_SNAPSHOT_BYTES
    guard_module.MAX_SNAPSHOT_BYTES = 1024
    try:
        guard = Guard(protected_set(repo))
        (repo / ".claude/s.json").write_text("[]")
        assert guard.restore() == [".claude"]
    finally:
        guard_module.MAX_SNAPSHOT_BYTES = limit
    assert (repo / ".claude/big.bin").read_text() == "x" * 4096
    assert (repo / ".claude/s.json").read_text() == "{}"


def test_modes_and_read_only_directories_come_back(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".claude/hooks/check.sh": "user\n"})
    (repo / ".claude/hooks/check.sh").chmod(0o755)
    (repo / ".claude/hooks").chmod(0o555)
    try:
        guard = Guard(protected_set(repo))
        (repo / ".claude/hooks").chmod(0o755)
        (repo / ".claude/hooks/check.sh").write_text("model\n")
        (repo / ".claude/hooks/new.sh").write_text("model\n")
        assert guard.restore() == [".claude"]
        assert sorted(p.name for p in (repo / ".claude/hooks").iterdir()) == ["check.sh"]
        assert (repo / ".claude/hooks/check.sh").read_text() == "user\n"
        assert (repo / ".claude/hooks/check.sh").stat().st_mode & 0o777 == 0o755
        assert (repo / ".claude/hooks").stat().st_mode & 0o777 == 0o555
    finally:
        (repo / ".claude/hooks").chmod(0o755)


def test_an_agents_memory_stays_the_models_inside_the_protected_subagent(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    protected = protected_set(repo)
    guard = Guard(protected)
    memory = repo / ".subagent" / "memory" / "agent"
    memory.mkdir(parents=True)
    (memory / "note.md").write_text("remember\n")
    (repo / ".subagent" / "mcp.json").write_text("{}")
    assert guard.restore() == [".subagent"]
    assert (memory / "note.md").read_text() == "remember\n"
    assert not (repo / ".subagent" / "mcp.json").exists()
    ws = Workspace(repo, protected)
    write_file(ws, {"path": ".subagent/memory-local/agent/x.md", "content": "mine"}, 1000)
    with pytest.raises(ToolError, match="protected"):
        write_file(ws, {"path": ".subagent/agents/evil.md", "content": "x"}, 1000)
    assert guard.restore() == []


def test_a_used_up_copy_budget_never_hides_a_same_size_rewrite(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".claude/hooks/check.sh": "#!/bin/sh\nexit 0\n"})
    hook = repo / ".claude/hooks/check.sh"
    old = hook.stat()
    guard = Guard(protected_set(repo))
    (repo / ".subagent").mkdir()
    with open(repo / ".subagent/pad", "wb") as pad:
        pad.truncate(64 * 1024 * 1024 - 4)  # sparse: uses up the copy budget, no disk
    hook.write_text("#!/bin/sh\nid >&2\n")  # same size
    os.utime(hook, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert sorted(guard.changed()) == [".claude", ".subagent"]
    assert sorted(guard.restore()) == [".claude", ".subagent"]
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"
    assert not (repo / ".subagent").exists()


def test_a_changed_file_too_large_to_copy_is_removed_not_trusted(tmp_path: Path) -> None:
    from launcher.trust import snapshot as guard_module

    repo = make_repo(tmp_path / "repo", {".claude/big.bin": "x" * 4096, ".claude/s.json": "{}"})
    big = repo / ".claude/big.bin"
    old = big.stat()
    limit = guard_module.MAX_SNAPSHOT_BYTES
    guard_module.MAX_SNAPSHOT_BYTES = 1024
    try:
        guard = Guard(protected_set(repo))
        big.write_text("y" * 4096)
        os.utime(big, ns=(old.st_atime_ns, old.st_mtime_ns))
        said = guard.restore()
    finally:
        guard_module.MAX_SNAPSHOT_BYTES = limit
    assert said == [".claude (removed, too large to put back: .claude/big.bin)"]
    assert not big.exists()
    assert (repo / ".claude/s.json").read_text() == "{}"


def test_a_later_session_never_takes_a_siblings_plant_as_the_original(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a": "a\n"})
    first = Guard(protected_set(repo))
    (repo / ".subagent").mkdir()
    (repo / ".subagent/mcp.json").write_text('{"mcpServers": {"x": {"command": "id"}}}')
    later = Guard(protected_set(repo))  # starts while the first session's plant is there
    first.restore()  # the first session's command ends: its plant is removed
    first.release()
    (repo / ".subagent").mkdir()
    (repo / ".subagent/mcp.json").write_text("{}")
    assert later.restore() == [".subagent"]
    later.release()
    assert not (repo / ".subagent").exists()


def test_the_last_session_out_lets_the_originals_go(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".claude/settings.json": "{}\n"})
    one = Guard(protected_set(repo))
    one.release()
    (repo / ".claude/settings.json").write_text('{"user": "edited between runs"}\n')
    two = Guard(protected_set(repo))
    assert two.restore() == []
    two.release()
    assert "edited" in (repo / ".claude/settings.json").read_text()


def test_launchers_in_one_workspace_share_the_first_ones_originals(tmp_path: Path) -> None:
    """Batch and serve workers are processes: a later one takes the copy a live one made."""
    import sys

    repo = make_repo(tmp_path / "repo", {"a": "a\n"})
    home = tmp_path / "state"
    code = (
        "import sys; from pathlib import Path;"
        "from launcher.trust import protected_set; from launcher.trust.guard import Guard;"
        "g = Guard(protected_set(Path(sys.argv[1])), home=Path(sys.argv[2]));"
        "print('ready', flush=True); sys.stdin.readline(); g.release()"
    )
    first = subprocess.Popen(
        [sys.executable, "-c", code, str(repo), str(home)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert first.stdout is not None and first.stdout.readline() == "ready\n"
        (repo / ".subagent").mkdir()
        (repo / ".subagent/mcp.json").write_text('{"mcpServers": {"x": {"command": "id"}}}')
        later = Guard(protected_set(repo), home=home)  # the first launcher is still live
    finally:
        first.communicate("\n", timeout=60)
    assert later.restore() == [".subagent"]
    later.release()
    assert not (repo / ".subagent").exists()
    assert list((home / "guard").glob("*/originals.json")) == []  # the last one out


def test_a_hard_link_made_earlier_no_longer_reaches_a_protected_file(tmp_path: Path) -> None:
    """A link left by an earlier session would let a later one write past a read-only bind."""
    repo = make_repo(tmp_path / "repo", {".claude/hooks/check.sh": "#!/bin/sh\nexit 0\n"})
    hook = repo / ".claude/hooks/check.sh"
    hook.chmod(0o751)
    os.link(hook, repo / "notes.txt")
    guard = Guard(protected_set(repo))
    assert os.stat(hook).st_nlink == 1
    assert oct(os.stat(hook).st_mode & 0o777) == oct(0o751)
    (repo / "notes.txt").write_text("#!/bin/sh\nid\n")  # through the old link
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"
    assert guard.restore() == []
    guard.release()


HOST_FILES = (
    "opencode.json",
    "opencode.jsonc",
    ".zed/settings.json",
    ".cursor/hooks.json",
    ".cursor/environment.json",
    ".vscode/tasks.json",
    ".vscode/settings.json",
    ".roo/mcp.json",
    ".kilocode/mcp.json",
    ".kiro/settings/mcp.json",
    ".amazonq/mcp.json",
    ".continue/mcpServers/evil.yaml",
    ".windsurf/mcp_config.json",
)


def test_the_files_other_hosts_start_programs_from_are_put_back(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a": "a\n"})
    guard = Guard(protected_set(repo))
    for name in HOST_FILES:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text('{"evil": "sh -c id"}')
    guard.restore()
    guard.release()
    assert [n for n in HOST_FILES if os.path.lexists(repo / n)] == []


def test_a_hooks_path_inside_the_workspace_is_protected(tmp_path: Path) -> None:
    """husky's `core.hooksPath=.husky`: what is there runs on the user's `git commit`."""
    repo = make_repo(tmp_path / "repo", {".husky/pre-commit": "npx lint-staged\n"})
    subprocess.run(["git", "config", "core.hooksPath", ".husky"], cwd=repo, check=True)
    assert ".husky" in {p.rel for p in protected_set(repo).places}
    guard = Guard(protected_set(repo))
    (repo / ".husky/pre-commit").write_text("id > /tmp/owned\n")
    (repo / ".husky/post-checkout").write_text("id\n")
    assert guard.restore() == [".husky"]
    guard.release()
    assert sorted(p.name for p in (repo / ".husky").iterdir()) == ["pre-commit"]
    assert (repo / ".husky/pre-commit").read_text() == "npx lint-staged\n"


def test_a_hooks_path_outside_the_workspace_adds_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a": "a\n"})
    subprocess.run(["git", "config", "core.hooksPath", "/etc"], cwd=repo, check=True)
    rels = {p.rel for p in protected_set(repo).places}
    assert not any(r.startswith("/") or r.startswith("..") for r in rels)


def test_a_submodules_config_and_hooks_are_protected_like_the_top_ones(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a": "a\n"})
    inner = repo / ".git/modules/lib/modules/deep"
    (inner / "hooks").mkdir(parents=True)
    (inner / "config").write_text("[core]\n")
    (repo / ".git/modules/lib/config").write_text("[core]\n")
    (repo / ".git/modules/lib/hooks").mkdir()
    for git_dir in (inner, repo / ".git/modules/lib"):
        (git_dir / "HEAD").write_text("ref: refs/heads/main\n")
    guard = Guard(protected_set(repo))
    (repo / ".git/modules/lib/config").write_text("[core]\nfsmonitor = id\n")
    (inner / "hooks/post-checkout").write_text("#!/bin/sh\nid\n")
    (repo / ".git/modules/lib/objects").mkdir()  # its objects stay the model's to write
    said = guard.restore()
    guard.release()
    assert sorted(said) == [".git/modules/lib/config", ".git/modules/lib/modules/deep/hooks"]
    assert (repo / ".git/modules/lib/config").read_text() == "[core]\n"
    assert not (inner / "hooks/post-checkout").exists()
    assert (repo / ".git/modules/lib/objects").is_dir()


def test_a_reused_pid_never_keeps_a_dead_launchers_originals(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".claude/settings.json": "{}\n"})
    home = tmp_path / "state"
    Guard(protected_set(repo), home=home).release()
    (repo / ".claude/settings.json").write_text('{"old": 1}\n')
    first = Guard(protected_set(repo), home=home)
    users = next((home / "guard").glob("*/users"))
    (_, started, _) = next(users.iterdir()).name.split("-")
    copy = users.parent / "originals.json"
    stale = copy.read_text()  # says {"old": 1}
    first.release()
    # A dead launcher's copy and file whose pid is now this (live) process, started later.
    copy.write_text(stale)
    (users / f"{os.getpid()}-{int(started) + 1}-abc").touch()
    (repo / ".claude/settings.json").write_text('{"user": "edited between runs"}\n')
    later = Guard(protected_set(repo), home=home)
    assert later.restore() == []
    later.release()
    assert "edited" in (repo / ".claude/settings.json").read_text()
