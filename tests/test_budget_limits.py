"""A run's limits: the most specific wins, never above the agent file's; children are clamped
to what their parent has left; the next reply is judged from the last one."""

from __future__ import annotations

import math

from launcher.budget import (
    DEFAULT_IDLE_TIMEOUT_S,
    Budget,
    Limits,
    Spend,
    resolve_limits,
)
from launcher.events import RunStatus


def test_a_request_wins_below_the_agents_value_and_is_lowered_above_it_with_a_warning() -> None:
    agent = Limits(max_tokens=1000, timeout=60.0)
    lower, quiet = resolve_limits(agent, Limits(max_tokens=500))
    assert (lower.max_tokens, lower.timeout) == (500, 60.0)
    assert quiet == []

    higher, warnings = resolve_limits(agent, Limits(max_tokens=5000), who="agent 'a'")
    assert higher.max_tokens == 1000
    assert warnings == ["--max-tokens 5000 is above agent 'a''s max_tokens 1000: lowered to 1000"]


def test_a_request_sets_what_the_agent_leaves_open_and_idle_has_a_default() -> None:
    limits, warnings = resolve_limits(Limits(), Limits(max_cost_usd=0.5))
    assert limits.max_cost_usd == 0.5 and warnings == []
    assert limits.idle_timeout == DEFAULT_IDLE_TIMEOUT_S
    assert limits.timeout is None and limits.max_tokens is None


def test_a_non_finite_request_never_lifts_the_agents_ceiling() -> None:
    agent = Limits(max_cost_usd=0.5, timeout=2.0, idle_timeout=30.0)
    for odd in (math.nan, math.inf, -math.inf):
        asked = Limits(max_cost_usd=odd, timeout=odd, idle_timeout=odd)
        limits, _ = resolve_limits(agent, asked)
        assert (limits.max_cost_usd, limits.timeout, limits.idle_timeout) == (0.5, 2.0, 30.0)
    open_ended, _ = resolve_limits(Limits(), Limits(max_cost_usd=math.nan, timeout=math.nan))
    assert open_ended.max_cost_usd is None and open_ended.timeout is None


def test_a_child_is_clamped_to_its_parents_remainder() -> None:
    parent = Budget(Limits(max_tokens=1000, max_cost_usd=1.0))
    parent.charge(Spend(input_tokens=600, output_tokens=100, cost_usd=0.25))
    ceiling = parent.remainder()
    assert (ceiling.max_tokens, ceiling.max_cost_usd) == (300, 0.75)
    own = Limits(max_tokens=5000, max_cost_usd=0.1, idle_timeout=30.0)
    clamped = own.clamped(ceiling)
    assert (clamped.max_tokens, clamped.max_cost_usd, clamped.idle_timeout) == (300, 0.1, 30.0)


def test_the_next_reply_is_judged_from_the_last_and_children_count() -> None:
    budget = Budget(Limits(max_tokens=100))
    budget.charge(Spend(input_tokens=30, output_tokens=10))
    assert budget.crossing() is None  # 40 used, the next ~40: 80 <= 100
    budget.charge(Spend(input_tokens=30, output_tokens=10))
    assert budget.crossing() is RunStatus.MAX_TOKENS  # 80 used, the next ~40 crosses
    money = Budget(Limits(max_cost_usd=0.01))
    money.charge_child({"input_tokens": 1, "total": {"input_tokens": 9, "cost_usd": 0.011}})
    assert money.tokens == 9
    assert money.crossing() is RunStatus.MAX_COST


def test_an_unpriced_part_makes_the_sum_unpriced() -> None:
    total = Spend(input_tokens=1, cost_usd=0.5)
    total.add(Spend(output_tokens=2, cost_usd=None))
    assert total.as_dict()["cost_usd"] is None and total.tokens == 3
