"""The budget's config: agent fields `max_tokens`, `max_cost_usd`, `timeout`, `idle_timeout`,
and `"prices"` in mcp.json; a bad value names the file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.config.agents import parse_agent_text
from launcher.config.discovery import load_config
from launcher.config.types import ModelPrice
from launcher.errors import ConfigError

AGENT = """---
name: a
max_tokens: 20000
max_cost_usd: 0.5
timeout: 90
idle_timeout: 12.5
---
body
"""


def test_the_four_limit_fields_are_read() -> None:
    spec = parse_agent_text(AGENT, "a.md")
    assert (spec.max_tokens, spec.max_cost_usd, spec.timeout, spec.idle_timeout) == (
        20000,
        0.5,
        90.0,
        12.5,
    )


@pytest.mark.parametrize(
    ("field", "value"), [("max_tokens", "1.5"), ("max_cost_usd", "-1"), ("timeout", "soon")]
)
def test_a_bad_limit_names_its_field_and_line(field: str, value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_agent_text(f"---\nname: a\n{field}: {value}\n---\nbody\n", "a.md")
    assert caught.value.field == field and caught.value.line == 3


def test_prices_are_read_from_mcp_json(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text(
        '{"mcpServers": {}, "prices": {"openai:mine": {"input": 1, "output": 2.5}}}'
    )
    config = load_config(tmp_path)
    assert config.prices == {"openai:mine": ModelPrice(input=1.0, output=2.5)}
    assert not any("prices" in w for w in config.warnings)


def test_a_bad_price_names_the_model_and_key(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text(
        '{"mcpServers": {},\n "prices": {"mine": {"input": "cheap"}}}'
    )
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert caught.value.field == "prices.mine.input" and caught.value.line == 2


def test_agents_json_rows_carry_the_limits(tmp_path: Path) -> None:
    from launcher.cli.views import agent_rows

    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "a.md").write_text(AGENT)
    rows = {row["name"]: row for row in agent_rows(load_config(tmp_path))}
    assert rows["a"]["limits"] == {
        "max_turns": None,
        "max_tokens": 20000,
        "max_cost_usd": 0.5,
        "timeout": 90.0,
        "idle_timeout": 12.5,
    }
    assert rows["general-purpose"]["limits"]["idle_timeout"] == 600.0
