"""Our own agent format, which is pi-subagents' frontmatter, as a dialect table.

Files in `.subagent/agents/` (dialect `subagent`) and pi's `.pi/agents/`,
`.agents/agents/`, `~/.pi/agent/agents/` (dialect `pi`) read the same table.
"""

from __future__ import annotations

from collections.abc import Mapping

from launcher.config.dialect import Action, Dialect, FieldRule

H, M, IGN = Action.HONOURED, Action.MAPPED, Action.IGNORED


def _honoured(note: str) -> FieldRule:
    return FieldRule(H, note=note)


_FIELDS: dict[str, FieldRule] = {
    "name": _honoured("the agent's id (default: the file name)"),
    "description": _honoured("one line for humans and hosts"),
    "display_name": _honoured("shown by `subagent agents` next to the id"),
    "model": _honoured("PROVIDER:MODEL or scripted:PATH (relative to the agent file)"),
    "thinking": FieldRule(IGN, note="no model provider here takes a thinking level yet"),
    "tools": _honoured(
        "built-ins, *, none, ext:SERVER[/TOOL]; [], empty or none with no extensions list = nothing"
    ),
    "extensions": _honoured("true, false, or the servers that may start"),
    "inherit_extensions": FieldRule(M, target="extensions", note="pi's older name of `extensions`"),
    "exclude_extensions": _honoured(
        "servers removed even when an ext: selector names them (a disallowed ext:SERVER)"
    ),
    "disallowed_tools": _honoured(
        "always wins; any case; ext:S/T, S__T, mcp__S__T (S raw or as exposed); a bare name, "
        "a built-in's too, denies that tool on every server"
    ),
    "isolated": _honoured("built-ins only; no server ever starts"),
    "isolation": _honoured("`worktree`: the run works in a fresh git worktree"),
    "sandbox": _honoured(
        "on (default), off, required, or {mode, network, deny_read, write_config}: "
        "the shell's confinement"
    ),
    "tool_search": _honoured(
        "auto (default), on, off or bytes: past that size of tool schemas, tools on demand"
    ),
    "memory": _honoured("project, local or user: memory tools"),
    "max_turns": _honoured("turn limit"),
    "max_tokens": _honoured("tokens billed over the run, nested sub-agents included"),
    "max_cost_usd": _honoured("USD over the run, nested sub-agents included"),
    "timeout": _honoured("wall-clock seconds from the session's start"),
    "idle_timeout": _honoured("seconds with no progress (default 600)"),
    "run_in_background": FieldRule(
        M, target="background", note="serve's default `background` for this agent"
    ),
    "allowed_subagents": _honoured("agents the `subagent` tool may run"),
    "max_depth": _honoured("how deep sub-agents may nest"),
    "enabled": _honoured("false hides the agent (and any agent of that name found later)"),
    "expect": _honoured("expectations for `subagent check`"),
    "prompt_mode": FieldRule(IGN, note="there is no parent prompt here: the body is the prompt"),
    "inherit_context": FieldRule(IGN, note="a sub-agent here starts from its prompt alone"),
    "skills": FieldRule(IGN, note="no skills here"),
    "inherit_skills": FieldRule(IGN, note="no skills here"),
    "color": FieldRule(IGN, note="display only"),
    "output_transcript": FieldRule(IGN, note="every run is recorded in `subagent log`"),
    "persist_session": FieldRule(IGN, note="every run is recorded in `subagent log`"),
    "session_dir": FieldRule(IGN, note="sessions live in SUBAGENT_HOME"),
}
for _key, _rule in list(_FIELDS.items()):
    if _rule.action is H:
        _FIELDS[_key] = FieldRule(H, target=_key, note=_rule.note)

PI_FIELDS: Mapping[str, FieldRule] = _FIELDS

SUBAGENT = Dialect("subagent", PI_FIELDS)
"""Files in `.subagent/agents/`, `~/.config/subagent/agents/` and `--config-dir`."""
PI = Dialect("pi", PI_FIELDS)
"""pi-subagents' files in `.pi/agents/`, `.agents/agents/`, `~/.pi/agent/agents/`."""
