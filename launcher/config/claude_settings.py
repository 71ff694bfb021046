"""Claude Code's settings files, read for Claude Code agents: permission denials and hooks.

Read, lowest precedence first: `~/.claude/settings.json` (user), the project's
`.claude/settings.json` and `.claude/settings.local.json`. As in Claude Code, a deny rule
of any file denies (`ask` too: there is nobody to ask here), hooks of every file add up
(one handler written in two files runs once), and `disableAllHooks` is the value of the
highest file that sets it. `permissions.allow` and `additionalDirectories` only widen
Claude Code's prompts: ignored. A malformed file refuses every Claude Code agent (its
error names file, line and field); other agents never read these files.
"""

from __future__ import annotations

import dataclasses
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from launcher.config.dialect_claude import TOOL_NAMES, deny_entries
from launcher.config.hooks_field import HookSpec, parse_hooks
from launcher.config.selectors import parse_selectors
from launcher.config.servers import _line_of as line_of
from launcher.config.servers import parse_json
from launcher.config.types import AgentSpec, Selector
from launcher.errors import ConfigError

SETTINGS_DIR = ".claude"
PROJECT_FILES: tuple[str, ...] = ("settings.json", "settings.local.json")
"""A project's settings in its `.claude/`, lower precedence first."""
USER_FILE = Path(".claude") / "settings.json"
"""The user's settings, under HOME; read only when discovery is not hermetic."""

QUIET_MODES: tuple[str, ...] = ("default", "acceptEdits", "bypassPermissions", "auto")
"""`permissions.defaultMode` values that change nothing here: a sub-agent never asks."""
_RULE = re.compile(r"^([^()]*)(?:\((.*)\))?$", re.S)
_GLOB = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class ClaudeSettings:
    """What the settings files say to a Claude Code agent (nothing when none was found)."""

    files: tuple[Path, ...] = ()
    """The files read, lowest precedence first."""
    deny: tuple[Selector, ...] = ()
    hooks: tuple[HookSpec, ...] = ()
    hooks_off: Path | None = None
    """The file whose `disableAllHooks: true` turns every hook off."""
    project_dir: Path | None = None
    """The project whose `.claude/` was read: CLAUDE_PROJECT_DIR for its agents' hooks."""
    error: ConfigError | None = None
    notes: tuple[str, ...] = ()


def settings_files(project_dir: Path | None, home: Path | None) -> list[Path]:
    """The settings files Claude Code reads there, lowest precedence first (existing or not)."""
    files = [home / USER_FILE] if home is not None else []
    if project_dir is not None:
        files += [project_dir / SETTINGS_DIR / name for name in PROJECT_FILES]
    return files


def read_claude_settings(files: Sequence[Path], project_dir: Path | None) -> ClaudeSettings:
    """The settings in `files` (lowest precedence first); a malformed one sets `error`."""
    reader = _Reader(project_dir)
    seen: set[Path] = set()
    for path in files:
        try:
            if not _is_file(path) or path.resolve() in seen:
                continue
            seen.add(path.resolve())
            reader.read(path)
        except ConfigError as exc:
            return dataclasses.replace(reader.result(), error=exc)
    return reader.result()


def narrow_claude_agent(spec: AgentSpec, settings: ClaudeSettings) -> AgentSpec:
    """`spec` with its settings' denials added and its hooks (its own and the settings')."""
    hooks = () if settings.hooks_off is not None else spec.hooks + settings.hooks
    return dataclasses.replace(
        spec,
        disallowed_tools=spec.disallowed_tools + settings.deny,
        hooks=tuple(dataclasses.replace(h, project_dir=settings.project_dir) for h in hooks),
    )


def _is_file(path: Path) -> bool:
    """Whether a settings file is there; ConfigError for something else in its place."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise ConfigError(f"cannot read settings file: {exc}", path=path) from exc
    if not stat.S_ISREG(mode):
        raise ConfigError("expected a settings file (a regular file)", path=path)
    return True


class _Reader:
    """Accumulates the settings of each file, in precedence order."""

    def __init__(self, project_dir: Path | None) -> None:
        self.project_dir = project_dir
        self.files: list[Path] = []
        self.deny: list[Selector] = []
        self.hooks: list[HookSpec] = []
        self.hooks_off: Path | None = None
        self.notes: list[str] = []

    def result(self) -> ClaudeSettings:
        return ClaudeSettings(
            files=tuple(self.files),
            deny=tuple(self.deny),
            hooks=tuple(self.hooks),
            hooks_off=self.hooks_off,
            project_dir=self.project_dir,
            notes=tuple(self.notes),
        )

    def read(self, path: Path) -> None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read settings file: {exc}", path=path) from exc
        data = parse_json(text, path)
        if not isinstance(data, dict):
            raise ConfigError("expected a JSON object of settings", path=path, line=1)
        self.files.append(path)
        self._permissions(data.get("permissions"), text, path)
        self._hooks(data.get("hooks"), text, path)
        if "disableAllHooks" in data:
            off = data["disableAllHooks"]
            if not isinstance(off, bool):
                raise _error("expected true or false", text, path, "disableAllHooks")
            self.hooks_off = path if off else None

    def _permissions(self, value: object, text: str, path: Path) -> None:
        if value is None:
            return
        if not isinstance(value, dict):
            raise _error("expected an object", text, path, "permissions")
        for key in ("deny", "ask"):
            rules = _rules(value.get(key), text, path, key)
            notes: list[str] = []
            entries = _deny_entries(rules, notes, path)
            if key == "ask" and rules:
                notes.append("there is nobody to ask here, so these are denied")
            self.notes += [f"{path}: permissions.{key}: {note}" for note in notes]
            line = line_of(text, "permissions", key)
            self.deny += parse_selectors(
                entries, path=path, field=f"permissions.{key}", line=line, deny=True
            )
        _rules(value.get("allow"), text, path, "allow")  # checked, then ignored: it only widens
        mode = value.get("defaultMode")
        if mode is not None and mode not in QUIET_MODES:
            raise _error(
                f"'{mode}' would narrow every Claude Code agent and cannot be honoured here "
                "(plan is read-only, dontAsk denies what is not pre-approved)",
                text,
                path,
                "permissions",
                "defaultMode",
            )

    def _hooks(self, value: object, text: str, path: Path) -> None:
        notes: list[str] = []
        try:
            found = parse_hooks(value, origin="settings", source=path, notes=notes)
        except ValueError as exc:
            raise _error(str(exc), text, path, "hooks") from exc
        line = line_of(text, "hooks")
        self.notes += [f"{path}: hooks: {note}" for note in notes]
        for spec in found:
            if spec not in self.hooks:  # one handler in two files runs once, as in Claude Code
                self.hooks.append(dataclasses.replace(spec, line=line))


def _rules(value: object, text: str, path: Path, key: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(rule, str) for rule in value):
        raise _error("expected a list of permission rules", text, path, "permissions", key)
    return [rule.strip() for rule in value if rule.strip()]


def _deny_entries(rules: list[str], notes: list[str], path: Path) -> list[str]:
    """Deny rules as `disallowed_tools` entries; tool-name globs (`*`, `B*`) expanded."""
    entries: list[str] = []
    for rule in rules:
        match = _RULE.match(rule)
        name = match.group(1).strip() if match else rule
        if name == "*":
            entries.append("*")
        elif _GLOB.search(name) and not name.startswith("mcp__"):
            named = [ours for theirs, ours in TOOL_NAMES.items() if fnmatchcase(theirs, name)]
            entries += named
            if named and match and match.group(2) is not None:
                notes.append(f"'{rule}': the whole tool is denied")
        else:
            entries += deny_entries([rule], notes, path)
    return entries


def _error(message: str, text: str, path: Path, *keys: str) -> ConfigError:
    return ConfigError(message, path=path, line=line_of(text, *keys), field=".".join(keys))
