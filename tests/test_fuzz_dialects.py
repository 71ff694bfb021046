"""Claude Code agent files with any shape of value: an AgentSpec or a ConfigError naming
the file, never another exception (the property of test_fuzz_config.py, per dialect)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from launcher.config.agents import parse_agent_text
from launcher.config.dialect_claude import CLAUDE
from launcher.errors import ConfigError
from tests.test_fuzz_config import _finite, json_values

AGENT = Path(".claude/agents/fuzz.md")


@given(
    fields=st.dictionaries(
        st.sampled_from(list(CLAUDE.fields)) | st.text(max_size=10), json_values, max_size=6
    )
)
@example(fields={"mcpServers": [{"": {}}], "tools": "mcp__"})
@example(fields={"mcpServers": {"s": {"command": "x", "env": {"A": "${NOPE}"}}}})
@example(fields={"permissionMode": ["plan"], "tools": ["Bash(x)", 1]})
def test_claude_fields_are_accepted_or_a_config_error(fields: dict) -> None:
    body = "".join(f"{json.dumps(k)}: {json.dumps(v)}\n" for k, v in fields.items() if _finite(v))
    try:
        spec = parse_agent_text("---\n" + body + "---\nbody\n", AGENT, [], CLAUDE)
    except ConfigError as exc:
        assert exc.path == AGENT and str(exc).startswith(str(AGENT))
        return
    assert spec.dialect == "claude"
