"""The threat model, written and enforced in one place: what the model may never change.

Trusted: the user, and what they wrote before the run (config, agent files, the
repository's git config and hooks). Not trusted: the model, and everything any process
it started writes — in this run or an earlier one. So the places the launcher or a host
reads its config from, and the parts of a repository that decide what git executes, are
read-only to the model: the file tools refuse them (`Protected.refusal`), and whatever a
shell command changed there is put back as it was when the session started, before the
tool's result is handed on (guard.py). The sandbox policy takes its protected
paths from here too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

GIT_EXECUTES: tuple[str, ...] = (
    "config",
    "config.worktree",
    "commondir",
    "hooks",
    "info",
    "worktrees",
    "objects/info/alternates",
)
"""Under a workspace's `.git/`: what decides what git runs (config: fsmonitor, drivers,
hooksPath; hooks; info/attributes) or where it reads that from (commondir, the records of
linked worktrees, the object stores it borrows: a planted alternates file would let the
next isolated run's repository, and the user's, read objects of a repository never given).
Of `worktrees`, the records the user's linked worktrees had at the start are protected in
LINKED_EXECUTES alone (`_records`): their index, HEAD and logs are the user's git's."""
MODEL_MEMORY: tuple[str, ...] = (".subagent/memory", ".subagent/memory-local")
"""Where the `memory` tools keep an agent's notes (`memory: project`, `local`): the model's
own writing, read back only as notes, so it stays writable inside the protected
`.subagent/`."""
LINKED_EXECUTES: tuple[str, ...] = ("commondir", "gitdir", "config.worktree")
"""Under a linked worktree's own git dir (writable for its index and HEAD): where its
config comes from."""
MAX_LINK_BYTES = 4096
"""A `.git` file or back-link longer than this is not git's."""


HOST_PLACES: tuple[str, ...] = (
    "opencode.json",  # OpenCode: `mcp` servers
    "opencode.jsonc",
    ".zed/settings.json",  # Zed: `context_servers`
    ".cursor",  # Cursor: mcp.json, hooks.json, environment.json
    ".vscode/tasks.json",  # VS Code: tasks run on folder open
    ".vscode/settings.json",
    ".roo/mcp.json",  # Roo Code
    ".kilocode/mcp.json",  # Kilo Code
    ".kiro/settings/mcp.json",  # Kiro
    ".amazonq/mcp.json",  # Amazon Q
    ".continue",  # Continue: mcpServers/, config
    ".windsurf",  # Windsurf: mcp_config.json
)
"""Workspace files other hosts start programs from (servers, hooks, tasks), beside the
ones the launcher itself reads: never the model's to write."""


def config_places() -> tuple[str, ...]:
    """Every workspace path the launcher or a host reads config from, taken from the
    config readers themselves (a folder covers what is under it)."""
    from launcher.config.claude_settings import SETTINGS_DIR
    from launcher.config.discovery import PROJECT_AGENT_DIRS, PROJECT_CONFIG_DIR
    from launcher.config.hosts import PROJECT_HOST_DIRS, PROJECT_HOST_FILES

    found = [PROJECT_CONFIG_DIR, SETTINGS_DIR]
    found += [PurePosixPath(folder).parts[0] for folder, _ in PROJECT_AGENT_DIRS]
    found += PROJECT_HOST_DIRS
    found += [name for name, _ in PROJECT_HOST_FILES]
    found += HOST_PLACES
    unique = list(dict.fromkeys(found))
    return tuple(p for p in unique if not any(_under(p, q) and p != q for q in unique))


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


@dataclass(frozen=True)
class Place:
    """One protected path: `rel` under the real directory `base`, but for `open` (paths
    relative to `base` below it that stay the model's)."""

    base: Path
    rel: str
    open: tuple[str, ...] = ()

    def opened(self, path: Path) -> bool:
        """Whether `path` is in one of the place's open sub-paths."""
        return any(_under(str(path), str(self.base / o)) for o in self.open)

    @property
    def path(self) -> Path:
        """The absolute path."""
        return self.base / self.rel


@dataclass(frozen=True)
class Protected:
    """A session's protected places (empty: nothing protected)."""

    places: tuple[Place, ...] = ()

    def paths(self) -> tuple[Path, ...]:
        """Every protected path, absolute."""
        return tuple(p.path for p in self.places)

    def covering(self, path: Path) -> Place | None:
        """The place `path` is (or is under), or None."""
        text = str(path)
        for place in self.places:
            if _under(text, str(place.path)) and not place.opened(path):
                return place
        return None

    def refusal(self, real: Path, lexical: Path) -> str | None:
        """Why a file tool may not write `real` (reached as `lexical`), or None."""
        place = self.covering(real) or self.covering(lexical)
        if place is None:
            return None
        return (
            f"'{place.rel}' is protected: the model may not change the config the launcher "
            "or a host reads, nor what decides what git runs (set `sandbox: {write_config: "
            "true}` in the agent to let it edit config); refused"
        )


def _read_small(path: Path) -> str:
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_LINK_BYTES + 1)
    except OSError:
        return ""
    if len(data) > MAX_LINK_BYTES:
        return ""
    try:
        return data.decode("utf-8").strip()
    except UnicodeDecodeError:
        return ""


def _real(base: Path, raw: str) -> Path:
    return Path(os.path.realpath(base / raw))


def _is_repository(common: Path) -> bool:
    """A git directory: HEAD, objects/ and refs/, none of them a symlink."""
    parts = (common / "HEAD", common / "objects", common / "refs")
    if any(p.is_symlink() or not p.exists() for p in parts):
        return False
    return (common / "objects").is_dir() and (common / "refs").is_dir()


def linked_worktree(workspace: Path) -> tuple[Path, Path] | None:
    """(the worktree's git dir, the common dir) when `workspace` is in a linked worktree
    whose `.git` file git's own back-link confirms; None otherwise (an ordinary checkout,
    no repository, or a `.git` file the back-link does not confirm)."""
    for root in (workspace, *workspace.parents):
        dot_git = root / ".git"
        if dot_git.is_symlink() or dot_git.is_dir():
            return None
        if dot_git.is_file():
            break
    else:
        return None
    line = _read_small(dot_git)
    if not line.startswith("gitdir:"):
        return None
    gitdir = _real(root, line.removeprefix("gitdir:").strip())
    if gitdir.parent.name != "worktrees" or not gitdir.is_dir():
        return None
    common = gitdir.parent.parent
    commondir = _read_small(gitdir / "commondir")
    if not commondir or _real(gitdir, commondir) != common or not _is_repository(common):
        return None
    # git's back-link: the worktree's record names the `.git` file that points at it.
    back = _read_small(gitdir / "gitdir")
    if not back or _real(gitdir, back) != Path(os.path.realpath(dot_git)):
        return None
    if common == Path("/") or workspace.is_relative_to(common):
        return None
    return gitdir, common


def _open_below(rel: str) -> tuple[str, ...]:
    return tuple(m for m in MODEL_MEMORY if _under(m, rel) and m != rel)


def _submodule_dirs(dot_git: Path, limit: int = 1000) -> list[str]:
    """The git dirs of the submodules under `.git/modules` (nested ones too), relative to
    the workspace: what decides what git runs in them is protected like the top one's."""
    found: list[str] = []
    pending = [("modules", dot_git / "modules")]
    while pending and len(found) < limit:
        rel, folder = pending.pop()
        if folder.is_symlink() or not folder.is_dir():
            continue
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False):
                if (Path(entry.path) / "HEAD").is_file():
                    found.append(f".git/{rel}/{entry.name}")
                    pending.append((f"{rel}/{entry.name}/modules", Path(entry.path) / "modules"))
                else:  # a submodule named a/b: its git dir is modules/a/b
                    pending.append((f"{rel}/{entry.name}", Path(entry.path)))
    return found


def _records(root: Path, rel: str) -> tuple[str, ...]:
    """Under a git dir's `worktrees` (`rel`), the records of the linked worktrees the user
    made: their index, HEAD and logs are written by the user's git in those worktrees, so
    only what decides what git runs there (LINKED_EXECUTES) is protected, not the rest."""
    if PurePosixPath(rel).name != "worktrees" or not _under(rel, ".git"):
        return ()
    try:
        entries = sorted(os.scandir(root / rel), key=lambda e: e.name)
    except OSError:
        return ()
    return tuple(f"{rel}/{e.name}" for e in entries if e.is_dir(follow_symlinks=False))


def _hooks_path(root: Path) -> str | None:
    """Where git runs the hooks from, relative to `root`, when `core.hooksPath` puts it in
    the workspace (not `.git/hooks`, not the workspace itself); else None."""
    from launcher.errors import RunError, UsageError
    from launcher.gitcmd import run_git

    try:  # the repository's own setting: the hardened git pins its own on the command line
        said = run_git("config", "--local", "--get", "core.hooksPath", cwd=root).strip()
        top = run_git("rev-parse", "--show-toplevel", cwd=root).strip()
    except (RunError, UsageError, OSError):
        return None
    if not said or not top:
        return None
    hooks = Path(os.path.realpath(Path(top) / os.path.expanduser(said)))
    if hooks == root or not hooks.is_relative_to(root):
        return None
    rel = hooks.relative_to(root).as_posix()
    return None if _under(rel, ".git") else rel


def protected_set(workspace: Path, *, write_config: bool = False) -> Protected:
    """The places in and around `workspace` the model may not change, as they are now
    (call it when the session starts: a `.git` that does not exist yet is protected whole)."""
    root = Path(os.path.realpath(workspace))
    rels = [] if write_config else list(config_places())
    dot_git = root / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        rels += [f".git/{name}" for name in GIT_EXECUTES]
        rels += [f"{m}/{name}" for m in _submodule_dirs(dot_git) for name in GIT_EXECUTES]
    else:
        rels.append(".git")  # a linked worktree's pointer file, or none yet: all of it
    hooks = _hooks_path(root)
    if hooks is not None and not any(_under(hooks, r) for r in rels):
        rels.append(hooks)  # husky's `.husky`: run by the user's own `git commit`
    places = [Place(root, rel, _open_below(rel) + _records(root, rel)) for rel in rels]
    places += [
        Place(root, f"{record}/{name}")
        for rel in rels
        for record in _records(root, rel)
        for name in LINKED_EXECUTES
    ]
    linked = linked_worktree(root)
    if linked is not None:
        places += [Place(linked[0], name) for name in LINKED_EXECUTES]
    return Protected(tuple(places))
