"""Which checks `subagent check` runs: agents' `expect:` blocks and `checks/*.yaml` files.

A check file names an `agent`, optionally `ext` (servers added as `--ext`), a `name`
(default: the file's stem) and `settle`, plus expectations as top-level keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from launcher.config.expect import CHECK_FILE_KEYS, EXPECT_KEYS, Expectations, parse_expectations
from launcher.config.plain_yaml import NoAliasLoader
from launcher.config.types import Config
from launcher.errors import ConfigError, UsageError

CHECKS_DIR = "checks"
"""Check files live in `CONFIG_DIR/checks/*.yaml`."""
_FILE_FIRST_LINE = 1


@dataclass(frozen=True)
class CheckCase:
    """One check: a session of `agent` (plus `ext`) and what it must show."""

    name: str
    agent: str
    expect: Expectations
    ext: tuple[str, ...] = ()
    source: Path | None = None  # the check file or agent file; None = a built-in agent


def checks_dir(config: Config) -> Path | None:
    """The config dir's `checks/`: beside the lock file, in the same directory."""
    return config.lock_path.parent / CHECKS_DIR if config.lock_path is not None else None


def load_check_file(path: Path) -> CheckCase:
    """Parse one check file; ConfigError naming the file, line and key if it is bad."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read check file: {exc}", path=path) from exc
    loader = NoAliasLoader(text)  # an alias expands without bound
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + _FILE_FIRST_LINE if mark is not None else None
        raise ConfigError(f"invalid YAML: {exc}", path=path, line=line) from exc
    finally:
        loader.dispose()
    if root is None:
        raise ConfigError("empty check file: it needs at least 'agent'", path=path)
    expect, extras = parse_expectations(
        root,
        data,
        path=path,
        line_offset=_FILE_FIRST_LINE,
        where="",
        extra_keys=tuple(k for k in CHECK_FILE_KEYS if k not in EXPECT_KEYS),
    )

    def text_field(key: str) -> str | None:
        if key not in extras:
            return None
        node, value = extras[key]
        if not isinstance(value, str) or not value.strip():
            raise ConfigError("expected a non-empty string", path=path, line=_line(node), field=key)
        return value.strip()

    agent = text_field("agent")
    if agent is None:
        raise ConfigError("a check file must name its 'agent'", path=path, field="agent")
    ext: tuple[str, ...] = ()
    if "ext" in extras:
        node, value = extras["ext"]
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
            raise ConfigError(
                "expected a server name or a list of them", path=path, line=_line(node), field="ext"
            )
        ext = tuple(items)
    return CheckCase(text_field("name") or path.stem, agent, expect, ext, path)


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + _FILE_FIRST_LINE


def agent_case(config: Config, agent: str) -> CheckCase:
    """The check of an agent's own `expect:` block (an agent without one: start + drift)."""
    spec = config.agents[agent]
    return CheckCase(agent, agent, spec.expect or Expectations(), (), spec.source)


def select_cases(config: Config, named: Sequence[str]) -> list[CheckCase]:
    """The checks to run: each named agent or check file; none named: every agent with an
    `expect:` block and every file in the config dir's `checks/`.

    A broken agent file is a config error here (exit 2), not a skipped check.
    """
    if named:
        cases = []
        for item in named:
            path = Path(item)
            if path.suffix in (".yaml", ".yml") or path.is_file():
                if not path.is_file():
                    raise UsageError(f"no such check file: {item}")
                cases.append(load_check_file(path))
            elif item in config.agents:
                cases.append(agent_case(config, item))
            elif item in config.broken_agents:
                raise ConfigError(config.broken_agents[item])
            else:
                known = ", ".join(sorted(config.agents))
                raise UsageError(f"unknown agent or check file '{item}'; known agents: {known}")
    else:
        if config.broken_agents:
            raise ConfigError(next(iter(config.broken_agents.values())))
        cases = [agent_case(config, n) for n, s in sorted(config.agents.items()) if s.expect]
        folder = checks_dir(config)
        if folder is not None and folder.is_dir():
            files = sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")])
            cases += [load_check_file(p) for p in files]
    for case in cases:
        _check_names(config, case)
    return cases


def _check_names(config: Config, case: CheckCase) -> None:
    if case.agent not in config.agents:
        if case.agent in config.broken_agents:
            raise ConfigError(config.broken_agents[case.agent])
        known = ", ".join(sorted(config.agents))
        raise ConfigError(
            f"unknown agent '{case.agent}'; known agents: {known}", path=case.source, field="agent"
        )
    for server in case.ext:
        if server not in config.servers:
            known = ", ".join(sorted(config.servers)) or "none"
            raise ConfigError(
                f"no configured server named '{server}'; configured servers: {known}",
                path=case.source,
                field="ext",
            )
