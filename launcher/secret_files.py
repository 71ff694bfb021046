"""Which files are secret: the ones a launcher marked (`serve`'s token file) and the
credentials under the user's home. The sandbox denies them and the file tools refuse them."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from launcher import settings

DENY_READ_VAR = settings.DENY_READ.name
"""Files this process (and every launcher process it starts) treats as secret: `serve`'s
token file. The sandbox denies them and the file tools refuse them (os.pathsep-separated
real paths; inherited, so a worker or a nested launcher keeps denying them)."""
# settings.CALLER_TOKEN: `serve`'s bearer tokens as secret-named variables, handed to each
# worker with its other hidden values, so the worker masks them too.


def note_secret_files(paths: Iterable[Path]) -> None:
    """Mark files as secret for this process and the launcher processes it starts."""
    known = list(secret_files())
    known += [Path(os.path.realpath(p)) for p in paths]
    os.environ[settings.DENY_READ.key()] = os.pathsep.join(str(p) for p in dict.fromkeys(known))


def secret_files(env: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The files `note_secret_files` marked (in this process or a launcher above it)."""
    raw = settings.DENY_READ.text(env)
    return tuple(Path(p) for p in raw.split(os.pathsep) if os.path.isabs(p))


HOME_CREDENTIALS: tuple[str, ...] = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".config/gcloud",
    ".azure",
    ".netrc",
    ".docker/config.json",
    ".kube",
    # The coding-agent hosts' own credentials.
    ".claude/.credentials.json",
    ".claude.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
    ".config/gh/hosts.yml",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
    # A Ray cluster's token: whoever reads it may run code on every node.
    ".ray/auth_token",
)
"""Paths under the user's home that the shell (sandbox) and the file tools never read."""
RAY_TOKEN_PATH_VAR = "RAY_AUTH_TOKEN_PATH"
"""Where Ray keeps its cluster token when not at `~/.ray/auth_token`: denied the same."""


def credential_paths(home: Path, environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The home's credential files (`HOME_CREDENTIALS`) and Ray's token file, resolved."""
    named = (os.environ if environ is None else environ).get(RAY_TOKEN_PATH_VAR, "")
    found = [home / rel for rel in HOME_CREDENTIALS]
    if os.path.isabs(named):
        found.append(Path(named))
    return tuple(dict.fromkeys(Path(os.path.realpath(p)) for p in found))


_credentials: tuple[tuple[str, str], tuple[Path, ...]] | None = None
"""`credential_paths` of this process's home, and the (HOME, token path) it was made for."""


def _home_credentials() -> tuple[Path, ...]:
    global _credentials
    key = (str(Path.home()), os.environ.get(RAY_TOKEN_PATH_VAR, ""))
    if _credentials is None or _credentials[0] != key:
        _credentials = (key, credential_paths(Path.home()))
    return _credentials[1]


def launcher_state_home() -> Path:
    """SUBAGENT_HOME, resolved: the launcher's own (tokens, the guard's record, sessions)."""
    raw = settings.HOME.raw()
    home = Path(raw).expanduser() if raw else Path("~/.local/state/subagent").expanduser()
    return Path(os.path.realpath(home))


def is_secret_file(real: Path, within: Path | None = None) -> bool:
    """Whether the real path `real` is a secret file, a home credential or the launcher's
    state home (a session run in ~ has it inside the workspace), or lies under one. A
    workspace `within` the state home is one the launcher made there (an isolated run's
    repository, a spill folder): the state home is not denied to it."""
    state = launcher_state_home()
    ours = within is not None and within.is_relative_to(state)
    denied = (*secret_files(), *_home_credentials(), *(() if ours else (state,)))
    return any(real == p or real.is_relative_to(p) for p in denied)
