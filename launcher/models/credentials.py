"""API keys of HTTP providers: when a missing key is fine, and what to tell the user when not."""

from __future__ import annotations

import ipaddress

import httpx2

from launcher.errors import ModelError


def is_loopback_url(url: str) -> bool:
    """True when `url` points at this machine (a local server such as Ollama or llama.cpp)."""
    try:
        host = httpx2.URL(url).host
    except httpx2.InvalidURL:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def require_key(provider: str, api_key: str | None, env_var: str, base_url: str) -> str | None:
    """Return the key, or None for a local endpoint; raise ModelError naming the env var."""
    if api_key:
        return api_key
    if is_loopback_url(base_url):
        return None
    raise ModelError(
        f"{provider}: no API key: set {env_var} (or use --model scripted:PATH to run offline)"
    )
