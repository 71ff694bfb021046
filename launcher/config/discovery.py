"""Discovery: which agent files and `mcp.json` files make up the config, first wins."""

from __future__ import annotations

import dataclasses
import errno
import os
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from importlib import resources
from pathlib import Path

from launcher import settings
from launcher.config.agents import parse_agent_file, parse_agent_text
from launcher.config.claude_settings import (
    SETTINGS_DIR,
    ClaudeSettings,
    narrow_claude_agent,
    read_claude_settings,
    settings_files,
)
from launcher.config.dialect import Dialect
from launcher.config.dialect_claude import CLAUDE
from launcher.config.dialect_codex import CODEX
from launcher.config.dialect_gemini import GEMINI
from launcher.config.dialect_opencode import OPENCODE
from launcher.config.dialect_pi import PI, SUBAGENT
from launcher.config.frontmatter import claimed_names
from launcher.config.hosts import (
    PROJECT_HOST_FILES,
    add_host_servers,
    load_project_file,
    servers_from,
)
from launcher.config.lockfile import lock_path
from launcher.config.places import folder_dialect
from launcher.config.prices_field import read_config_prices
from launcher.config.sandbox_field import read_config_default
from launcher.config.selectors import selector_servers
from launcher.config.servers import read_server_file
from launcher.config.tool_search_field import ToolSearch
from launcher.config.tool_search_field import read_config_default as read_tool_search
from launcher.config.types import AgentSpec, Config, ModelPrice, SandboxSettings, ServerSpec
from launcher.errors import ConfigError, UsageError
from launcher.toolset.naming import sanitize

"""Environment variable naming a hermetic config directory (like `--config-dir`)."""

DEFAULT_AGENT = "general-purpose"
PROJECT_CONFIG_DIR = ".subagent"
"""The project's own config folder (`mcp.json`, `agents/`), read first."""

PROJECT_AGENT_DIRS: tuple[tuple[str, Dialect], ...] = (
    (".claude/agents", CLAUDE),
    (".pi/agents", PI),
    (".agents/agents", PI),
    (".codex/agents", CODEX),
    (".gemini/agents", GEMINI),
    (".opencode/agent", OPENCODE),
    (".opencode/agents", OPENCODE),
)
"""Other tools' agent folders in the project, read after `./.subagent/agents/`."""
USER_AGENT_DIRS: tuple[tuple[str, Dialect], ...] = (
    (".config/subagent/agents", SUBAGENT),
    (".claude/agents", CLAUDE),
    (".pi/agent/agents", PI),
    (".codex/agents", CODEX),
    (".gemini/agents", GEMINI),
    (".config/opencode/agent", OPENCODE),
    (".config/opencode/agents", OPENCODE),
)
"""The user-level agent folders under HOME, in discovery order."""


@dataclass
class _Collector:
    """Accumulates definitions in discovery order; the first of each name wins."""

    agents: dict[str, AgentSpec] = field(default_factory=dict)
    servers: dict[str, ServerSpec] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    sandbox: SandboxSettings | None = None
    tool_search: ToolSearch | None = None
    prices: dict[str, ModelPrice] = field(default_factory=dict)

    def add_agent_dir(
        self, directory: Path, dialect: Dialect = SUBAGENT, within: Path | None = None
    ) -> None:
        """Add `directory`'s agent files; `within`: a project, whose agent files must not
        be symlinks out of it (`passwd.md -> /etc/passwd` would become a prompt)."""
        if not _present(directory, stat.S_ISDIR, "a directory"):
            return
        seen_here: dict[str, Path] = {}
        root = within.resolve() if within is not None else None
        for path in sorted(directory.glob(f"*{dialect.suffix}")):
            if root is not None and not path.resolve().is_relative_to(root):
                self.warnings.append(
                    f"agent file skipped: {shown_path(path)}: a symlink out of the project "
                    f"({shown_path(path.resolve())}) is not read"
                )
                if _printable_utf8(path.stem) and not self._claimed(path.stem):
                    self.broken[path.stem] = f"{shown_path(path)}: a symlink out of the project"
                continue
            if not _printable_utf8(path.name):
                # A stem that is not text would be the agent's name: JSON cannot carry
                # it (serve died listing it) and a terminal would run its escapes.
                self.warnings.append(
                    f"agent file skipped: {shown_path(path)}: its name is not printable "
                    "UTF-8; rename it"
                )
                for claimed in claimed_names(path):
                    if not self._claimed(claimed):
                        self.broken[claimed] = f"{shown_path(path)}: name is not printable UTF-8"
                continue
            try:
                spec = parse_agent_file(path, self.warnings, dialect)
            except ConfigError as exc:
                self.warnings.append(f"agent file skipped: {exc}")
                # Every name its `name:` lines may spell too: a wider agent of that name
                # found later must not run in its place.
                for claimed in dict.fromkeys((path.stem, *claimed_names(path))):
                    if not self._claimed(claimed):
                        self.broken[claimed] = str(exc)
                continue
            if spec.name in seen_here:
                self.warnings.append(
                    f"{path}: agent '{spec.name}' is also defined in {seen_here[spec.name]}; "
                    "the first one is used"
                )
            seen_here.setdefault(spec.name, path)
            if self._claimed(spec.name):
                continue
            if spec.enabled:
                self.agents[spec.name] = spec
            else:
                # A disabled agent still claims its name: it hides one found later.
                self.broken[spec.name] = f"{path}: agent '{spec.name}' is disabled (enabled: false)"

    def add_servers(
        self, path: Path, env: Mapping[str, str], *, lenient: bool = False, key: str = "mcpServers"
    ) -> tuple[str, ...]:
        """Add `path`'s servers (first definition wins); returns its `servers_from` hosts.

        `lenient`: another host's project file, whose servers are under `key`."""
        # A FIFO or device is refused from its stat, never opened: reading it could block.
        if not _present(path, stat.S_ISREG, "a regular file"):
            return ()
        hosts: tuple[str, ...] = ()
        if lenient:
            servers, warnings = load_project_file(path, key, env)
        else:
            servers, warnings, hosts = read_server_file(path, env)
            if self.sandbox is None:
                self.sandbox = read_config_default(path)
            if self.tool_search is None:
                self.tool_search = read_tool_search(path)
            for model, price in read_config_prices(path).items():
                self.prices.setdefault(model, price)  # the first definition wins
        self.warnings.extend(warnings)
        for name, spec in servers.items():
            if lenient and _is_subagent_serve(spec):
                # A host's entry for serve itself (its snippet in the project's .mcp.json).
                self.warnings.append(f"{path}: server '{name}' is subagent serve: left out")
                continue
            self.servers.setdefault(name, spec)
        return hosts

    def apply_claude(self, settings: ClaudeSettings) -> None:
        """Narrow every Claude Code agent by its settings; a broken file refuses them all."""
        claude = [name for name, spec in self.agents.items() if spec.dialect == CLAUDE.name]
        if claude and settings.error is not None:
            self.warnings.append(f"Claude Code agents refused: {settings.error}")
        elif claude:
            self.warnings.extend(settings.notes)
        for name in claude:
            if settings.error is not None:
                del self.agents[name]
                self.broken[name] = str(settings.error)
            else:
                self.agents[name] = narrow_claude_agent(self.agents[name], settings)

    def add_builtins(self) -> None:
        for spec in builtin_agents():
            if not self._claimed(spec.name):
                self.agents[spec.name] = spec

    def _claimed(self, name: str) -> bool:
        # A broken file still claims its name, so a fix-me error is not hidden by a
        # same-named agent further down the search path.
        return name in self.agents or name in self.broken

    def build(self, lock_path: Path | None = None) -> Config:
        return Config(
            lock_path=lock_path,
            agents=self.agents,
            servers=self.servers,
            warnings=(*self.warnings, *_unknown_server_warnings(self.agents, self.servers)),
            broken_agents=self.broken,
            sandbox=self.sandbox,
            tool_search=self.tool_search,
            prices=self.prices,
        )


def _is_subagent_serve(spec: ServerSpec) -> bool:
    """Whether a server entry starts `subagent serve` (or `python -m launcher.cli serve`)."""
    words = [spec.command or "", *spec.args]
    if "serve" not in words:
        return False
    before = words[: words.index("serve")]
    return any(Path(word).name in ("subagent", "launcher.cli", "launcher") for word in before)


def _present(path: Path, is_kind: Callable[[int], bool], kind: str) -> bool:
    """False if nothing is at `path`; True if it is of the kind; else ConfigError naming it."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if os.path.lexists(path):
            raise ConfigError("is a dangling symlink", path=path) from None
        return False
    except OSError as exc:
        reason = "is a symlink loop" if exc.errno == errno.ELOOP else f"cannot be read: {exc}"
        raise ConfigError(reason, path=path) from exc
    if not is_kind(mode):
        raise ConfigError(f"expected {kind}", path=path)
    return True


def load_config(
    config_dir: Path | None = None,
    *,
    cwd: Path | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Config:
    """Discover agents and servers; hermetic when a config dir is given (or in the env)."""
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    if config_dir is None and (named := settings.CONFIG_DIR.text(env)):
        config_dir = Path(named)
    collector = _Collector()
    if home is None:
        home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    lock_file = lock_path(config_dir, cwd=cwd, home=home)
    hosts: list[str] = []
    if config_dir is not None:
        config_dir = cwd / config_dir.expanduser()
        if not config_dir.is_dir():
            raise ConfigError("config directory does not exist", path=config_dir)
        # Place decides from the real folder: `.claude/agents/..` or a symlink to `.claude`
        # is that `.claude`, with its settings.json denies.
        real = config_dir.resolve()
        hosts += _add_config_dir(collector, config_dir, env, dialect_at(real))
        # Hermetic: a project's own `.claude/` settings only, never the user's.
        project = real.parent if real.name == SETTINGS_DIR else None
        collector.apply_claude(read_claude_settings(settings_files(project, None), project))
    else:
        hosts += _add_config_dir(collector, cwd / PROJECT_CONFIG_DIR, env, within=cwd)
        for folder, dialect in PROJECT_AGENT_DIRS:
            collector.add_agent_dir(cwd / folder, dialect, within=cwd)
        # Other hosts' files may hold servers we cannot run (sse, unset variables):
        # skip those with a warning instead of failing every command.
        for name, key in PROJECT_HOST_FILES:
            collector.add_servers(cwd / name, env, lenient=True, key=key)
        for folder, dialect in USER_AGENT_DIRS:
            collector.add_agent_dir(home / folder, dialect)
        collector.apply_claude(read_claude_settings(settings_files(cwd, home), cwd))
        hosts += collector.add_servers(home / ".config" / "subagent" / "mcp.json", env)
    # User-level configs of other hosts only when asked: a general-purpose agent with no
    # `ext:` starts every allowed server.
    for host in servers_from(env, hosts):
        add_host_servers(collector.servers, collector.warnings, host, home, env)
    collector.add_builtins()
    return collector.build(lock_file)


def _add_config_dir(
    collector: _Collector,
    directory: Path,
    env: Mapping[str, str],
    dialect: Dialect = SUBAGENT,
    within: Path | None = None,
) -> tuple[str, ...]:
    if dialect is OPENCODE:
        collector.add_agent_dir(directory / "agent", dialect, within)  # opencode's own name
    collector.add_agent_dir(directory / "agents", dialect, within)
    return collector.add_servers(directory / "mcp.json", env)


DIALECTS: dict[str, Dialect] = {
    dialect.name: dialect for dialect in (SUBAGENT, CLAUDE, PI, CODEX, GEMINI, OPENCODE)
}
"""Every dialect with a reader, by the name `folder_dialect` gives."""


def dialect_at(directory: Path) -> Dialect:
    """The dialect of the agent files under `directory`, by place (config/places.py);
    ConfigError for a tool's folder whose agent files have no reader here."""
    name = folder_dialect(directory) or SUBAGENT.name
    if name not in DIALECTS:
        raise ConfigError(
            f"{name} agent files are not read here yet: their fields would be misread",
            path=directory,
        )
    return DIALECTS[name]


def builtin_agents() -> list[AgentSpec]:
    """The agents shipped in `launcher/builtin_agents/*.md` (source None)."""
    folder = resources.files("launcher") / "builtin_agents"
    specs = []
    for item in sorted(folder.iterdir(), key=lambda entry: entry.name):
        if item.name.endswith(".md"):
            spec = parse_agent_text(item.read_text(encoding="utf-8"), Path(str(item)))
            specs.append(dataclasses.replace(spec, source=None))
    return specs


def resolve_agent(config: Config, name: str) -> AgentSpec:
    """The agent named `name`; ConfigError if its file is broken, UsageError if unknown."""
    if name in config.agents:
        return config.agents[name]
    if name in config.broken_agents:
        raise ConfigError(config.broken_agents[name])
    known = ", ".join(sorted(config.agents)) or "none"
    raise UsageError(f"unknown agent '{name}'; known agents: {known}")


def check_ext_names(config: Config, names: Iterable[str]) -> None:
    """Raise UsageError if a `--ext NAME` names no configured server."""
    for name in names:
        if name not in config.servers:
            known = ", ".join(sorted(config.servers)) or "none"
            raise UsageError(
                f"no configured server named '{name}'; configured servers: {known}",
                field="--ext",
            )


def _unknown_server_warnings(
    agents: Mapping[str, AgentSpec], servers: Mapping[str, ServerSpec]
) -> list[str]:
    warnings: list[str] = []
    for spec in agents.values():
        where = str(spec.source) if spec.source is not None else "built-in"
        known = [*servers, *(server.name for server in spec.servers)]
        said: set[str] = set()
        for selector in (*(spec.tools or ()), *spec.disallowed_tools):
            patterns = selector_servers(selector)
            if not patterns or selector.raw in said or _names_a_server(patterns, known):
                continue
            said.add(selector.raw)  # one entry, read as several selectors, is said once
            warnings.append(
                f"{where}: agent '{spec.name}': '{selector.raw}' names no configured server"
            )
        if isinstance(spec.extensions, tuple):
            for server in spec.extensions:
                if server not in known:
                    warnings.append(
                        f"{where}: agent '{spec.name}': extensions entry '{server}' "
                        "names no configured server"
                    )
    return warnings


def _names_a_server(patterns: Iterable[str], servers: Iterable[str]) -> bool:
    """Whether a server part names a server, as configured or as exposed names spell it."""
    names = [(server, sanitize(server)) for server in servers]
    return any(
        pattern in pair or any(fnmatchcase(name, pattern) for name in pair)
        for pattern in patterns
        for pair in names
    )


def _printable_utf8(name: str) -> bool:
    """Whether a file name decoded from UTF-8 and holds no control or format character."""
    return name.isprintable() and not any("\udc80" <= char <= "\udcff" for char in name)


def shown_path(path: Path) -> str:
    """`path` safe for a terminal and for JSON: undecodable bytes and control characters
    escaped (`bad\\xff.md`, `nl\\nx.md`)."""
    raw = os.fsencode(path).decode("utf-8", errors="backslashreplace")
    return "".join(char if char.isprintable() else _escaped(char) for char in raw)


def _escaped(char: str) -> str:
    return repr(char)[1:-1] if ord(char) < 0x10000 else f"\\U{ord(char):08x}"
