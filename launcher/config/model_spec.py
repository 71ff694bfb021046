"""Other tools' model spellings as ours (`PROVIDER:MODEL`): pi's and opencode's
`provider/model`, a bare `claude-*` or `gpt-*` id."""

from __future__ import annotations

import re

from launcher.config.frontmatter import excerpt

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
"""pi's `provider/model:LEVEL` thinking suffixes (no provider here takes one yet)."""
_OPENAI_ID = re.compile(r"^(gpt-|o\d|codex-|chatgpt-)")


def provider_slash_model(value: object) -> str | None:
    """`anthropic/claude-x` -> `anthropic:claude-x`; `PROVIDER:MODEL`, `scripted:PATH` and
    `inherit` unchanged; a bare `claude-*` is Anthropic's, a bare `gpt-*`/`o3` OpenAI's.
    A pi thinking suffix (`:high`) or opencode variant (`#high`) is dropped. ValueError
    for anything else."""
    if not isinstance(value, str):
        raise ValueError(f"expected a string (a model name), got {type(value).__name__}")
    spec = value.strip()
    head, colon, _ = spec.partition(":")
    if spec == "inherit" or (colon and "/" not in head):
        return spec
    if "/" in spec:
        provider, _, model = spec.partition("/")
        model = model.partition("#")[0]
        base, colon, level = model.rpartition(":")
        if colon and level in THINKING_LEVELS:
            model = base
        if provider and model:
            return f"{provider}:{model}"
    elif spec.startswith("claude-"):
        return f"anthropic:{spec}"
    elif _OPENAI_ID.match(spec):
        return f"openai:{spec}"
    raise ValueError(
        "expected PROVIDER/MODEL, PROVIDER:MODEL, a claude-* or gpt-* id or inherit, "
        f"got '{excerpt(spec)}'"
    )
