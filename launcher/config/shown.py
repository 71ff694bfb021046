"""A server's launch spec as `subagent servers` shows it: every secret shown as `****`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from launcher.config.credentials import Span, args_spans, env_spans, header_spans, hide, url_spans
from launcher.config.expand import MASK, has_reference, mask_secrets
from launcher.config.types import ServerSpec


def masked_launch_spec(spec: ServerSpec) -> dict[str, object]:
    """The resolved launch spec as a JSON-able dict with every secret shown as `****`.

    Credential-shaped parts (config/credentials.py) are masked wherever they stand; in a
    string that held a `${VAR}` reference every secret is masked too, so literal text from
    the file (a path equal to some `${HOME}`) is shown as written. An env value that took
    anything from the environment is masked whole.
    """
    raw = spec.raw

    def show(value: str, raw_value: object, spans: Sequence[Span] = ()) -> str:
        shown = hide(value, spans)
        if isinstance(raw_value, str) and not has_reference(raw_value):
            return shown
        return mask_secrets(shown, spec.secrets)

    def raw_map(key: str) -> Mapping[str, object]:
        value = raw.get(key)
        return value if isinstance(value, dict) else {}

    shown: dict[str, object] = {"name": spec.name, "type": spec.type}
    if spec.type == "stdio":
        raw_args = raw.get("args")
        raw_args = raw_args if isinstance(raw_args, list) else []
        raw_env = raw_map("env")
        shown["command"] = show(spec.command or "", raw.get("command"))
        shown["args"] = [
            show(arg, raw_args[i] if i < len(raw_args) else None, spans)
            for i, (arg, spans) in enumerate(zip(spec.args, args_spans(spec.args), strict=True))
        ]
        shown["env"] = {
            key: _show_env(key, value, raw_env.get(key), spec) for key, value in spec.env.items()
        }
        shown["cwd"] = show(spec.cwd, raw.get("cwd")) if spec.cwd is not None else None
    else:
        raw_headers = raw_map("headers")
        url = spec.url or ""
        shown["url"] = show(url, raw.get("url"), url_spans(url))
        shown["headers"] = {
            key: show(value, raw_headers.get(key), header_spans(key, value))
            for key, value in spec.headers.items()
        }
        if spec.oauth is not None:
            shown["auth"] = spec.auth
            shown["oauth"] = {
                "client_id": spec.oauth.client_id,
                "client_secret": MASK if spec.oauth.client_secret is not None else None,
                "scopes": list(spec.oauth.scopes),
                "client_metadata_url": spec.oauth.client_metadata_url,
                "grant_type": spec.oauth.grant_type,
                "private_key": MASK if spec.oauth.private_key is not None else None,
                "signing_algorithm": spec.oauth.signing_algorithm,
            }
    shown.update(
        startup_timeout=spec.startup_timeout,
        tool_timeout=spec.tool_timeout,
        required=spec.required,
        max_result_bytes=spec.max_result_bytes,
        source=str(spec.source) if spec.source is not None else None,
    )
    return shown


def _show_env(name: str, value: str, raw_value: object, spec: ServerSpec) -> str:
    if isinstance(raw_value, str) and not has_reference(raw_value):
        return hide(value, env_spans(name, value))
    # A value built only from defaults (`${LEVEL:-info}` with LEVEL unset) is file text.
    if any(secret in value for secret in spec.secrets) or not isinstance(raw_value, str):
        return MASK
    return hide(value, env_spans(name, value))
