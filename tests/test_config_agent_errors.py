"""Every bad agent-file value is a ConfigError naming file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.config.agents import parse_agent_file
from launcher.errors import ConfigError


def write(tmp_path: Path, frontmatter: str) -> Path:
    path = tmp_path / "bad.md"
    path.write_text(f"---\ndescription: fine\n{frontmatter}\n---\nprompt\n")
    return path


# Each bad line sits on file line 3 (after `---` and `description:`).
@pytest.mark.parametrize(
    ("line", "field", "expected"),
    [
        ("name: 'has space'", "name", "expected a name"),
        ("name: [a]", "name", "expected a name"),
        ("description2: x\ndescription: [1]", "description", "duplicate"),
        ("model: mistral-large", "model", "PROVIDER:MODEL"),
        ("model: ':x'", "model", "PROVIDER:MODEL"),
        ("model: 5", "model", "expected a string"),
        ("tools: read, websearch", "tools", "unknown built-in tool 'websearch'"),
        ("tools: 5", "tools", "expected a comma-separated string or a list"),
        ("tools: 'ext:'", "tools", "ext:SERVER"),
        ("tools: [{a: 1}]", "tools", "list of strings"),
        ("extensions: 3", "extensions", "true, false or a list"),
        ("extensions: [a, 1]", "extensions", "true, false or a list"),
        ("isolated: 'yes please'", "isolated", "true or false"),
        ("memory: global", "memory", "project, local, user"),
        ("max_turns: 0", "max_turns", "positive integer"),
        ("max_turns: -2", "max_turns", "positive integer"),
        ("max_turns: 2.5", "max_turns", "positive integer"),
        ("max_turns: true", "max_turns", "positive integer"),
    ],
)
def test_bad_value_names_file_line_and_field(
    tmp_path: Path, line: str, field: str, expected: str
) -> None:
    path = write(tmp_path, line)
    with pytest.raises(ConfigError) as info:
        parse_agent_file(path)
    error = info.value
    want_line = 3 + line.count("\n")
    assert (error.path, error.line, error.field) == (path, want_line, field)
    assert f"{path}:{want_line}: field '{field}'" in str(error)
    assert expected in str(error)


def test_yaml_syntax_error_reports_the_file_line(tmp_path: Path) -> None:
    path = write(tmp_path, "tools: [read\nmodel: x")
    with pytest.raises(ConfigError, match="invalid YAML") as info:
        parse_agent_file(path)
    assert info.value.path == path
    assert info.value.line in (3, 4, 5)


def test_bare_star_gets_a_quoting_hint(tmp_path: Path) -> None:
    path = write(tmp_path, "tools: *")
    with pytest.raises(ConfigError, match="quote a bare") as info:
        parse_agent_file(path)
    assert info.value.line == 3


def test_frontmatter_that_is_not_a_mapping_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "list.md"
    path.write_text("---\n- a\n- b\n---\nbody\n")
    with pytest.raises(ConfigError, match="mapping") as info:
        parse_agent_file(path)
    assert (info.value.path, info.value.line) == (path, 2)


def test_unclosed_frontmatter_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "open.md"
    path.write_text("---\nname: a\nbody without fence\n")
    with pytest.raises(ConfigError, match="never closed") as info:
        parse_agent_file(path)
    assert (info.value.path, info.value.line) == (path, 1)


def test_unreadable_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "missing.md"
    with pytest.raises(ConfigError, match="cannot read") as info:
        parse_agent_file(path)
    assert info.value.path == path
