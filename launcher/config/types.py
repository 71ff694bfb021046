"""Plain data types of configuration: agents, servers and tool selectors."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from launcher.config.expect import Expectations

if TYPE_CHECKING:
    from launcher.config.hooks_field import HookSpec

BUILTIN_TOOLS: tuple[str, ...] = ("read", "write", "edit", "bash", "grep", "find", "ls")
"""Built-in tool names, in the order they are offered."""

MEMORY_TOOLS: tuple[str, ...] = ("memory_read", "memory_write")
"""Tools added for agents with `memory:`."""

DELEGATE_TOOL = "subagent"
"""The built-in that runs a sub-agent of `allowed_subagents`; only when `tools` names it."""
OPT_IN_TOOLS: tuple[str, ...] = (DELEGATE_TOOL,)
"""Built-ins that `*`/`all` and an omitted `tools` never include."""
DEFAULT_MAX_DEPTH = 2
"""How deep sub-agents may nest (the top agent is depth 0) unless `max_depth` says less."""

ORCHESTRATION_TOOLS: frozenset[str] = frozenset(
    {"spawn_subagent", "get_subagent_result", "steer_subagent", "stop_subagent", "list_agents"}
)
"""Tools of `subagent serve`; a sub-agent never gets them (no recursive spawning)."""

MemoryScope = Literal["project", "local", "user"]
ISOLATION_MODES: tuple[str, ...] = ("worktree",)
"""Values of an agent's `isolation` (and `--isolation`): `worktree` = a fresh git worktree."""


@dataclass(frozen=True)
class Selector:
    """One entry of `tools:` or `disallowed_tools:`.

    kind: `builtin` (name), `all` (`*`/`all`), `none`, `ext` (server, optional tool
    glob), or `name` (an exposed name `SERVER__TOOL`, glob allowed).
    """

    kind: Literal["builtin", "all", "none", "ext", "name"]
    name: str | None = None
    server: str | None = None
    tool: str | None = None
    raw: str = ""


class SandboxMode(StrEnum):
    """How the agent's built-in tools' processes are confined (`sandbox:`, `--sandbox`)."""

    ON = "on"
    """Confined where the OS offers a mechanism; said once and run unconfined elsewhere."""
    OFF = "off"
    REQUIRED = "required"
    """Confined, or the run refuses to start."""


@dataclass(frozen=True)
class SandboxSettings:
    """An agent's `sandbox:` field: the mode, the network, extra paths never read."""

    mode: SandboxMode = SandboxMode.ON
    network: bool = False
    deny_read: tuple[str, ...] = ()
    """Added to the built-in deny list; `~/` is the user's home."""
    write_config: bool = False
    """The model may change the workspace's config places (launcher/trust)."""


@dataclass(frozen=True)
class AgentSpec:
    """An agent definition: frontmatter fields plus the body as system prompt."""

    name: str
    description: str = ""
    model: str | None = None
    tools: tuple[Selector, ...] | None = None  # None = field omitted
    extensions: bool | tuple[str, ...] = True
    disallowed_tools: tuple[Selector, ...] = ()
    isolated: bool = False
    memory: MemoryScope | None = None
    max_turns: int | None = None
    max_tokens: int | None = None
    """Tokens billed over the whole run, nested sub-agents included (launcher/budget.py)."""
    max_cost_usd: float | None = None
    timeout: float | None = None
    """Wall-clock seconds from the session's start, servers' start-up included."""
    idle_timeout: float | None = None
    """Seconds with no progress; None: the default (budget.py DEFAULT_IDLE_TIMEOUT_S)."""
    allowed_subagents: tuple[str, ...] = ()
    max_depth: int = DEFAULT_MAX_DEPTH
    isolation: str | None = None
    prompt: str = ""
    source: Path | None = None  # None = built-in agent
    expect: Expectations | None = None  # the `expect:` block, for `subagent check`
    dialect: str = "subagent"
    """The file's format (`subagent`, `pi`, `claude`): config/dialect*.py."""
    display_name: str | None = None
    background: bool = False
    """serve's default `background` for this agent."""
    enabled: bool = True
    servers: tuple[ServerSpec, ...] = ()
    """Servers defined inline in the agent file (Claude Code's `mcpServers`): its own."""
    sandbox: SandboxSettings | None = None
    """None: the field is omitted (the config's default, else `on`, applies)."""
    hooks: tuple[HookSpec, ...] = ()
    """Claude Code hooks: the file's `hooks:` and, for a Claude Code agent, its settings'."""
    tool_search: int | Literal["off"] | None = None
    """Tools on demand past this many bytes of server tool definitions (config/
    tool_search_field.py); `off`: never; None: the field is omitted (the config's default)."""


@dataclass(frozen=True)
class OAuthSettings:
    """An HTTP server's `"auth": "oauth"` options from `mcp.json` (all optional).

    Without `client_id` the client registers itself (dynamic registration, or the
    `client_metadata_url` document when the authorization server supports it).
    """

    client_id: str | None = None
    client_secret: str | None = None
    scopes: tuple[str, ...] = ()
    client_metadata_url: str | None = None
    grant_type: Literal["authorization_code", "client_credentials"] = "authorization_code"
    """`client_credentials`: a machine client (client_id + a secret or a key), no login needed."""
    private_key: str | None = None
    """PEM key signing the client's JWT assertion (`private_key_jwt`), client_credentials only."""
    signing_algorithm: str = "RS256"
    """The JWT assertion's algorithm (`RS256`, `ES256`, ...)."""


@dataclass(frozen=True)
class ServerSpec:
    """One MCP server from `mcp.json`, with `${VAR}` already expanded.

    `raw` keeps the unexpanded strings so that display can show `${VAR}` instead
    of a secret; `secrets` holds expanded values that came from the environment.
    """

    name: str
    type: Literal["stdio", "http"] = "stdio"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    auth: Literal["oauth"] | None = None
    oauth: OAuthSettings | None = None
    startup_timeout: float = 30.0
    tool_timeout: float = 60.0
    required: bool = False
    max_result_bytes: int = 64 * 1024
    enabled_tools: tuple[str, ...] | None = None
    """Only these of the server's tools may ever be offered (Codex, Gemini); None = all."""
    disabled_tools: tuple[str, ...] = ()
    """The server's tools never offered, whatever selects them (Codex, Gemini)."""
    source: Path | None = None
    raw: dict[str, object] = field(default_factory=dict, compare=False, repr=False)
    secrets: frozenset[str] = field(default_factory=frozenset, compare=False, repr=False)

    def offers(self, tool: str) -> bool:
        """Whether this server's own config lets `tool` be offered at all."""
        allowed = self.enabled_tools is None or tool in self.enabled_tools
        return allowed and tool not in self.disabled_tools


@dataclass(frozen=True)
class ModelPrice:
    """A model's price in USD per million tokens (`"prices"` in `mcp.json`)."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float | None = None
    """None: cache reads cost what input does."""
    cache_write: float | None = None
    """None: cache writes cost what input does."""


@dataclass(frozen=True)
class Config:
    """Everything discovery found: agents and servers by name, plus warnings."""

    agents: dict[str, AgentSpec]
    servers: dict[str, ServerSpec]
    warnings: tuple[str, ...] = ()
    broken_agents: dict[str, str] = field(default_factory=dict)  # name -> error text
    lock_path: Path | None = None
    """Where `subagent.lock.json` is or would be (config/lockfile.py `lock_path`)."""
    sandbox: SandboxSettings | None = None
    """The default `sandbox:` of agents that omit it (`"sandbox"` in a config's mcp.json)."""
    tool_search: int | Literal["off"] | None = None
    """The default `tool_search:` of agents that omit it (`"tool_search"` in mcp.json)."""
    prices: dict[str, ModelPrice] = field(default_factory=dict)
    """Per-model price overrides, `PROVIDER:MODEL` or a bare model id (`"prices"` in mcp.json)."""
