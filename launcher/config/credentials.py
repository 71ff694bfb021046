"""Which literal parts of a server's launch spec look like credentials.

A `${VAR}` value is a secret because it came from the environment. A file can also hold a
credential as plain text (another host's file more often than not): an `Authorization`
header, `API_KEY=...` in `env`, a password in a URL, `--token=...` in `args`. Each rule
here finds such a part by its place (a credential-named header, variable, query parameter
or flag; URL userinfo; an auth scheme's credential) or by a token's well-known shape
(`sk-...`, `ghp_...`), as spans of the value. `servers` shows those spans as `****`, and
the session masks the values (at least MIN_SECRET_CHARS long) like any other secret.
Names, paths and the command are never credentials.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from launcher.secrets import MASK, SECRET_NAME

Span = tuple[int, int]

_MORE_WORDS = re.compile(r"(COOKIE|SESSION|SIGNATURE|PASSPHRASE)", re.IGNORECASE)
_POINTERS = frozenset(
    "FILE PATH DIR DIRECTORY ENV VAR VARIABLE NAME TYPE MODE URL URI HOST PORT SCHEME "
    "PROVIDER METHOD HEADER ENABLED REQUIRED TIMEOUT TTL EXPIRY EXPIRES LENGTH SIZE "
    "COUNT LEVEL FORMAT ALGORITHM ALG".split()
)
"""A name's last word that says it names where a credential is, not the credential
(`TOKEN_FILE`, `API_KEY_ENV`, `--auth-type`): its value is shown."""
_QUERY_NAMES = frozenset({"sig", "pwd", "pass", "code", "access_token", "apikey"})
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z0-9]+(?![a-z])")
_SCHEME = re.compile(r"^\s*(Bearer|Basic|Token|Bot|Digest|ApiKey|Key)\s+(?=\S)", re.IGNORECASE)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^/?#\s]*)[^\s]*")
_FLAG = re.compile(r"^--?([A-Za-z][A-Za-z0-9_.-]*)(=?)")
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=")
_HEADER_LINE = re.compile(r"^([A-Za-z0-9-]+):\s*")
_HEADER_FLAGS = frozenset({"H", "header"})
_SHAPES = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    r"sk-(?:[A-Za-z]+-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}"
    r"|glpat-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}"
    r"|AIza[0-9A-Za-z_-]{35}|[rs]k_live_[A-Za-z0-9]{16,}|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,}"
    r")"
)
"""Tokens whose prefix says what they are (OpenAI, GitHub, GitLab, Slack, AWS, Google,
Stripe, npm, Hugging Face): a credential wherever it stands."""
_CONN_PASSWORD = re.compile(r"(?<![A-Za-z0-9_])(?:password|passwd|pwd)\s*=\s*", re.IGNORECASE)
"""A password assigned inside a connection string (`Server=x;Password=...;`,
`host=db password=...`), in any value: its value runs to the next `;` or space."""
_PORTISH = re.compile(r"^[0-9.:\[\]]+(?:/(?:tcp|udp|sctp))?$")
"""`-p`'s value when it is a port, a port mapping or an address (`5432`, `8080:80`)."""
_WEBHOOKS = (
    (
        re.compile(r"^hooks\.slack\.com$"),
        re.compile(r"^/(?:services|workflows|triggers)/.*/([^/]+)"),
    ),
    (
        re.compile(r"^(?:(?:ptb|canary)\.)?discord(?:app)?\.com$"),
        re.compile(r"^/api(?:/v\d+)?/webhooks/[^/]+/([^/]+)"),
    ),
    (re.compile(r"^api\.telegram\.org$"), re.compile(r"^/(?:file/)?bot([^/]+)")),
    (
        re.compile(r"^(?:[a-z0-9-]+\.webhook\.office\.com|outlook\.office(?:365)?\.com)$"),
        re.compile(r"^/webhookb?2?/(.+)"),
    ),
)
"""Webhook URLs whose path holds the credential (host, then the path with the secret as its
group): Slack, Discord, Telegram bots, Microsoft Teams. Other URL paths are shown."""


def credential_name(name: str) -> bool:
    """Whether a header, variable, parameter or flag of this name holds a credential."""
    if not (SECRET_NAME.search(name) or _MORE_WORDS.search(name)):
        return False
    words = _WORDS.findall(name)
    return not words or words[-1].upper() not in _POINTERS


def shapes(value: str, offset: int = 0) -> list[Span]:
    """Spans of well-known token shapes in `value`."""
    return [(m.start() + offset, m.end() + offset) for m in _SHAPES.finditer(value)]


def url_spans(value: str, offset: int = 0) -> list[Span]:
    """Credentials in the URLs inside `value`: userinfo (its password, when it has one) and
    the values of credential-named query and fragment parameters."""
    spans: list[Span] = []
    for url in _URL.finditer(value):
        netloc_start, netloc_end = url.span(1)
        at = value.rfind("@", netloc_start, netloc_end)
        if at > netloc_start:
            colon = value.find(":", netloc_start, at)
            spans.append((colon + 1 if colon >= 0 else netloc_start, at))
        for mark in "?#":
            start = value.find(mark, netloc_end, url.end())
            if start >= 0:
                spans += _params(value, start + 1, url.end())
        spans += _webhook_path(
            value, at + 1 if at > netloc_start else netloc_start, netloc_end, url.end()
        )
    return [(a + offset, b + offset) for a, b in spans if b > a]


def _webhook_path(value: str, host_start: int, netloc_end: int, url_end: int) -> list[Span]:
    """The secret in a known webhook URL's path (see _WEBHOOKS)."""
    host = value[host_start:netloc_end].rsplit(":", 1)[0].lower()
    path_end = min(
        [i for i in (value.find(m, netloc_end, url_end) for m in "?#") if i >= 0] or [url_end]
    )
    path = value[netloc_end:path_end]
    for host_rule, path_rule in _WEBHOOKS:
        found = path_rule.match(path) if host_rule.match(host) else None
        if found is not None:
            return [(netloc_end + found.start(1), netloc_end + found.end(1))]
    return []


def conn_spans(value: str, offset: int = 0) -> list[Span]:
    """Passwords assigned inside a connection string anywhere in `value`."""
    spans = []
    for found in _CONN_PASSWORD.finditer(value):
        end = found.end()
        while end < len(value) and value[end] != ";" and not value[end].isspace():
            end += 1
        spans.append((found.end() + offset, end + offset))
    return [(a, b) for a, b in spans if b > a]


def _in_text(value: str) -> list[Span]:
    """What marks a credential wherever it stands: shapes, URLs, connection strings."""
    return shapes(value) + url_spans(value) + conn_spans(value)


def _params(value: str, start: int, end: int) -> list[Span]:
    spans = []
    for part in re.finditer(r"[^&;#?]+", value[start:end]):
        name, eq, _ = part.group().partition("=")
        if eq and (credential_name(name) or name.lower() in _QUERY_NAMES):
            spans.append((start + part.start() + len(name) + 1, start + part.end()))
    return spans


def header_spans(name: str, value: str) -> list[Span]:
    """A header's credential: after an auth scheme (`Bearer ****`), else the whole value of
    a credential-named header, else any token shape or URL credential in it."""
    scheme = _SCHEME.match(value)
    if scheme is not None:
        return [(scheme.end(), len(value.rstrip()))]
    if credential_name(name) and value.strip():
        return [(0, len(value))]
    return _merge(_in_text(value))


def env_spans(name: str, value: str) -> list[Span]:
    """A variable's credential: the whole value of a credential-named one, else any token
    shape or URL credential in it (`DATABASE_URL=postgres://me:****@db`)."""
    if credential_name(name) and value:
        return [(0, len(value))]
    return _merge(_in_text(value))


def args_spans(args: Sequence[str]) -> list[list[Span]]:
    """Each argument's credentials: the value of a credential-named flag (`--token=****`,
    `--api-key ****`) or assignment (`-e GITHUB_TOKEN=****`), a header given as an argument
    (`--header 'Authorization: Bearer ****'`), token shapes and URL credentials."""
    found: list[list[Span]] = [_in_text(arg) for arg in args]
    for i, arg in enumerate(args):
        flag = _FLAG.match(arg)
        assign = _ASSIGN.match(arg)
        header = _HEADER_LINE.match(arg)
        if arg.startswith("-p=") and not _PORTISH.match(arg[3:]):
            found[i].append((3, len(arg)))  # a short password flag (mysql, redis-cli -a...)
        elif arg == "-p" and i + 1 < len(args) and not args[i + 1].startswith("-"):
            if not _PORTISH.match(args[i + 1]):  # `-p 5432`, `-p 8080:80`: a port
                found[i + 1].append((0, len(args[i + 1])))
        elif flag is not None and credential_name(flag.group(1)):
            if flag.group(2):
                found[i].append((flag.end(), len(arg)))
            elif i + 1 < len(args) and not args[i + 1].startswith("-"):
                found[i + 1].append((0, len(args[i + 1])))
        elif assign is not None and credential_name(assign.group(1)):
            found[i].append((assign.end(), len(arg)))
        elif header is not None and (
            (i > 0 and _flag_name(args[i - 1]) in _HEADER_FLAGS) or credential_name(header.group(1))
        ):
            cut = header.end()
            found[i] += [(a + cut, b + cut) for a, b in header_spans(header.group(1), arg[cut:])]
    return [_merge(spans) for spans in found]


def _flag_name(arg: str) -> str | None:
    flag = _FLAG.match(arg)
    return flag.group(1) if flag is not None and not flag.group(2) else None


def _merge(spans: Iterable[Span]) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        elif end > start:
            merged.append((start, end))
    return merged


def hide(value: str, spans: Iterable[Span]) -> str:
    """`value` with each span shown as `****`."""
    out: list[str] = []
    pos = 0
    for start, end in _merge(spans):
        out += (value[pos:start], MASK)
        pos = end
    return "".join(out) + value[pos:]


def pieces(value: str, spans: Iterable[Span]) -> set[str]:
    """The text of each span: the credentials themselves."""
    return {value[start:end] for start, end in _merge(spans)}


def launch_credentials(
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> set[str]:
    """Every credential found in a server's resolved launch values."""
    found: set[str] = set()
    for arg, spans in zip(args, args_spans(args), strict=True):
        found |= pieces(arg, spans)
    for name, value in (env or {}).items():
        found |= pieces(value, env_spans(name, value))
    for name, value in (headers or {}).items():
        found |= pieces(value, header_spans(name, value))
    if url:
        found |= pieces(url, url_spans(url))
    return found
