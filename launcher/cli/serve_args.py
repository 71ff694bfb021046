"""`--project DIR`: serve a project's agents of every dialect, as if started in DIR.

Stdlib only: the fast path reads this before anything else loads.
"""

from pathlib import Path

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
