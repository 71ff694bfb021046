"""`expect:` blocks and check files parse into Expectations; mistakes name file, line, field."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.check.cases import load_check_file
from launcher.config.agents import parse_agent_text
from launcher.config.expect import DEFAULT_SETTLE_S
from launcher.errors import ConfigError


def agent_text(expect: str) -> str:
    return f"---\nname: a\ntools: read\nexpect:\n{expect}---\nBody.\n"


def test_every_kind_parses_from_frontmatter(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("steps: [{say: hi}]\n")
    spec = parse_agent_text(
        agent_text(
            "  settle: 2.5\n"
            "  tools_present: [read, 'ext:gh/list_*']\n"
            "  tools_absent: bash\n"
            "  servers_connected: [gh]\n"
            "  servers_not_started: [lazy]\n"
            "  prompt_contains: Body\n"
            "  prompt_absent: [secret]\n"
            "  run:\n"
            "    scripted: s.yaml\n"
            "    prompt: go\n"
            "    result_contains: hi\n"
            "    tool_errors: 2\n"
            "    calls: [read]\n"
            "    max_turns: 3\n"
        ),
        tmp_path / "a.md",
    )
    e = spec.expect
    assert e is not None
    assert e.settle == 2.5
    assert e.tools_present == ("read", "ext:gh/list_*")
    assert e.tools_absent == ("bash",)
    assert (e.servers_connected, e.servers_not_started) == (("gh",), ("lazy",))
    assert (e.prompt_contains, e.prompt_absent) == (("Body",), ("secret",))
    assert e.run is not None
    assert e.run.script == (tmp_path / "s.yaml").resolve()
    assert (e.run.prompt, e.run.result_contains, e.run.tool_errors) == ("go", ("hi",), 2)
    assert (e.run.calls, e.run.status, e.run.max_turns) == (("read",), "completed", 3)


def test_no_expect_block_is_none_and_settle_defaults(tmp_path: Path) -> None:
    assert parse_agent_text("---\nname: a\n---\nx\n", tmp_path / "a.md").expect is None
    spec = parse_agent_text(agent_text("  tools_present: read\n"), tmp_path / "a.md")
    assert spec.expect is not None and spec.expect.settle == DEFAULT_SETTLE_S


def test_unknown_expect_key_names_file_line_and_field(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        parse_agent_text(
            agent_text("  tools_present: read\n  tool_present: x\n"), tmp_path / "a.md"
        )
    assert (info.value.line, info.value.field) == (6, "expect.tool_present")
    assert "a.md" in str(info.value) and "unknown key 'tool_present'" in str(info.value)


def test_unknown_run_key_and_missing_script_are_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        parse_agent_text(
            agent_text("  run:\n    scripted: nope.yaml\n    prompt: go\n"), tmp_path / "a.md"
        )
    assert info.value.field == "expect.run.scripted" and "no such script" in str(info.value)
    (tmp_path / "s.yaml").write_text("steps: [{say: hi}]\n")
    with pytest.raises(ConfigError) as info:
        parse_agent_text(
            agent_text("  run:\n    scripted: s.yaml\n    prompt: go\n    call: [x]\n"),
            tmp_path / "a.md",
        )
    assert (info.value.line, info.value.field) == (8, "expect.run.call")


def test_wrong_types_are_errors(tmp_path: Path) -> None:
    for bad, where in (
        ("  tools_present: {a: 1}\n", "expect.tools_present"),
        ("  settle: soon\n", "expect.settle"),
        ("  - read\n", "expect"),
    ):
        with pytest.raises(ConfigError) as info:
            parse_agent_text(agent_text(bad), tmp_path / "a.md")
        assert info.value.field == where


def test_check_file_names_agent_ext_and_expectations(tmp_path: Path) -> None:
    path = tmp_path / "late.yaml"
    path.write_text("agent: gp\next: lazy\nsettle: 3\ntools_present: [lazy__late]\n")
    case = load_check_file(path)
    assert (case.name, case.agent, case.ext, case.source) == ("late", "gp", ("lazy",), path)
    assert case.expect.settle == 3 and case.expect.tools_present == ("lazy__late",)


def test_check_file_mistakes_name_the_key(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("agent: gp\ntools_presnt: [x]\n")
    with pytest.raises(ConfigError) as info:
        load_check_file(path)
    assert (info.value.line, info.value.field) == (2, "tools_presnt")
    path.write_text("ext: [lazy]\n")
    with pytest.raises(ConfigError) as info:
        load_check_file(path)
    assert info.value.field == "agent"


def test_a_check_file_naming_an_unknown_agent_or_server_is_a_config_error(tmp_path: Path) -> None:
    from launcher.check.cases import select_cases
    from launcher.config.discovery import load_config

    (tmp_path / "agents").mkdir()
    (tmp_path / "mcp.json").write_text('{"mcpServers": {}}')
    check = tmp_path / "c.yaml"
    check.write_text("agent: nobody\n")
    config = load_config(tmp_path, cwd=tmp_path, env={})
    with pytest.raises(ConfigError) as info:
        select_cases(config, [str(check)])
    assert info.value.field == "agent" and "c.yaml" in str(info.value)
    check.write_text("agent: general-purpose\next: [nowhere]\n")
    with pytest.raises(ConfigError) as info:
        select_cases(config, [str(check)])
    assert info.value.field == "ext" and "'nowhere'" in str(info.value)
