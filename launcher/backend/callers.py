"""Who may call `serve --http`: bearer tokens by caller, and where serve may listen.

SDK-free: the command line checks all of this before anything heavy loads. A token is
compared in constant time (hmac.compare_digest over SHA-256 digests, every known token
each time), so neither its content nor its length shows in how long a refusal takes.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import re
import socket
import stat
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from launcher import runtime, settings
from launcher.errors import ConfigError, UsageError

TOKEN_ENV = settings.SERVE_TOKEN.name
"""One bearer token from the environment, for the caller DEFAULT_CALLER."""
DEFAULT_CALLER = "default"
MIN_TOKEN_CHARS = 16
"""A shorter token is guessable over a network (16 random characters: ~95 bits)."""
CALLER_NAME = re.compile(r"[A-Za-z0-9._@+-]{1,64}")
"""A caller's name in a token file: it is recorded with every session the caller starts."""
DEFAULT_HTTP_HOST = "127.0.0.1"
MCP_PATH = "/mcp"


@dataclass
class Tokens:
    """Bearer tokens by caller; `caller(token)` finds one in constant time."""

    by_caller: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._digests = [(_digest(t), c) for c, t in self.by_caller.items()]

    def __bool__(self) -> bool:
        return bool(self.by_caller)

    def caller(self, token: str) -> str | None:
        """The caller whose token this is, or None; every token is compared, whatever matched."""
        presented = _digest(token)
        found = None
        for digest, name in self._digests:
            if hmac.compare_digest(presented, digest):
                found = name
        return found


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def load_tokens(token_file: Path | None, environ: dict[str, str] | None = None) -> Tokens:
    """The tokens of `--token-file` and of SUBAGENT_SERVE_TOKEN (caller `default`); a
    problem is a ConfigError naming the file, line and field (never the token)."""
    env = os.environ if environ is None else environ
    by_caller: dict[str, str] = {}
    if token_file is not None:
        by_caller.update(read_token_file(token_file))
    from_env = settings.SERVE_TOKEN.raw(env)
    if from_env:
        if DEFAULT_CALLER in by_caller:
            raise ConfigError(
                f"{token_file}: caller '{DEFAULT_CALLER}' is also {TOKEN_ENV}'s caller: "
                "give it another name, or unset the variable"
            )
        _check_token(from_env, TOKEN_ENV)
        by_caller[DEFAULT_CALLER] = from_env
    _check_distinct(by_caller, token_file)
    return Tokens(by_caller)


def read_token_file(path: Path) -> dict[str, str]:
    """`CALLER TOKEN` lines (blank lines and `#` comments skipped) of a file that only its
    owner may read."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{path}: --token-file must be a regular file")
        if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            mode = stat.S_IMODE(info.st_mode)
            raise ConfigError(
                f"{path}: --token-file is open to group or others (mode {mode:04o}); "
                f"its tokens let anyone run sub-agents: chmod 600 {path}"
            )
        if info.st_nlink != 1:
            # The sandbox denies a file by its name: another name for it would stay readable.
            raise ConfigError(
                f"{path}: --token-file has {info.st_nlink} hard links; a link elsewhere would "
                "be readable by sub-agents: keep it one name (copy it, then remove the others)"
            )
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: --token-file cannot be read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: --token-file is not UTF-8 text") from exc
    out: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        where = f"{path}:{number}"
        if len(parts) != 2:
            raise ConfigError(f"{where}: expected 'CALLER TOKEN' (two fields separated by space)")
        caller, token = parts
        if not CALLER_NAME.fullmatch(caller):
            raise ConfigError(f"{where}: field CALLER must be 1-64 of A-Z a-z 0-9 . _ @ + -")
        if caller in out:
            raise ConfigError(f"{where}: field CALLER: '{caller}' is listed twice")
        _check_token(token, f"{where}: field TOKEN")
        out[caller] = token
    if not out:
        raise ConfigError(f"{path}: --token-file lists no 'CALLER TOKEN' line")
    return out


def _check_token(token: str, where: str) -> None:
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(f"{where}: a token needs at least {MIN_TOKEN_CHARS} characters")


def _check_distinct(by_caller: dict[str, str], token_file: Path | None) -> None:
    seen: dict[str, str] = {}
    for caller, token in by_caller.items():
        if token in seen:
            source = token_file or TOKEN_ENV
            raise ConfigError(
                f"{source}: callers '{seen[token]}' and '{caller}' share one token: "
                "each caller needs its own"
            )
        seen[token] = caller


def parse_listen(value: str) -> tuple[str, int]:
    """`[HOST:]PORT` (an IPv6 HOST in brackets) as (host, port); UsageError otherwise."""
    host, port_text = DEFAULT_HTTP_HOST, value
    if value.startswith("["):
        inner, bracket, rest = value[1:].partition("]")
        if not bracket or not rest.startswith(":"):
            raise UsageError(f"--http {value!r}: expected [HOST:]PORT, e.g. [::1]:8765")
        host, port_text = inner, rest[1:]
    elif ":" in value:
        host, _, port_text = value.rpartition(":")
    if not host or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise UsageError(f"--http {value!r}: expected [HOST:]PORT with PORT 0-65535")
    return host, int(port_text)


def is_loopback(host: str) -> bool:
    """Whether `host` is loopback only: 127.0.0.0/8, ::1 or `localhost`."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, tokens: Tokens, issuer: str | None) -> None:
    """Listening beyond loopback needs tokens or an issuer: UsageError naming the token."""
    if is_loopback(host) or tokens or issuer:
        return
    raise UsageError(
        f"serve --http on {host} is reachable beyond this machine: set {TOKEN_ENV} "
        "(a bearer token), --token-file FILE or --auth-issuer URL"
    )


def url_host(host: str) -> str:
    """`host` as it is written in a URL (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host else host


class HttpOptions(NamedTuple):
    """`--http` and the options that go with it (all None: serve on stdio)."""

    listen: str | None = None
    token_file: Path | None = None
    auth_issuer: str | None = None
    public_url: str | None = None
    max_per_caller: int | None = None


@dataclass(frozen=True)
class Listener:
    """Where and for whom `serve --http` listens, checked."""

    host: str
    port: int
    tokens: Tokens
    issuer: str | None = None
    public_url: str | None = None
    token_file: Path | None = None
    """Read as a secret: no sub-agent may read it."""
    max_per_caller: int | None = None
    """Sub-agents one caller may run at once (None: the fair default, per_caller_limit)."""

    def per_caller_limit(self, max_concurrent: int) -> int:
        """`--max-per-caller`, else a fair share: when several callers may call (a token
        file of two or more, or an issuer's subjects), one slot is always left to others."""
        if self.max_per_caller is not None:
            return self.max_per_caller
        several = self.issuer is not None or len(self.tokens.by_caller) > 1
        return max(1, max_concurrent - 1) if several else max_concurrent


EXPIRED_GRACE_S = 300.0
"""How long an expired token is still handed down: a worker started just after it
expired may still be given it in a host's prompt."""


def handed_generation() -> int:
    """Which set of handed-down secrets a worker started now would get (see `hand_down_token`)."""
    return runtime.current().secrets.handed_generation


def hand_down_token(value: str, expires_at: float) -> None:
    """Mask a caller's token learned at run time (a JWT) here and in every worker started
    from now on, as `hand_down_secrets` does for the token file's; until `expires_at`
    (epoch seconds) and a grace after, so the handed set does not grow for ever."""
    from launcher.secrets import is_maskable, note_secrets

    held = runtime.current().secrets
    now = time.time()
    for old, (name, until) in list(held.handed.items()):
        if until + EXPIRED_GRACE_S < now:
            os.environ.pop(name, None)
            del held.handed[old]
    if value in held.handed or not is_maskable(value):
        return
    note_secrets([value])
    name = settings.CALLER_TOKEN.key(f"JWT_{hashlib.sha256(value.encode()).hexdigest()[:16]}")
    held.handed[value] = (name, expires_at)
    os.environ[name] = value
    held.handed_generation += 1


def hand_down(listener: Listener | None) -> None:
    """What serve reads as secrets, kept from its sub-agents: every worker started from now
    on masks the tokens, and its sandbox and file tools refuse the token file."""
    from launcher.secret_files import note_secret_files
    from launcher.secrets import hand_down_secrets

    if listener is None:
        return
    hand_down_secrets(listener.tokens.by_caller.values())
    if listener.token_file is not None:
        note_secret_files([listener.token_file])


def check_http(http: HttpOptions) -> Listener | None:
    """The checked listener (None: stdio); UsageError or ConfigError for what makes no sense."""
    if http.listen is None:
        for name, value in zip(
            ("--token-file", "--auth-issuer", "--public-url", "--max-per-caller"),
            http[1:],
            strict=True,
        ):
            if value is not None:
                raise UsageError(f"{name} goes with --http")
        return None
    host, port = parse_listen(http.listen)
    tokens = load_tokens(http.token_file)
    if tokens and http.auth_issuer:
        raise UsageError(
            "--auth-issuer and bearer tokens (--token-file, SUBAGENT_SERVE_TOKEN) exclude "
            "each other: callers are either the token file's or the issuer's subjects"
        )
    if http.public_url and not http.auth_issuer:
        raise UsageError("--public-url goes with --auth-issuer")
    for name, url in (("--auth-issuer", http.auth_issuer), ("--public-url", http.public_url)):
        if url is not None and not url.startswith(("https://", "http://")):
            raise UsageError(f"{name} {url!r}: expected an http(s) URL")
    check_exposure(host, tokens, http.auth_issuer)
    return Listener(
        host, port, tokens, http.auth_issuer, http.public_url, http.token_file, http.max_per_caller
    )


PROC_NET_TCP = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
"""The kernel's TCP socket tables: each socket's local and remote address and its owner."""


def _proc_address(text: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    """A /proc/net/tcp{,6} `ADDR:PORT` (the address in 32-bit words of host byte order)."""
    addr_hex, _, port_hex = text.partition(":")
    words = [int(addr_hex[i : i + 8], 16) for i in range(0, len(addr_hex), 8)]
    raw = b"".join(struct.pack("=I", w) for w in words)
    address = ipaddress.ip_address(raw)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address, int(port_hex, 16)


def _as_address(host: str, port: int) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    address = ipaddress.ip_address(host.strip("[]").partition("%")[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address, port


def peer_uid(peer: tuple[str, int], local: tuple[str, int]) -> int | None:
    """The uid owning the TCP socket at `peer` connected to `local`, from the kernel's
    socket tables (Linux; the peer must be on this machine); None when it cannot be told."""
    try:
        want_local, want_remote = _as_address(*peer), _as_address(*local)
    except ValueError:
        return None
    from launcher.backend.sock_diag import held_by_owner, owner_uid

    if want_local[0].version == want_remote[0].version:
        family = socket.AF_INET if want_local[0].version == 4 else socket.AF_INET6
        uid = owner_uid(family, want_local, want_remote)  # one lookup, not the whole table
        if uid is not None:
            return uid
    for table in PROC_NET_TCP:
        try:
            lines = table.read_text(encoding="ascii").splitlines()[1:]
        except (OSError, UnicodeDecodeError):
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10:
                continue
            try:
                if (_proc_address(fields[1]), _proc_address(fields[2])) == (
                    want_local,
                    want_remote,
                ):
                    # The same rule as sock_diag's: timewait rows show uid 0 too.
                    if held_by_owner(int(fields[3], 16), int(fields[9])):
                        return int(fields[7])
            except ValueError:
                continue
    return None
