"""`${VAR}` and `${VAR:-default}` expansion of config strings, tracking secrets."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from launcher.errors import ExpansionError

# Only the braced forms: a bare `$` stays literal, so `$$`-escaping is never needed.
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

MASK = "****"
"""What a secret value is displayed as."""


@dataclass(frozen=True)
class Expanded:
    """An expanded string and the non-empty values it took from the environment."""

    value: str
    secrets: frozenset[str]


def has_reference(text: str) -> bool:
    """True if `text` contains a `${...}` reference (well-formed or not)."""
    return "${" in text


def expand(text: str, env: Mapping[str, str]) -> Expanded:
    """Expand every `${VAR}` / `${VAR:-default}` in `text` from `env`.

    Like the shell, `:-` uses the default when the variable is unset or empty.
    """
    secrets: set[str] = set()
    parts: list[str] = []
    pos = 0
    for match in _REFERENCE.finditer(text):
        _reject_malformed(text[pos : match.start()])
        parts.append(text[pos : match.start()])
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value:
            secrets.add(value)
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
    return Expanded("".join(parts), frozenset(secrets))


def mask_secrets(text: str, secrets: frozenset[str]) -> str:
    """Replace every occurrence of a secret in `text` by `****`, longest secret first."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def _reject_malformed(literal: str) -> None:
    if "${" in literal:
        raise ExpansionError("malformed variable reference: expected ${NAME} or ${NAME:-default}")
