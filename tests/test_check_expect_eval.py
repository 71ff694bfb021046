"""Each expectation kind passes on a matching surface or run and fails naming itself."""

from __future__ import annotations

from pathlib import Path

from launcher.check.expect import RunRecord, Surface, evaluate_run, evaluate_surface
from launcher.config.expect import Expectations, RunExpect
from launcher.toolset.types import ToolEntry, ToolResult


async def _never(arguments: dict) -> ToolResult:
    raise AssertionError("not called")


def entry(name: str, source: str = "builtin", tool: str | None = None) -> ToolEntry:
    return ToolEntry(name, source, tool or name, "", {"type": "object"}, _never)


SURFACE = Surface(
    active=[entry("read"), entry("gh__list_issues", "gh", "list_issues")],
    servers={"gh": "connected", "lazy": "not_started", "bad": "failed"},
    prompt="You triage.\nTools available this turn:\n- read: Read a file",
)

CASES = [
    # kind, passing value, failing value, text the failure must contain
    ("tools_present", ("read", "ext:gh/list_*"), ("ext:gh/create_*",), "'ext:gh/create_*'"),
    ("tools_absent", ("bash", "ext:lazy"), ("gh__*",), "gh__list_issues"),
    ("servers_connected", ("gh",), ("bad",), "'bad' is failed"),
    ("servers_not_started", ("lazy",), ("gh",), "'gh' was started"),
    ("prompt_contains", ("You triage",), ("bash",), "'bash'"),
    ("prompt_absent", ("create_issue",), ("- read",), "'- read'"),
]


def test_each_surface_kind_passes_and_fails_naming_itself() -> None:
    for kind, good, bad, detail in CASES:
        assert evaluate_surface(Expectations(**{kind: good}), SURFACE) == [], kind
        failures = evaluate_surface(Expectations(**{kind: bad}), SURFACE)
        assert len(failures) == 1, kind
        assert failures[0].startswith(f"{kind}: ") and detail in failures[0], failures


def test_failures_follow_the_written_order() -> None:
    expect = Expectations(tools_present=("nope",), prompt_absent=("triage",))
    failures = evaluate_surface(expect, SURFACE)
    assert [f.split(":")[0] for f in failures] == ["tools_present", "prompt_absent"]


RECORD = RunRecord(
    status="completed",
    result="acme/widgets#1 first",
    calls=["gh__list_issues", "gh__get_issue", "lazy__early"],
    errors=["lazy__early"],
)


def run(**fields: object) -> RunExpect:
    return RunExpect(script=Path("s.yaml"), prompt="go", **fields)  # type: ignore[arg-type]


def test_each_run_kind_passes_and_fails_naming_itself() -> None:
    cases = [
        ({"result_contains": ("widgets#1",)}, {"result_contains": ("gadgets",)}, "'gadgets'"),
        ({"tool_errors": 1}, {"tool_errors": 0}, "expected 0, got 1 (lazy__early)"),
        ({"tool_errors": ("lazy__*",)}, {"tool_errors": ("gh__get_issue",)}, "gh__get_issue"),
        ({"calls": ("gh__get_*",)}, {"calls": ("gh__create_issue",)}, "'gh__create_issue'"),
        ({"status": "completed"}, {"status": "max_turns"}, "expected max_turns, got completed"),
    ]
    for good, bad, detail in cases:
        kind = next(iter(good))
        assert evaluate_run(run(**good), RECORD) == [], kind
        failures = evaluate_run(run(**bad), RECORD)
        assert failures and failures[0].startswith(f"run.{kind}: "), failures
        assert detail in failures[0], failures


def test_tool_errors_list_also_fails_on_an_unexpected_error() -> None:
    failures = evaluate_run(run(tool_errors=()), RECORD)
    assert failures == ["run.tool_errors: unexpected error from lazy__early"]


def test_tool_patterns_match_as_the_scope_selectors_do() -> None:
    # `x[1]` as a bare fnmatch glob means only `x1`; an agent's selectors also match the
    # name spelled exactly, and `check` now uses that one matcher (issue 22.1).
    odd = entry("s__x_1_", "s", "x[1]")
    surface = Surface(active=[odd], servers={"s": "connected"}, prompt="")
    for pattern in ("ext:s/x[1]", "s__x[1]", "ext:s", "s__*", "*__*"):
        expect = Expectations(tools_present=(pattern,))
        assert evaluate_surface(expect, surface) == [], pattern
    # The scope's rule for `SERVER__TOOL`: split at a `__`, never one glob over the
    # joined name, so `s__*` is not the tool `x` of a server named `s_` (exposed `s___x`).
    other = Surface(active=[entry("s___x", "s_", "x")], servers={}, prompt="")
    assert evaluate_surface(Expectations(tools_absent=("s__*",)), other) == []
