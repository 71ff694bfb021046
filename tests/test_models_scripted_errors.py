"""A bad scripted-model file is a ConfigError naming the file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.errors import ConfigError
from launcher.models.scripted import load_script, parse_script


def error_for(tmp_path: Path, text: str) -> ConfigError:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_script(path)
    assert caught.value.path == path
    return caught.value


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    error = error_for(tmp_path, "steps:\n  - say: ok\n  - call: [unclosed\n")
    assert error.line is not None and error.line >= 3
    assert "invalid YAML" in str(error)


def test_unknown_step_field_names_field_and_line(tmp_path: Path) -> None:
    error = error_for(tmp_path, "steps:\n  - say: ok\n  - cal: []\n")
    assert (error.line, error.field) == (3, "cal")
    assert "call" in str(error)


def test_call_needs_exactly_one_of_tool_and_tool_from(tmp_path: Path) -> None:
    error = error_for(tmp_path, "steps:\n  - call:\n      - {tool: a, tool_from: s/t}\n")
    assert (error.line, error.field) == (3, "call")


def test_call_must_be_a_list(tmp_path: Path) -> None:
    error = error_for(tmp_path, "steps:\n  - call: {tool: a}\n")
    assert (error.line, error.field) == (2, "call")


def test_tool_from_needs_server_and_tool(tmp_path: Path) -> None:
    error = error_for(tmp_path, "steps:\n  - say: x\n  - call: [{tool_from: justserver}]\n")
    assert (error.line, error.field) == (3, "tool_from")


def test_negative_sleep_is_rejected(tmp_path: Path) -> None:
    error = error_for(tmp_path, "steps:\n  - sleep: -1\n")
    assert (error.line, error.field) == (2, "sleep")


def test_args_must_be_a_mapping(tmp_path: Path) -> None:
    error = error_for(tmp_path, "steps:\n  - call:\n      - tool: a\n        args: [1, 2]\n")
    assert (error.line, error.field) == (4, "args")


def test_missing_steps_is_rejected(tmp_path: Path) -> None:
    error = error_for(tmp_path, "stpes: []\n")
    assert error.field == "stpes"


def test_empty_file_is_rejected(tmp_path: Path) -> None:
    error = error_for(tmp_path, "")
    assert "steps" in str(error)


def test_missing_file_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_script(tmp_path / "nope.yaml")
    assert "nope.yaml" in str(caught.value)


ALIAS_BOMB = (
    "steps:\n"
    "  - call:\n"
    "      - tool: read\n"
    "        args:\n"
    "          a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n"
    + "".join(f"          a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 10))
    + "          path: x\n"
)


def test_an_alias_bomb_script_is_refused_naming_the_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_script(ALIAS_BOMB, tmp_path / "bomb.yaml")
    assert refused.value.line == 5
    assert "anchors (&a0) are not allowed" in str(refused.value)


def test_an_alias_to_a_plain_anchor_is_refused_at_the_alias(tmp_path: Path) -> None:
    text = "steps:\n  - say: hi\n  - say: *nowhere\n"
    with pytest.raises(ConfigError) as refused:
        parse_script(text, tmp_path / "s.yaml")
    assert refused.value.line == 3
    assert "aliases (*nowhere) are not allowed" in str(refused.value)


def test_a_script_over_a_mib_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    """A 300 MB scalar took 2.4 GB and minutes to parse; the bound a host's script has
    holds for the CLI's too."""
    path = tmp_path / "huge.yaml"
    with path.open("w") as out:
        out.write("steps:\n  - say: '")
        out.write("x" * (1024 * 1024))
        out.write("'\n")
    with pytest.raises(ConfigError, match="larger than 1024 KiB") as refused:
        load_script(path)
    assert refused.value.path == path
