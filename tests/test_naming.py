"""Exposed tool names: SERVER__TOOL, safe characters, 64 chars, stable hash suffix."""

from __future__ import annotations

import re

from launcher.toolset.naming import MAX_NAME_LEN, could_spell, exposed_name, name_hash

SAFE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def test_plain_name_is_server_double_underscore_tool() -> None:
    assert exposed_name("mcp-github", "list_issues", set()) == "mcp-github__list_issues"


def test_unsafe_characters_become_underscores() -> None:
    assert exposed_name("my.server", "get issue/v2", set()) == "my_server__get_issue_v2"


def test_colliding_name_gets_stable_hash_suffix() -> None:
    first = exposed_name("s", "a.b", set())
    second = exposed_name("s", "a_b", {first})
    assert first == "s__a_b"
    assert second == f"s__a_b_{name_hash('s', 'a_b')}"
    assert second == exposed_name("s", "a_b", {first})


def test_hash_differs_between_tools_that_reduce_to_the_same_name() -> None:
    assert name_hash("s", "a.b") != name_hash("s", "a_b")
    assert len(name_hash("s", "a.b")) == 8


def test_over_long_name_is_cut_to_64_chars_with_hash() -> None:
    name = exposed_name("server", "t" * 100, set())
    assert len(name) == MAX_NAME_LEN
    assert SAFE.match(name)
    assert name.endswith("_" + name_hash("server", "t" * 100))
    assert name.startswith("server__ttt")


def test_over_long_names_sharing_a_prefix_stay_distinct() -> None:
    a = exposed_name("server", "t" * 100 + "a", set())
    b = exposed_name("server", "t" * 100 + "b", {a})
    assert a != b
    assert len(a) == len(b) == MAX_NAME_LEN


def test_name_of_exactly_64_chars_is_kept() -> None:
    tool = "x" * (MAX_NAME_LEN - len("s__"))
    assert exposed_name("s", tool, set()) == f"s__{tool}"


def test_taken_hashed_name_falls_back_to_a_longer_unique_name() -> None:
    plain = "s__t"
    hashed = exposed_name("s", "t", {plain})
    third = exposed_name("s", "t", {plain, hashed})
    assert third not in {plain, hashed}
    assert SAFE.match(third)


def test_hash_is_fixed_across_runs() -> None:
    # sha256, not Python's per-process salted hash(): the same name in every run.
    assert name_hash("s", "a_b") == "8d47d403"


def test_plain_name_an_earlier_server_could_spell_is_hashed() -> None:
    # Issue 15.2: `a.b` comes before `a_b` in the config, so a_b__t is a.b's name.
    assert exposed_name("a_b", "t", set(), earlier=["a.b"]) == f"a_b__t_{name_hash('a_b', 't')}"
    assert exposed_name("a.b", "t", set(), earlier=[]) == "a_b__t"
    # `s` could spell s___x (its tool `_x`); `s` itself and unrelated servers do not count.
    assert exposed_name("s_", "x", set(), earlier=["s"]) != "s___x"
    assert exposed_name("s", "_x", set(), earlier=["s", "gh"]) == "s___x"


def test_could_spell_is_a_sanitized_prefix_match() -> None:
    assert could_spell("a.b", "a_b__t")
    assert could_spell("s", "s___x")
    assert not could_spell("s_", "s__x")
    assert not could_spell("github", "github_enterprise__t")
