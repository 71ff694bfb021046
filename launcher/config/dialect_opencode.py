"""opencode's agent files (`.opencode/agent/*.md`, `~/.config/opencode/agent/`) as a dialect.

Its `tools` map (`{write: false, "gh_*": false}`, globs over opencode's tool names) and its
`permission` / `permissions` rules become our denials; `"*": false` makes the `true`
entries after it the allowlist. `ask` is deny: a sub-agent here has nobody to ask. Its
model's model is offered opencode's names: `read`, `glob`, `list`, `SERVER_TOOL`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from launcher.config.dialect import Action, Dialect, FieldRule
from launcher.config.frontmatter import excerpt
from launcher.config.host_tools import (
    allow_selector,
    builtins_matching,
    deny_selectors,
    is_glob,
)
from launcher.config.model_spec import provider_slash_model

H, M, IGN, REF = Action.HONOURED, Action.MAPPED, Action.IGNORED, Action.REFUSED

TOOL_NAMES: Mapping[str, str] = {
    "read": "read",
    "write": "write",
    "edit": "edit",
    "patch": "edit",
    "bash": "bash",
    "grep": "grep",
    "glob": "find",
    "list": "ls",
}
"""opencode's built-in tool names -> ours."""

PERMISSION_TOOLS: Mapping[str, tuple[str, ...]] = {
    "edit": ("write", "edit"),
    "write": ("write",),
    "patch": ("edit",),
    "bash": ("bash",),
    "shell": ("bash",),
    "read": ("read",),
    "grep": ("grep",),
    "glob": ("find",),
    "list": ("ls",),
}
"""A permission's name -> the built-ins it governs (`edit` covers every file change)."""
NO_TOOL_HERE = frozenset(
    {"webfetch", "websearch", "codesearch", "task", "todowrite", "todoread", "skill"}
)
"""Permissions of opencode tools that do not exist here: a rule on them changes nothing.
Any other name (`external_directory`, `doom_loop`, a new one) refuses a deny or ask."""
_EFFECTS = ("allow", "ask", "deny")


def _tools(value: object, notes: list[str], path: Path) -> Mapping[str, object]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, bool) for k, v in value.items()
    ):
        raise ValueError("expected a map of tool name (or glob) to true or false")
    items = list(value.items())
    cut = max((i for i, (k, v) in enumerate(items) if k == "*" and v is False), default=-1)
    denied: list[str] = []
    for name, on in items[cut + 1 :]:
        # Before a `"*": false`, every entry is overridden by it: the allowlist rules.
        if not on:
            denied += _deny(name, notes)
    result: dict[str, object] = {"disallowed_tools": denied}
    if cut >= 0:
        # `"*": false`: only what a later entry turns back on (last rule wins in opencode).
        result |= _allowlist([name for name, on in items[cut + 1 :] if on], notes)
    return result


def _allowlist(names: list[str], notes: list[str]) -> dict[str, object]:
    """Entries allowed after a `"*"` that turns everything off, as our `tools`: each one
    we can name no wider than opencode does; one we cannot is left out (narrower)."""
    allowed: list[str] = []
    for name in names:
        if not is_glob(name) and name in PERMISSION_TOOLS:
            allowed += PERMISSION_TOOLS[name]
            continue
        if name in NO_TOOL_HERE:
            continue
        found = builtins_matching(name, TOOL_NAMES) if is_glob(name) else []
        selector = None
        if "_" in name:
            try:
                selector = allow_selector(name, "")
            except ValueError:
                selector = None
        allowed += [*found, selector] if selector else found
        if selector is None and is_glob(name):
            notes.append(f"'{excerpt(name)}': only the built-ins it names are allowed here")
        elif selector is None and not found:
            notes.append(f"'{excerpt(name)}' names no tool here: left out")
    result: dict[str, object] = {"tools": list(dict.fromkeys(allowed)) or ["none"]}
    if not any(item.startswith("ext:") or "__" in item for item in allowed):
        result["extensions"] = False
    return result


def _deny(name: str, notes: list[str]) -> list[str]:
    """A denied opencode tool name or glob: our built-ins it names, and server tools."""
    lowered = name.lower()  # denying more is safe: `Bash: false` denies bash
    if not is_glob(name) and lowered in TOOL_NAMES:
        return [TOOL_NAMES[lowered]]
    if not is_glob(name) and lowered in NO_TOOL_HERE:
        return []
    return builtins_matching(lowered, TOOL_NAMES) + deny_selectors(name)


def _permission(value: object, notes: list[str], path: Path) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise ValueError("expected a map of permission to allow, ask or deny")
    # No note for a tool that is not here anyway (`skill`, `task`): nothing is denied.
    items = [
        (str(key), _strictest(rule, str(key), [] if key in NO_TOOL_HERE else notes))
        for key, rule in value.items()
    ]
    cut = max((i for i, (key, effect) in enumerate(items) if key == "*"), default=-1)
    if cut >= 0 and items[cut][1] != "allow":
        # `"*": deny` (or ask: nobody to ask): only what a later rule allows (last wins).
        return _allowlist([key for key, effect in items[cut + 1 :] if effect == "allow"], notes)
    denied: list[str] = []
    for key, effect in items:
        if key != "*":
            denied += _denied_by(key, effect, notes)
    return {"disallowed_tools": denied}


def _permissions(value: object, notes: list[str], path: Path) -> Mapping[str, object]:
    if not isinstance(value, list):
        raise ValueError("expected a list of {action, resource, effect} rules")
    denied: list[str] = []
    for rule in value:
        if not isinstance(rule, dict) or not isinstance(rule.get("action"), str):
            raise ValueError("expected a list of {action, resource, effect} rules")
        effect = rule.get("effect")
        if effect not in _EFFECTS:
            raise ValueError(f"effect: expected allow, ask or deny, got '{excerpt(effect)}'")
        if effect == "allow":
            continue
        resource = rule.get("resource", "*")
        if resource != "*":
            notes.append(
                f"{excerpt(rule['action'])} on '{excerpt(resource)}' only: the whole tool is denied"
            )
        denied += _denied_by(rule["action"], "deny", notes)
    return {"disallowed_tools": denied}


def _strictest(rule: object, key: str, notes: list[str]) -> str:
    """A rule's strictest effect: `deny`/`ask` for any pattern denies the whole tool."""
    if isinstance(rule, str) and rule in _EFFECTS:
        return rule
    if isinstance(rule, dict) and rule and all(v in _EFFECTS for v in rule.values()):
        if all(v == "allow" for v in rule.values()):
            return "allow"
        notes.append(f"{excerpt(key)}: a rule for some uses only: the whole tool is denied")
        return "deny"
    raise ValueError(
        f"{excerpt(key)}: expected allow, ask, deny or a map of pattern to one of them"
    )


def _denied_by(action: str, effect: str, notes: list[str]) -> list[str]:
    if effect == "allow":
        return []
    if action in PERMISSION_TOOLS:
        return list(PERMISSION_TOOLS[action])
    if action in NO_TOOL_HERE:
        return []
    raise ValueError(
        f"'{excerpt(action)}: {effect}' narrows something this runner cannot tell apart; "
        "without it the agent would run wider"
    )


def _model(value: object, notes: list[str], path: Path) -> Mapping[str, object]:
    return {"model": provider_slash_model(value)}


def _disable(value: object, notes: list[str], path: Path) -> Mapping[str, object]:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got '{excerpt(value)}'")
    return {"enabled": not value}


_FIELDS: dict[str, FieldRule] = {
    "name": FieldRule(H, "name", "the agent's id (default: the file name)"),
    "description": FieldRule(H, "description", "one line for humans and hosts"),
    "mode": FieldRule(
        M,
        None,
        "who may start the agent; here the caller does",
        values={"subagent": IGN, "all": IGN, "primary": IGN},
        refusal="a mode unknown here",
    ),
    "model": FieldRule(
        M, "model", "PROVIDER/MODEL -> PROVIDER:MODEL (a #variant is dropped)", _model
    ),
    "tools": FieldRule(
        M,
        "tools",
        "false: denied (globs over read, write, edit, patch, bash, grep, glob, list, "
        "SERVER_TOOL); '*': false makes later true entries the allowlist (an entry that "
        "cannot be named exactly is left out)",
        _tools,
    ),
    "permission": FieldRule(
        M,
        "disallowed_tools",
        "edit, bash, read, grep, glob, list: deny or ask (nobody to ask) denies the tool; "
        "a per-command rule denies the whole tool; '*': deny makes later allows the "
        "allowlist; a deny or ask on an unknown permission refuses",
        _permission,
    ),
    "permissions": FieldRule(
        M,
        "disallowed_tools",
        "{action, resource, effect} rules: deny or ask denies the whole tool",
        _permissions,
    ),
    "maxSteps": FieldRule(M, "max_turns", "turn limit"),
    "steps": FieldRule(M, "max_turns", "turn limit"),
    "disable": FieldRule(M, "enabled", "true hides the agent", _disable),
    "prompt": FieldRule(REF, note="a prompt outside the file body cannot be read here"),
    "temperature": FieldRule(IGN, note="no sampling settings here"),
    "top_p": FieldRule(IGN, note="no sampling settings here"),
    "variant": FieldRule(IGN, note="no reasoning variants here"),
    "reasoningEffort": FieldRule(IGN, note="no reasoning variants here"),
    "options": FieldRule(IGN, note="provider options: none here"),
    "hidden": FieldRule(IGN, note="display only"),
    "color": FieldRule(IGN, note="display only"),
}

OPENCODE = Dialect("opencode", _FIELDS)
"""Files in `.opencode/agent/`, `.opencode/agents/` and `~/.config/opencode/agent/`."""
