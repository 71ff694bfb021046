"""`${VAR}` / `${VAR:-default}` expansion and secret tracking."""

from __future__ import annotations

import pytest

from launcher.config.expand import ExpansionError, expand, mask_secrets


def test_set_variable_expands_and_is_a_secret() -> None:
    result = expand("Bearer ${TOKEN}", {"TOKEN": "s3cret"})
    assert result.value == "Bearer s3cret"
    assert result.secrets == frozenset({"s3cret"})


def test_default_applies_when_unset_or_empty_and_is_not_a_secret() -> None:
    assert expand("${LEVEL:-info}", {}).value == "info"
    assert expand("${LEVEL:-info}", {"LEVEL": ""}).value == "info"
    assert expand("${LEVEL:-info}", {}).secrets == frozenset()


def test_empty_default_allows_an_unset_variable() -> None:
    assert expand("${GITHUB_TOKEN:-}", {}).value == ""


def test_set_variable_beats_its_default() -> None:
    assert expand("${LEVEL:-info}", {"LEVEL": "debug"}).value == "debug"


def test_bare_dollar_is_literal() -> None:
    assert expand("cost $5 and $HOME", {"HOME": "/h"}).value == "cost $5 and $HOME"


def test_unset_variable_without_default_names_the_variable() -> None:
    with pytest.raises(ExpansionError, match="MISSING_VAR"):
        expand("x${MISSING_VAR}", {"OTHER": "v"})


@pytest.mark.parametrize("bad", ["${", "${1ABC}", "${A-b}", "pre ${UNCLOSED"])
def test_malformed_reference_is_an_error(bad: str) -> None:
    with pytest.raises(ExpansionError, match="malformed"):
        expand(bad, {"A": "x"})


def test_mask_replaces_longest_secret_first() -> None:
    assert mask_secrets("abc-ab", frozenset({"ab", "abc"})) == "****-****"
