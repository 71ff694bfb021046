"""What counts as a secret, and the one masking function every writer uses.

A leaf: the bash tool's environment filter, the scrubbed re-exec (procs/hidden.py),
server logs, the event sinks and the CLI's output all ask this module. A secret is
masked in every form a log line or a tool result is likely to carry it: raw,
URL-encoded, JSON-escaped, and base64 (standard and URL-safe, also embedded in a
longer base64 string at any of the three byte alignments).

One rule for every value, wherever it came from (a `${VAR}` in mcp.json, a credential-named
variable, a hidden one, a learned token): a value shorter than MIN_SECRET_CHARS is never
masked. Masking replaces text wherever it occurs, so a short value would also replace
what merely looks like it: a one-letter value every such letter in every result, a user
name every path under the home directory, a `1` every digit of an answer. No credential
is that short, and a user who puts one in `${VAR}` is warned at config load (by name,
never by value) that it will show. And a masked copy is only ever written for people to
read: the fields of an event that the program reads back (session ids, agent and server
names, paths, the model spec) are never masked (`UNMASKED`), whatever the values.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, AnyStr, Generic, TypeVar, cast
from urllib.parse import unquote

from launcher import runtime, settings
from launcher.secret_forms import secret_bytes, secret_forms

MASK = "****"
"""What a secret value is displayed as."""

SECRET_NAME = re.compile(
    r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|OTEL_EXPORTER_OTLP_(?:\w+_)?HEADERS)",
    re.IGNORECASE,
)
"""Variables the model's shell never sees: API keys and tokens would end up in its context.
The OTLP exporter's headers are among them: a collector takes its API key there."""
HEADERS_NAME = re.compile(r"OTEL_EXPORTER_OTLP_(?:\w+_)?HEADERS", re.IGNORECASE)
"""Variables of `key=value,...` headers (W3C baggage style): each value is a secret alone."""
URL_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s:]*:([^/?#@\s]+)@")
"""A URL with a password in its userinfo (`scheme://user:PASS@host`): PASS is a secret,
whatever the variable holding the URL is called (`DATABASE_URL`, `HTTPS_PROXY`)."""

MIN_SECRET_CHARS = 8
"""A value shorter than this is never masked (`AUTH_ENABLED=1` would mask every `1` in every
log, a user name every path): see the module docstring."""
SCAN_FORMS = 24
"""Up to this many forms (a secret has 5 to about a dozen), text is searched for each in
turn: faster than the alternation's scan of every character; past it, the pattern wins."""


def forget_learned_secrets() -> None:
    """Drop every value `note_secrets` registered (tests: one test's tokens stay its own)."""
    held = runtime.current().secrets
    if held.learned:
        held.learned.clear()
        held.generation += 1


def note_secrets(values: Iterable[str]) -> None:
    """Register credentials learned at run time (tokens): every LiveMask masks them from now."""
    held = runtime.current().secrets
    # A value too short to be a credential would mask every copy of it in every log.
    new = {v for v in values if len(v) >= MIN_SECRET_CHARS and v not in held.learned}
    if new:
        held.learned.update(new)
        held.generation += 1


def hand_down_secrets(values: Iterable[str]) -> None:
    """Mask `values` here and in every worker started from now on (as hidden variables)."""
    values = [v for v in values if is_maskable(v)]
    note_secrets(values)
    for number, value in enumerate(values):
        os.environ[settings.CALLER_TOKEN.key(str(number))] = value


def note_hidden(values: Mapping[str, str]) -> None:
    """Record variables hidden from this process's environment block: never for the shell."""
    runtime.current().secrets.hidden.update(values)


def hidden_names() -> frozenset[str]:
    """Names of the variables recorded by `note_hidden`."""
    return frozenset(runtime.current().secrets.hidden)


def is_secret_name(name: str) -> bool:
    """Whether a variable's name marks it as a credential (or it was hidden as one)."""
    return bool(SECRET_NAME.search(name)) or name in runtime.current().secrets.hidden


def public_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's) minus every secret-named or hidden variable."""
    env = os.environ if env is None else env
    return {k: v for k, v in env.items() if not is_secret_name(k)}


def process_secrets(env: Mapping[str, str] | None = None) -> frozenset[str]:
    """Values of this process's secret-named and hidden variables (API keys, tokens), each
    OTLP header's value, and the password of every URL with one in any variable."""
    env = os.environ if env is None else env
    held = runtime.current().secrets
    values = {v for k, v in env.items() if is_secret_name(k)} | set(held.hidden.values())
    for name, value in (*env.items(), *held.hidden.items()):
        values |= value_secrets(name, value)
    return frozenset({v for v in values if is_maskable(v)} | held.learned)


def value_secrets(name: str, value: str) -> set[str]:
    """The secrets inside one variable's value that its name does not make one whole: the
    values of OTLP headers, and the passwords in URLs (as written and URL-decoded)."""
    found: set[str] = set()
    if HEADERS_NAME.fullmatch(name):
        for item in value.split(","):
            header = unquote(item.partition("=")[2]).strip()
            # `Bearer TOKEN`, `Basic B64`: the credential alone is also masked.
            found |= {header, header.rpartition(" ")[2]}
    for match in URL_USERINFO.finditer(value):
        found |= {match.group(1), unquote(match.group(1))}
    return {v for v in found if v}


def is_maskable(value: str) -> bool:
    """Whether `value` is long enough to be masked without masking unrelated text."""
    return len(value) >= MIN_SECRET_CHARS


T = TypeVar("T")


UNMASKED = "unmasked"
"""Metadata key of an event field the program reads back (an id, a name, a path)."""


class SecretMask:
    """Masks known secret values, in all their forms, in text, bytes and events.

    Values shorter than `min_chars` are left out (MIN_SECRET_CHARS: see the module
    docstring); a display shown once and never read back may pass 1.
    """

    def __init__(self, values: Iterable[str] = (), *, min_chars: int = MIN_SECRET_CHARS) -> None:
        self.min_chars = min_chars
        self.values = frozenset(v for v in values if v and len(v) >= min_chars)
        forms = set().union(*(secret_forms(v) for v in self.values)) if self.values else set()
        ordered = sorted(forms, key=len, reverse=True)  # longest first: no partial leftovers
        self._text = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        # A few forms are found faster one by one (`in`: a C substring search that skips)
        # than by the pattern, whose first-character scan tests every character of the text.
        self._forms = tuple(ordered) if len(ordered) <= SCAN_FORMS else None
        encoded = [secret_bytes(form) for form in ordered]
        self._last_tuple: tuple[tuple[Any, ...], tuple[Any, ...]] | None = None
        self._bytes = re.compile(b"|".join(map(re.escape, encoded))) if ordered else None
        self.longest = max((len(form) for form in encoded), default=0)
        """Bytes of the longest form: how much of a byte stream may have to wait for more."""
        self.longest_text = max((len(form) for form in ordered), default=0)
        """Characters of the longest form: the same for a text stream."""

    def __bool__(self) -> bool:
        return self._text is not None

    def union(self, values: Iterable[str]) -> SecretMask:
        """A mask of these values and this mask's."""
        return SecretMask(self.values | set(values), min_chars=self.min_chars)

    def text(self, text: str) -> str:
        """`text` with every form of every secret replaced by `****`."""
        if self._text is None or not text or not self._occurs(text):
            return text  # the common case: nothing to mask, no pattern run over the text
        return self._text.sub(MASK, text)

    def _occurs(self, text: str) -> bool:
        # Whether a form occurs in `text`; the caller made sure there is a pattern.
        forms = self._forms
        if forms is None:
            return cast(re.Pattern[str], self._text).search(text) is not None
        for form in forms:
            if form in text:
                return True
        return False

    def finds(self, text: str) -> bool:
        """Whether any form of any secret occurs in `text` (`text` would change)."""
        return self._text is not None and self._occurs(text)

    def data(self, data: bytes) -> bytes:
        """Like `text`, for bytes (a server's stderr, which need not be UTF-8)."""
        if self._bytes is None or not data:
            return data
        return self._bytes.sub(MASK.encode(), data)

    def cut(self, pending: AnyStr, *, final: bool = False) -> tuple[AnyStr, AnyStr]:
        """A stream's pending data split into what can be written now, masked, and the tail
        that must wait: where a secret the next chunk completes may begin (`final`: none)."""
        if isinstance(pending, str):
            if self._text is None:
                return pending, pending[:0]
            return _cut(self._text, pending, 0 if final else self.longest_text - 1, MASK)
        if self._bytes is None:
            return pending, pending[:0]
        return _cut(self._bytes, pending, 0 if final else self.longest - 1, MASK.encode())

    def value(self, obj: T) -> T:
        """Mask every string inside a JSON-like value (dicts, lists, tuples); a new value."""
        masked: T = self._value(obj)
        return masked

    def _value(self, obj: Any) -> Any:
        # The walk of `value` and `event`; a LiveMask is brought up to date once, before it.
        kind = type(obj)
        if kind is str:  # most values: one type test, not four isinstance ones
            return self._text.sub(MASK, obj) if self._text is not None and obj else obj
        if kind in _SCALARS or obj is None:
            return obj
        if isinstance(obj, str):
            return self._text.sub(MASK, obj) if self._text is not None and obj else obj
        if isinstance(obj, dict):
            return {self._value(k): self._value(v) for k, v in obj.items()}
        if isinstance(obj, tuple) and self._text is not None:
            return self._tuple(obj)
        if isinstance(obj, (list, tuple)):
            return type(obj)(self._value(v) for v in obj)
        return obj

    def _tuple(self, obj: tuple[Any, ...]) -> tuple[Any, ...]:
        # A tuple cannot change: the same one masked again (a turn's offered tool names, turn
        # after turn) gets the last answer, and one with nothing to mask is its own answer.
        last = self._last_tuple
        if last is not None and last[0] is obj:
            return last[1]
        masked = type(obj)(self._value(v) for v in obj)
        if masked == obj:
            masked = obj
        self._last_tuple = (obj, masked)
        return masked

    def event(self, event: T) -> T:
        """A copy of a dataclass event with every string field masked, bar UNMASKED ones."""
        if self._text is None:
            return event
        names = _MASKED_FIELDS.get(type(event))
        if names is None:
            if not dataclasses.is_dataclass(event):
                return event
            names = _masked_fields(type(event))
        text = self._text
        changes: dict[str, Any] = {}
        for name in names:
            old = getattr(event, name)
            kind = type(old)
            if kind is str:  # most fields: masked here, without a call per field
                if old and (new := text.sub(MASK, old)) is not old:
                    changes[name] = new  # sub hands back the very string when nothing matched
                continue
            if old is None or kind in _SCALARS:
                continue  # a time, a turn, a flag: nothing to mask
            new = self._value(old)
            if new is not old and new != old:
                changes[name] = new
        return dataclasses.replace(event, **changes) if changes else event  # type: ignore[type-var]


_SCALARS = frozenset({int, float, bool})
_MASKED_FIELDS: dict[type, tuple[str, ...]] = {}
"""Each event class's fields that are masked (init fields not marked UNMASKED)."""


def _masked_fields(cls: type) -> tuple[str, ...]:
    names = _MASKED_FIELDS.get(cls)
    if names is None:
        fields = dataclasses.fields(cls)
        names = tuple(f.name for f in fields if f.init and not f.metadata.get(UNMASKED))
        _MASKED_FIELDS[cls] = names
    return names


class LiveMask(SecretMask):
    """A SecretMask that also masks every value `note_secrets` registers after it was made.

    A session's events and logs are masked by a mask made at its start; an OAuth token
    learned (or refreshed) later must be masked by it too.
    """

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._base = frozenset(v for v in values if v)
        self._seen: tuple[object, int] | None = None
        self._sync()

    def _sync(self) -> None:
        held = runtime.current().secrets
        # The runtime's identity too: a fresh one restarts its generation count.
        seen = (held, held.generation)
        if self._seen != seen:
            # Made whole first, then taken at once: a mask never holds half of a new state,
            # nor marks one as seen that it does not hold.
            self.__dict__.update(SecretMask(self._base | held.learned).__dict__)
            self._seen = seen

    def __bool__(self) -> bool:
        self._sync()
        return super().__bool__()

    def union(self, values: Iterable[str]) -> LiveMask:
        """A live mask of these values and this mask's."""
        return LiveMask(self._base | set(values))

    def text(self, text: str) -> str:
        """`text` with every form of every secret (learned ones included) masked."""
        self._sync()
        return super().text(text)

    def finds(self, text: str) -> bool:
        """Like SecretMask.finds, learned values included."""
        self._sync()
        return super().finds(text)

    def data(self, data: bytes) -> bytes:
        """Like `text`, for bytes."""
        self._sync()
        return super().data(data)

    def cut(self, pending: AnyStr, *, final: bool = False) -> tuple[AnyStr, AnyStr]:
        """Like SecretMask.cut, learned values included."""
        self._sync()
        return super().cut(pending, final=final)

    def value(self, obj: T) -> T:
        """Like SecretMask.value, learned tokens included."""
        self._sync()
        return super().value(obj)

    def event(self, event: T) -> T:
        """Like SecretMask.event, learned tokens included (also when none was known at first)."""
        self._sync()
        return super().event(event)


class StreamMask(Generic[AnyStr]):
    """Masks a stream (bytes or text) chunk by chunk; a secret split across chunks is caught.

    What it writes is what masking the whole stream at once would: the tail where a secret
    the next chunk could complete may begin is held back, unmasked (a longer secret that
    starts inside a shorter one is still found whole), and `flush` releases it, masked.
    """

    def __init__(self, mask: SecretMask, empty: AnyStr) -> None:
        self._mask = mask
        self._held: AnyStr = empty

    def feed(self, chunk: AnyStr) -> AnyStr:
        """What is safe to write now, masked."""
        out, self._held = self._mask.cut(self._held + chunk)
        return out

    def flush(self) -> AnyStr:
        """Whatever is still held back, masked: the stream (or one message of it) ended."""
        out, self._held = self._mask.cut(self._held, final=True)
        return out


def _cut(
    pattern: re.Pattern[AnyStr], pending: AnyStr, keep: int, token: AnyStr
) -> tuple[AnyStr, AnyStr]:
    # A match starting before `safe` fits whole in `pending` (no form is longer than keep+1),
    # so it is final; text before `safe` where none starts can never become part of one.
    safe = len(pending) - keep
    if safe <= 0:
        return pending[:0], pending
    first = pattern.search(pending)
    if first is None or first.start() >= safe:  # the common case: nothing to mask yet
        return pending[:safe], pending[safe:]
    parts: list[AnyStr] = []
    pos = 0
    for match in pattern.finditer(pending, first.start()):
        if match.start() >= safe:
            break
        parts += (pending[pos : match.start()], token)
        pos = match.end()
    end = max(pos, safe)
    parts.append(pending[pos:end])
    return pending[:0].join(parts), pending[end:]
