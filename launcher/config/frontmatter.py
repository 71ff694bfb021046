"""The one frontmatter reader of every agent-file dialect: where it is, and its YAML.

Frontmatter is found where Claude Code finds it: line 1 is `---` (after one byte-order
mark; CRLF line ends are fine), up to the next `---` line. Anything else in front of a
`---` block (a blank line, a leading space, a second BOM) would turn the fields into
prompt text and the agent would run with every tool: such a file is refused, naming
the line. YAML is read without anchors, aliases or merge keys (an alias bomb is refused
before it expands), field names must be strings, and an error quotes a short excerpt.
"""

from __future__ import annotations

import itertools
import re
import stat
import unicodedata
from pathlib import Path

import yaml
import yaml.composer
import yaml.constructor
import yaml.reader
import yaml.scanner

from launcher.errors import ConfigError

FENCE = "---"
FRONTMATTER_FIRST_LINE = 2
"""Frontmatter YAML starts on the file's line 2 (after the opening fence)."""
EXCERPT_CHARS = 40
"""The most of a value an error message quotes."""
NAME_SCAN_LINES = 200
"""How far into a broken file `claimed_names` looks for its `name:` lines."""
MAX_CLAIMED_NAMES = 64
"""The most names one broken file claims (a bound on a file of `name:` lines)."""

_INVISIBLE = "\ufeff\u200b\u200c\u200d\u2060\u00a0\u180e"
# Dashes a reader takes for `-` that are not in Unicode's dash class (Pd): minus signs,
# box-drawing lines.
_DASHES = "\u2212\u2796\u2500\u2501\u23af\u02d7\u207b\u208b\ufe63\uff0d"
# A line that reads as a fence to a human, or to another tool's looser reader (`+++` opens
# TOML frontmatter elsewhere).
_FENCE_LIKE = re.compile(r"^(-{3,}|\+{3,})")
# A `key:` line, the sign that a `---` block holds fields.
_FIELD_LINE = re.compile(r"^\s*[\"']?[A-Za-z_][\w.-]*[\"']?\s*:")
_NAME_KEY = re.compile(r"^[\s\ufeff]*[\"']?name[\"']?\s*[:=]")
_NAME_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_MERGE_TAG = "tag:yaml.org,2002:merge"
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """`value` as text for an error message: at most `limit` characters, one line."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) > 4 * limit:
        text = text[: 4 * limit]  # never render a huge value just to cut it
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def split_frontmatter(text: str, path: Path) -> tuple[str | None, str, int]:
    """(frontmatter YAML or None, body, the body's first line); refuses a displaced block."""
    text = text.removeprefix("\ufeff")
    # Lines end at "\n" only, as for Claude Code and YAML: str.splitlines would also end
    # one at \x1c or \u2028 and could close the frontmatter early, making fields prompt.
    lines = _LINE.findall(text)
    if lines and lines[0].rstrip(" \t\r\n") == FENCE:
        for index in range(1, len(lines)):
            if lines[index].rstrip(" \t\r\n") == FENCE:
                return "".join(lines[1:index]), "".join(lines[index + 1 :]), index + 2
        raise ConfigError("frontmatter opened with '---' is never closed", path=path, line=1)
    _refuse_displaced_block(lines, path)
    return None, text, 1


def _seen(line: str) -> str:
    """`line` as a human sees it: no whitespace, control, format or invisible characters
    (\\v, \\x85, \\u2028, \\u3000, LRM...), and every dash look-alike as `-`."""
    kept = []
    for char in line:
        category = unicodedata.category(char)
        if char.isspace() or char in _INVISIBLE or category in ("Cc", "Cf", "Zs", "Zl", "Zp"):
            continue
        kept.append("-" if char in _DASHES or category == "Pd" else char)
    return "".join(kept)


def _refuse_displaced_block(lines: list[str], path: Path) -> None:
    """A `---` block that is not at line 1 exactly is refused, never read as prompt."""
    fences = [i for i, line in enumerate(lines) if _FENCE_LIKE.match(_seen(line))]
    if not fences:
        return
    first = fences[0]
    if not any(_seen(line) for line in lines[:first]):
        raise ConfigError(
            f"frontmatter must begin on line 1 with exactly '---' (found "
            f"'{excerpt(lines[first].rstrip(chr(10) + chr(13)))}' here, after "
            f"{_what_is_before(lines, first)}); refused rather than read as prompt text",
            path=path,
            line=first + 1,
        )
    for start, end in itertools.pairwise(fences):
        if any(_FIELD_LINE.match(line) for line in lines[start + 1 : end]):
            raise ConfigError(
                "a '---' block of fields that is not at the top of the file: frontmatter "
                "must begin on line 1; refused rather than read as prompt text",
                path=path,
                line=start + 1,
            )


def _what_is_before(lines: list[str], first: int) -> str:
    if first > 0:
        return f"{first} blank line{'s' if first > 1 else ''}"
    line = lines[0]
    if line.startswith("\ufeff"):
        return "a second byte-order mark"
    if line[:1] in _INVISIBLE:
        return "an invisible character"
    if line[:1] in " \t":
        return "leading whitespace"
    if line[:1] and not _seen(line[:1]):
        return f"an invisible or control character (U+{ord(line[0]):04X})"
    return "a fence that is not exactly '---'"


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader that refuses anchors and aliases when it meets them, before composing:
    an alias bomb never expands, in memory, time or an error message."""

    def fetch_alias(self) -> None:
        raise yaml.scanner.ScannerError(
            None, None, "YAML aliases (*name) are not read here", self.get_mark()
        )

    def fetch_anchor(self) -> None:
        raise yaml.scanner.ScannerError(
            None, None, "YAML anchors (&name) are not read here", self.get_mark()
        )

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        # An explicit tag changes what a reviewer reads: `tools: !!null Read` is None, so
        # "omitted", so every tool. js-yaml refuses most; here every tag is refused.
        event = self.peek_event()  # type: ignore[no-untyped-call]
        tag = None if isinstance(event, yaml.AliasEvent) else getattr(event, "tag", None)
        if tag is not None:
            shown = tag.replace("tag:yaml.org,2002:", "!!")
            raise yaml.composer.ComposerError(
                None, None, f"YAML tags ({excerpt(shown)}) are not read here", event.start_mark
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[object, object]:
        # PyYAML lets the last of two equal keys win; a second `bash:` inside `permission:`
        # would silently widen what a reviewer reads. js-yaml and tomllib refuse them too.
        if isinstance(node, yaml.MappingNode):
            seen: set[object] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:
                    continue  # an unhashable key: the base constructor refuses it
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key '{excerpt(key)}'", key_node.start_mark
                    )
        return super().construct_mapping(node, deep=deep)


class Entry:
    """One frontmatter field as read: its value, the file line of its key, its node."""

    __slots__ = ("key", "line", "node", "value")

    def __init__(self, key: str, value: object, line: int, node: yaml.Node) -> None:
        self.key = key
        self.value = value
        self.line = line
        self.node = node


def read_fields(frontmatter: str, path: Path) -> list[Entry]:
    """Every field of `frontmatter` in file order; ConfigError naming the line for YAML it
    does not read (anchors, aliases, merge keys, a key that is not a string, duplicates)."""
    try:
        # The reader checks characters on construction: a control byte raises here.
        loader = _NoAliasLoader(frontmatter)
    except yaml.YAMLError as exc:
        raise yaml_error(exc, path, frontmatter) from exc
    try:
        root = loader.get_single_node()
        if root is None:
            return []
        if not isinstance(root, yaml.MappingNode):
            raise ConfigError(
                "frontmatter must be a mapping of field: value",
                path=path,
                line=FRONTMATTER_FIRST_LINE,
            )
        return _entries(loader, root, path)
    except yaml.YAMLError as exc:
        raise yaml_error(exc, path, frontmatter) from exc
    except RecursionError as exc:
        # PyYAML composes and constructs recursively: a deep `[[[[...` exhausts the stack.
        raise ConfigError(
            "frontmatter is nested too deeply", path=path, line=FRONTMATTER_FIRST_LINE
        ) from exc
    except ValueError as exc:
        # The constructor's own int()/date parsing: a 5000-digit number, a bad timestamp.
        raise ConfigError(
            f"invalid YAML value in frontmatter: {excerpt(str(exc), 80)}",
            path=path,
            line=FRONTMATTER_FIRST_LINE,
        ) from exc
    finally:
        loader.dispose()


def _entries(loader: yaml.SafeLoader, root: yaml.MappingNode, path: Path) -> list[Entry]:
    entries: list[Entry] = []
    seen: set[str] = set()
    for key_node, value_node in root.value:
        line = key_node.start_mark.line + FRONTMATTER_FIRST_LINE
        if key_node.tag == _MERGE_TAG:
            raise ConfigError("YAML merge keys (<<) are not read here", path=path, line=line)
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key_node, yaml.ScalarNode) or not isinstance(key, str):
            # `on:`, `yes:` and `1:` are a boolean and a number in YAML, not field names.
            shown = excerpt(getattr(key_node, "value", key))
            raise ConfigError(
                f"field name '{shown}' is not a string (quote it, or fix the field)",
                path=path,
                line=line,
            )
        if key in seen:
            raise ConfigError("duplicate field", path=path, line=line, field=excerpt(key))
        seen.add(key)
        value = loader.construct_object(value_node, deep=True)
        entries.append(Entry(key, value, line, value_node))
    return entries


def yaml_error(exc: yaml.YAMLError, path: Path, frontmatter: str = "") -> ConfigError:
    """A YAML error as ConfigError naming the file line, quoting at most an excerpt."""
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + FRONTMATTER_FIRST_LINE if mark is not None else None
    problem = getattr(exc, "problem", None) or type(exc).__name__
    if isinstance(exc, yaml.reader.ReaderError):
        # A character YAML does not allow (a control byte): its position, not a mark.
        char = exc.character
        shown = repr(chr(char)) if isinstance(char, int) else repr(char)
        problem = f"character {shown} is not allowed"
        line = frontmatter[: exc.position].count("\n") + FRONTMATTER_FIRST_LINE
    message = f"invalid YAML in frontmatter: {excerpt(problem, 80)}"
    if "alias" in problem:
        # `tools: *` is the usual cause: a bare `*` is YAML alias syntax.
        message += ' (quote a bare *, e.g. tools: "*")'
    return ConfigError(message, path=path, line=line)


def claimed_names(path: Path) -> tuple[str, ...]:
    """Every name a file that cannot be read may claim on its `name:` (or TOML `name =`)
    lines: what follows an anchor, a tag or a quote, a block scalar's next line, an
    escaped quoted string as decoded, and each name-like word there.

    A broken higher-priority file then hides every same-named agent found later, so a
    wider agent never runs in its place: claiming too many fails closed."""
    try:
        # Never open what is not a regular file: a FIFO would block the read.
        if not stat.S_ISREG(path.stat().st_mode):
            return ()
        with path.open("rb") as handle:
            head = handle.read(64 * 1024)
    except OSError:
        return ()
    lines = head.decode("utf-8", errors="replace").split("\n")[:NAME_SCAN_LINES]
    names: dict[str, None] = {}
    for index, line in enumerate(lines):
        match = _NAME_KEY.match(line)
        if match is None:
            continue
        value = line[match.end() :]
        if not value.strip(" \t\r'\"") or value.strip(" \t\r").startswith((">", "|")):
            # `name:` alone, or a block scalar: the name is on the next line.
            value += " " + (lines[index + 1] if index + 1 < len(lines) else "")
        names.update(dict.fromkeys(_NAME_WORD.findall(value)))
        names.update(dict.fromkeys(_NAME_WORD.findall(_unescaped(value))))
        if len(names) > MAX_CLAIMED_NAMES:
            break
    return tuple(names)[:MAX_CLAIMED_NAMES]


def _unescaped(value: str) -> str:
    """A double-quoted YAML/TOML string's escapes decoded (`"rev\\x69ewer"`), else ''."""
    quoted = re.search(r'"((?:[^"\\]|\\.)*)"', value)
    if quoted is None or "\\" not in quoted.group(1):
        return ""
    try:
        decoded = yaml.safe_load(f'"{quoted.group(1)}"')
    except yaml.YAMLError:
        return ""
    return decoded if isinstance(decoded, str) else ""
