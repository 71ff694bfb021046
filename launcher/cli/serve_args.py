"""`serve`'s plain arguments checked and typed as typer would (the fast path), and
`--project DIR`: serve a project's agents of every dialect, as if started in DIR.

Stdlib only: the fast path reads this before anything else loads.
"""

from pathlib import Path
from typing import Any

from launcher import settings

PROJECT_CONFLICT = (
    "--project serves what discovery finds in DIR; it takes no --workspace (DIR is the "
    "workspace) and no --config-dir or SUBAGENT_CONFIG_DIR (a hermetic config of its own)"
)


def project_conflict(project: Path | str | None, config_dir: object, workspace: object) -> bool:
    """Whether `--project` comes with an option that names another configuration."""
    hermetic = config_dir is not None or bool(settings.CONFIG_DIR.text())
    return project is not None and (hermetic or workspace is not None)


def resolve_project(
    project: Path | None, config_dir: Path | None, workspace: Path | None
) -> tuple[Path | None, Path | None]:
    """(config_dir, workspace) for serve: `--project DIR` is discovery from DIR with DIR
    the workspace; UsageError when another option names a configuration too."""
    if project is None:
        return config_dir, workspace
    if project_conflict(project, config_dir, workspace):
        from launcher.errors import UsageError

        raise UsageError(PROJECT_CONFLICT, field="--project")
    return None, project


def typed(raw: dict[str, Any], ttl_range: tuple[float, float]) -> dict[str, Any] | None:
    """Values converted and range-checked as typer would, or None (typer reports it)."""
    try:
        max_concurrent = int(raw["max_concurrent"])
        task_ttl = float(raw["task_ttl"])
    except ValueError:
        return None
    if max_concurrent < 1 or not ttl_range[0] <= task_ttl <= ttl_range[1]:
        return None
    if project_conflict(raw["project"], raw["config_dir"], raw["workspace"]):
        return None  # typer's path says why
    config_dir = raw["config_dir"]
    if config_dir is None:
        config_dir = settings.CONFIG_DIR.raw()
    workspace = raw["workspace"] if raw["project"] is None else raw["project"]
    if config_dir == "" or workspace == "" or "" in raw["scripted_dirs"]:
        return None
    for directory in [workspace, *raw["scripted_dirs"]]:
        if directory is not None and not Path(directory).is_dir():
            return None
    return {
        "model": raw["model"],
        "max_concurrent": max_concurrent,
        "task_ttl": task_ttl,
        "config_dir": Path(config_dir) if config_dir is not None else None,
        "workspace": Path(workspace) if workspace is not None else None,
        "no_lock": raw["no_lock"],
        "scripted_dirs": [Path(d) for d in raw["scripted_dirs"]],
    }
