"""Every `SUBAGENT_*` environment variable: its name, type, default and one doc line, and
the one place they are read.

A leaf of the standard library's `os` alone: the console script's fast paths load it
before anything else. docs/configuration.md's Environment tables are `markdown()` of
this table (tests/test_settings.py holds them equal); tests/test_house_layout.py refuses
a read of a `SUBAGENT_*` name anywhere else. Setting one for a child process is a write:
its name is taken from here (`Setting.key`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, MutableMapping

PREFIX = "SUBAGENT_"
"""Every variable of this table starts so (kept across the scrubbed re-exec)."""


class Setting:
    """One variable, or with `family` the variables `NAME` + a suffix (`SUBAGENT_TOKEN_GITHUB`).

    Every reader takes `env` (default: this process's environment), so a test or a child's
    environment can be read the same way.
    """

    __slots__ = ("default", "doc", "family", "internal", "kind", "name")

    def __init__(
        self,
        name: str,
        kind: str,
        default: str,
        doc: str,
        *,
        family: str = "",
        internal: bool = False,
    ) -> None:
        self.name = name
        self.kind = kind
        self.default = default
        self.doc = doc
        self.family = family
        self.internal = internal

    @property
    def shown(self) -> str:
        """The name as the docs show it: `SUBAGENT_TOKEN_<SERVER>` for a family."""
        return f"{self.name}<{self.family}>" if self.family else self.name

    def key(self, suffix: str = "") -> str:
        """The variable's name; a family member's with its suffix."""
        if bool(suffix) != bool(self.family):
            raise ValueError(f"{self.shown}: suffix {suffix!r}")
        return self.name + suffix

    def raw(self, env: Mapping[str, str] | None = None, suffix: str = "") -> str | None:
        """The value as set (maybe empty), None when unset."""
        return (os.environ if env is None else env).get(self.key(suffix))

    def text(self, env: Mapping[str, str] | None = None, suffix: str = "") -> str:
        """The value, "" when unset."""
        return self.raw(env, suffix) or ""

    def take(self, env: MutableMapping[str, str] | None = None) -> str | None:
        """The value, removed from `env` (a hand-over read once)."""
        return (os.environ if env is None else env).pop(self.key(), None)


HOME = Setting(
    "SUBAGENT_HOME",
    "path",
    "`~/.local/state/subagent`",
    "where sessions, logs, tokens and worktrees live (directories 0700, files 0600)",
)
CONFIG_DIR = Setting(
    "SUBAGENT_CONFIG_DIR", "path", "(discovery)", "like `--config-dir`: a hermetic configuration"
)
SERVERS_FROM = Setting(
    "SUBAGENT_SERVERS_FROM",
    "HOST,...",
    "(none)",
    "like `--servers-from`: other hosts' user-level servers"
    " ([Bring your agents](agents.md#mcp-servers-other-hosts-know))",
)
MODEL = Setting(
    "SUBAGENT_MODEL",
    "PROVIDER:MODEL",
    "(none)",
    "the model when neither `--model` nor the agent names one",
)
MODEL_ALIAS = Setting(
    "SUBAGENT_MODEL_",
    "PROVIDER:MODEL",
    "an Anthropic id",
    "what a Claude Code agent's `sonnet`, `opus` or `haiku` means (`SUBAGENT_MODEL_SONNET`, ...)",
    family="ALIAS",
)
SANDBOX = Setting(
    "SUBAGENT_SANDBOX",
    "`on`, `off`, `required`",
    "(the agent's)",
    "the sandbox mode of every agent of the run, like `--sandbox`"
    " (also read by `check` and `batch`)",
)
SANDBOX_MECHANISM = Setting(
    "SUBAGENT_SANDBOX_MECHANISM",
    "`none`, `auto`",
    "`auto`",
    "`none`: behave as if the machine had no sandbox mechanism (to try `required`)",
)
BASH_SANDBOX = Setting(
    "SUBAGENT_BASH_SANDBOX",
    "`1`, `true`, `yes`",
    "(off)",
    "the older switch: `required` for every agent, each command in its own namespaces"
    " ([Security model](security.md))",
)
PYTHON = Setting(
    "SUBAGENT_PYTHON",
    "path",
    "(subagent's interpreter)",
    "the interpreter the `init` example's stub server runs on",
)
REQUIREMENT = Setting(
    "SUBAGENT_REQUIREMENT",
    "pip requirement",
    "(none)",
    "a repository variable: what the `init --ci` workflow installs subagent from",
)
STORE = Setting(
    "SUBAGENT_STORE",
    "`0`",
    "`1`",
    "`0`: run without the session store (`events.jsonl` is still written)",
)
SERVE_TOKEN = Setting(
    "SUBAGENT_SERVE_TOKEN",
    "token",
    "(none)",
    "the bearer token `serve --http` requires of its caller `default`"
    " ([Serve](serve.md#a-shared-service-over-http))",
)
TOKEN = Setting(
    "SUBAGENT_TOKEN_",
    "token",
    "(none)",
    "a bearer token for server SERVER (upper-cased, other characters `_`) ([OAuth](oauth.md))",
    family="SERVER",
)
CGROUP = Setting(
    "SUBAGENT_CGROUP",
    "`off`",
    "(on)",
    "`off`: do not put sessions in their own cgroup",
)
DENY_READ = Setting(
    "SUBAGENT_DENY_READ",
    "paths",
    "(none)",
    "files the sandbox and the file tools refuse (`serve`'s token file), inherited by workers",
    internal=True,
)
CALLER_TOKEN = Setting(
    "SUBAGENT_CALLER_TOKEN_",
    "token",
    "(none)",
    "`serve`'s bearer tokens handed to a worker with its hidden values, so it masks them",
    family="N",
    internal=True,
)
SECRETS_FD = Setting(
    "SUBAGENT_SECRETS_FD",
    "descriptor",
    "(none)",
    "where a re-executed launcher or a worker reads the secrets taken out of its environment",
    internal=True,
)
SEAL_SENDER = Setting(
    "SUBAGENT_SEAL_SENDER",
    "key",
    "(none)",
    "a Ray node's worker: the driver's public key, the only one whose sealed box it opens",
    internal=True,
)
SEAL_NONCE = Setting(
    "SUBAGENT_SEAL_NONCE",
    "nonce",
    "(none)",
    "a Ray node's worker: what its key offer echoes, so its Ray task knows the offer is its own",
    internal=True,
)

SETTINGS: tuple[Setting, ...] = (
    HOME,
    CONFIG_DIR,
    SERVERS_FROM,
    MODEL,
    MODEL_ALIAS,
    SANDBOX,
    SANDBOX_MECHANISM,
    BASH_SANDBOX,
    PYTHON,
    REQUIREMENT,
    STORE,
    SERVE_TOKEN,
    TOKEN,
    CGROUP,
    DENY_READ,
    CALLER_TOKEN,
    SECRETS_FD,
    SEAL_SENDER,
    SEAL_NONCE,
)
"""Every `SUBAGENT_*` variable, in the docs' order."""


def store_enabled(env: Mapping[str, str] | None = None) -> bool:
    """Whether runs are recorded in the session store (`SUBAGENT_STORE=0` turns it off)."""
    return STORE.raw(env) != "0"


def cgroup_off(env: Mapping[str, str] | None = None) -> bool:
    """Whether `SUBAGENT_CGROUP=off` asks for no per-session cgroup."""
    return CGROUP.raw(env) == "off"


def no_sandbox_mechanism(env: Mapping[str, str] | None = None) -> bool:
    """Whether `SUBAGENT_SANDBOX_MECHANISM=none` asks to act as if there were no mechanism."""
    return SANDBOX_MECHANISM.text(env).strip().lower() == "none"


def bash_sandbox(env: Mapping[str, str] | None = None) -> bool:
    """Whether the older switch `SUBAGENT_BASH_SANDBOX` is on."""
    return BASH_SANDBOX.text(env).strip().lower() in ("1", "true", "yes")


def _rows(internal: bool) -> Iterator[str]:
    yield "| variable | type | default | effect |"
    yield "|---|---|---|---|"
    for s in SETTINGS:
        if s.internal == internal:
            yield f"| `{s.shown}` | {s.kind} | {s.default} | {s.doc} |"


def markdown(internal: bool = False) -> str:
    """The docs' table of the variables a user sets (or, `internal`, those subagent sets)."""
    return "\n".join(_rows(internal)) + "\n"
