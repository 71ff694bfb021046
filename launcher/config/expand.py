"""`${VAR}` and `${VAR:-default}` expansion of config strings, tracking secrets."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from launcher.errors import ExpansionError
from launcher.secrets import MASK, MIN_SECRET_CHARS, SecretMask, is_maskable

__all__ = ["MASK", "Expanded", "expand", "has_reference", "mask_secrets", "referenced_names"]

# Only the braced forms: a bare `$` stays literal, so `$$`-escaping is never needed.
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class Expanded:
    """An expanded string, the non-empty values it took from the environment, and the names
    of the variables among them too short to be masked while a session runs."""

    value: str
    secrets: frozenset[str]
    unmaskable: frozenset[str] = frozenset()


def has_reference(text: str) -> bool:
    """True if `text` contains a `${...}` reference (well-formed or not)."""
    return "${" in text


def expand(
    text: str, env: Mapping[str, str], literals: Mapping[str, str] | None = None
) -> Expanded:
    """Expand every `${VAR}` / `${VAR:-default}` in `text` from `env`.

    Like the shell, `:-` uses the default when the variable is unset or empty. A name in
    `literals` (VS Code's `${workspaceFolder}`) is its value there, never a secret; no
    inserted value is read for references again.
    """
    secrets: set[str] = set()
    unmaskable: set[str] = set()
    parts: list[str] = []
    pos = 0
    for match in _REFERENCE.finditer(text):
        _reject_malformed(text[pos : match.start()])
        parts.append(text[pos : match.start()])
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if literals and name in literals:
            parts.append(literals[name])
        elif value:
            secrets.add(value)
            if not is_maskable(value):
                unmaskable.add(name)
            parts.append(value)
        elif default is not None:
            parts.append(default)
        elif value is None:
            raise ExpansionError(
                f"environment variable {name} is not set "
                f"(write ${{{name}:-}} to allow it to be unset)"
            )
        pos = match.end()
    _reject_malformed(text[pos:])
    parts.append(text[pos:])
    return Expanded("".join(parts), frozenset(secrets), frozenset(unmaskable))


def unmaskable_warning(name: str, where: str) -> str:
    """The config-load warning for `${name}` whose value is too short to mask (never the value)."""
    return (
        f"{where}: the value of ${{{name}}} is shorter than {MIN_SECRET_CHARS} characters and "
        "cannot be masked: it will show wherever it appears (a credential is never that short)"
    )


def mask_secrets(text: str, secrets: frozenset[str]) -> str:
    """Replace every form of every secret in `text` by `****` (see launcher/secrets.py).

    For a launch spec shown once and never read back: short values are masked here too.
    """
    return SecretMask(secrets, min_chars=1).text(text)


def referenced_names(value: object) -> set[str]:
    """Every variable a `${VAR}` reference names anywhere in a JSON-like config value."""
    if isinstance(value, str):
        return {m.group(1) for m in _REFERENCE.finditer(value)}
    if isinstance(value, dict):
        return set().union(*(referenced_names(v) for v in value.values()), set())
    if isinstance(value, (list, tuple)):
        return set().union(*(referenced_names(v) for v in value), set())
    return set()


def _reject_malformed(literal: str) -> None:
    if "${" in literal:
        raise ExpansionError("malformed variable reference: expected ${NAME} or ${NAME:-default}")
