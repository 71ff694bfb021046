"""Agent-file dialects as data: each is a table from its field to what happens to it.

A field is `honoured` (same meaning here, read as written), `mapped` (translated onto
one of our fields), `ignored` (no effect here: listed in one warning line) or `refused`
(it would narrow the agent and cannot be honoured here: the agent is refused, exit 2).
A rule may depend on the value (`permissionMode: default` is ignored, `plan` refused);
a value the table does not list is refused, so an agent is never run wider than written.
One small reader (`translate`) applies any table; docs/agents.md holds the same tables.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from fnmatch import fnmatchcase
from pathlib import Path

from launcher.config.frontmatter import excerpt
from launcher.errors import ConfigError

_GLOB = re.compile(r"[*?\[]")


class Action(StrEnum):
    """What a dialect does with one of its fields."""

    HONOURED = "honoured"
    MAPPED = "mapped"
    IGNORED = "ignored"
    REFUSED = "refused"


Converter = Callable[[object, list[str], Path], Mapping[str, object]]
"""A mapped field's value (and the file) -> our fields and their values; warnings go
to the list. Raises ValueError with the reason for a value it cannot read."""


@dataclass(frozen=True)
class FieldRule:
    """One field of a dialect: its action, the field of ours it lands on, and why."""

    action: Action
    target: str | None = None
    note: str = ""
    convert: Converter | None = None
    values: Mapping[str, Action] | None = None
    """Value-dependent fields: value -> action; any value not listed is refused."""
    refusal: str = ""
    """Why the values not listed are refused (value-dependent fields)."""


@dataclass
class RawField:
    """A frontmatter entry as read: value, its file line, and its YAML node."""

    value: object
    line: int
    node: object = None
    key: str = ""
    """The field as the file spells it, for errors (`maxTurns` for our `max_turns`)."""


Reader = Callable[[str, Path], "tuple[dict[str, RawField], str]"]
"""A file's text (and path, for errors) -> its entries and its prompt, for a format that
is not Markdown with frontmatter (Codex's TOML); raises ConfigError."""


@dataclass(frozen=True)
class Dialect:
    """An agent-file format: its name (shown by `agents`) and its field table."""

    name: str
    fields: Mapping[str, FieldRule]
    hint_fields: tuple[str, ...] = field(default=())
    """Field names to suggest for a misspelt one (`did you mean`)."""
    suffix: str = ".md"
    """The file name ending of its agent files."""
    reader: Reader | None = None
    """Reads a file of another shape than Markdown with YAML frontmatter."""


MAX_FIELDS = 500
"""The most frontmatter fields an agent file may have (real ones have a dozen)."""


def translate(
    dialect: Dialect,
    entries: Mapping[str, RawField],
    path: Path,
    warnings: list[str] | None,
) -> dict[str, RawField]:
    """Apply `dialect`'s table to the frontmatter `entries`: our fields, by our names.

    Unknown fields warn (with a hint), ignored ones are listed in one line, a refused
    field or value raises ConfigError naming the file, line and field.
    """
    notes: list[str] = [] if warnings is None else warnings
    if len(entries) > MAX_FIELDS:
        # Each unknown field is checked against every restriction word: 100 000 of them
        # held serve's tools/list for most of a minute. No agent file needs this many.
        extra = list(entries.values())[MAX_FIELDS]
        raise ConfigError(
            f"more than {MAX_FIELDS} frontmatter fields: refused", path=path, line=extra.line
        )
    ours: dict[str, RawField] = {}
    ignored: list[str] = []
    for key, raw in entries.items():
        rule = dialect.fields.get(key)
        if rule is None and not (key.isascii() and key.isprintable()):
            # `tооls` with a Cyrillic o, `to\u200bols`: a look-alike we cannot tell from a
            # restriction field. No field of any dialect is spelt outside printable ASCII.
            raise ConfigError(
                f"field name '{excerpt(key)}' has characters outside printable ASCII: refused, "
                "since it may be a look-alike of a field that narrows the agent",
                path=path,
                line=raw.line,
            )
        if raw.value is None and looks_like_restriction(key) is not None:
            # `tools:` with nothing after it reads to a reviewer as "no tools"; as omitted
            # it would mean every tool. Neither guess is safe: say what it allows.
            raise ConfigError(
                f"'{excerpt(key)}' has no value: write what it allows (or remove the field); "
                "refused rather than read as omitted",
                path=path,
                line=raw.line,
                field=key,
            )
        if rule is None and (like := looks_like_restriction(key)) is not None:
            raise ConfigError(
                f"'{excerpt(key)}' looks like a restriction field ('{like}') but {dialect.name} "
                f"agent files have no such field: refused, since without it the agent would "
                f"run wider{_hint(key, dialect)}",
                path=path,
                line=raw.line,
            )
        if rule is None:
            notes.append(
                f"{path}:{raw.line}: unknown field '{excerpt(key)}' ignored{_hint(key, dialect)}"
            )
            continue
        action = _action(rule, raw.value)
        if action is Action.REFUSED:
            raise ConfigError(
                _refusal(rule, raw.value, dialect), path=path, line=raw.line, field=key
            )
        if action is Action.IGNORED:
            ignored.append(key if rule.values is None else f"{key}: {raw.value}")
            continue
        if rule.convert is None or raw.value is None:
            if rule.target is not None:
                _merge(ours, rule.target, RawField(raw.value, raw.line, raw.node, key))
            continue
        said: list[str] = []
        try:
            converted = rule.convert(raw.value, said, path)
        except ValueError as exc:
            raise ConfigError(str(exc), path=path, line=raw.line, field=key) from exc
        notes.extend(f"{path}:{raw.line}: {key}: {note}" for note in said)
        for target, value in converted.items():
            node = raw.node if target == rule.target else None
            _merge(ours, target, RawField(value, raw.line, node, key))
    if ignored:
        notes.append(
            f"{path}: {dialect.name} field{'s' if len(ignored) > 1 else ''} with no effect "
            f"here, ignored: {', '.join(ignored)}"
        )
    return ours


RESTRICTION_WORDS: tuple[str, ...] = (
    "tools",
    "tool",
    "disallowedtools",
    "allowedtools",
    "disabledtools",
    "enabledtools",
    "excludetools",
    "excludedtools",
    "includetools",
    "deniedtools",
    "denytools",
    "blockedtools",
    "extensions",
    "inheritextensions",
    "excludeextensions",
    "mcpservers",
    "isolated",
    "isolation",
    "sandbox",
    "permissionmode",
    "permissions",
    "hooks",
    "allowedsubagents",
    "maxdepth",
    "maxturns",
    "enabled",
    "disabled",
)
"""Fields that narrow an agent in some dialect (ours, pi's, Claude Code's, Codex's, Gemini's,
opencode's), with `_`, `-` and case dropped. A field a dialect does not have that is one
of these, or a near miss of one, refuses the agent: it was meant to narrow it."""
_NEAR_MISS_SHORT = 1
"""Edits that make a near miss of a short restriction field (`tool`, `hooks`)."""
_NEAR_MISS_LONG = 2
"""Edits that make a near miss of a field of more than six letters (`disalowedTools`)."""


def looks_like_restriction(key: str) -> str | None:
    """The restriction field `key` spells or nearly spells (any case, `_` or `-`), or None."""
    normal = re.sub(r"[\s_\-.]", "", key).lower()
    if normal in RESTRICTION_WORDS:
        return normal
    for word in RESTRICTION_WORDS:
        limit = _NEAR_MISS_SHORT if len(word) <= 6 else _NEAR_MISS_LONG
        if abs(len(word) - len(normal)) <= limit and _edits(normal, word) <= limit:
            return word
    return None


def _edits(a: str, b: str) -> int:
    """Levenshtein distance with adjacent swaps (both strings short: bounded by the caller)."""
    previous: list[int] = list(range(len(b) + 1))
    before: list[int] = previous
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, before[j - 2] + 1)
            current.append(cost)
        before, previous = previous, current
    return previous[-1]


def _merge(ours: dict[str, RawField], target: str, new: RawField) -> None:
    """Two fields landing on one of ours narrow each other: `extensions` and `tools` keep
    only what both allow; deny lists (`disallowed_tools`) add up; of two turn limits the
    smaller stays; else the first stays."""
    old = ours.get(target)
    if old is None or old.value is None:
        ours[target] = new
    elif target == "extensions":
        ours[target] = RawField(_narrowest(old.value, new.value), old.line, None, old.key)
    elif target == "tools":
        both = _allowed_by_both(_listed(old.value), _listed(new.value))
        ours[target] = RawField(both or ["none"], old.line, None, old.key)
    elif target == "max_turns" and _is_int(old.value) and _is_int(new.value):
        if new.value < old.value:  # type: ignore[operator]
            ours[target] = new
    elif isinstance(old.value, list) and isinstance(new.value, list):
        ours[target] = RawField(old.value + new.value, old.line, None, old.key)


def _narrowest(a: object, b: object) -> object:
    if a is False or b is False:
        return False
    if a is True or b is None:
        return b if b is not None else a
    if b is True:
        return a
    names_b = _listed(b)
    return tuple(name for name in _listed(a) if name in names_b)


def _allowed_by_both(a: tuple[str, ...], b: tuple[str, ...]) -> list[str]:
    """The entries of two allowlists that both allow: an entry stays when the other list
    names it, or (a plain name) one of its globs matches it. Two different globs are
    dropped, never widened to either."""
    if "none" in a or "none" in b:
        return []

    def covered(name: str, other: tuple[str, ...]) -> bool:
        return name in other or (
            not _GLOB.search(name) and any(fnmatchcase(name, o) for o in other)
        )

    kept = [name for name in a if covered(name, b)] + [name for name in b if covered(name, a)]
    return list(dict.fromkeys(kept))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _listed(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(item.strip() for item in value.split(",") if item.strip())
    if isinstance(value, list | tuple):
        return tuple(str(item).strip() for item in value)
    return ()


def _action(rule: FieldRule, value: object) -> Action:
    if rule.values is None or value is None:
        return rule.action
    return rule.values.get(str(value), Action.REFUSED)


def _refusal(rule: FieldRule, value: object, dialect: Dialect) -> str:
    reason = rule.refusal or rule.note or "cannot be honoured here"
    if rule.values is not None:
        return (
            f"'{excerpt(value)}' cannot be honoured here, and without it the agent would run "
            f"wider: refused ({reason})"
        )
    return f"{dialect.name} field refused: {reason}"


def _hint(key: str, dialect: Dialect) -> str:
    known = dialect.hint_fields or tuple(dialect.fields)
    normalized = re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower().replace("-", "_")
    if normalized != key and normalized in known:
        return f" (did you mean '{normalized}'?)"
    close = difflib.get_close_matches(normalized, known, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def table_rows(dialect: Dialect) -> list[tuple[str, str, str]]:
    """(field, action, note) per field, the rows docs/agents.md shows; value-dependent
    fields get one row per value (`permissionMode: plan`)."""
    rows: list[tuple[str, str, str]] = []
    for key, rule in dialect.fields.items():
        if rule.values is None:
            rows.append((key, str(rule.action), rule.note))
            continue
        for value, action in rule.values.items():
            rows.append((f"{key}: {value}", str(action), rule.note))
        rows.append((f"{key}: (any other)", str(Action.REFUSED), rule.refusal or rule.note))
    return rows
