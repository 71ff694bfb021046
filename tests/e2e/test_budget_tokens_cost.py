"""`max_tokens` and `max_cost_usd` stop a run at the right turn: one tool-free wrap-up turn,
then the limit's status, exit 1, and the text so far; usage counts cache tokens and cost,
and `log` shows the cost per session, `log --usage` per agent."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.budget_support import spawn_json, stub_env, with_prices
from tests.e2e.model_stub import ModelStub, anthropic_stream, openai_stream
from tests.e2e.spawn_support import stub, write_config
from tests.e2e.store_support import log_json

pytestmark = pytest.mark.e2e

AGENT = """---
name: frugal
model: openai:stub-model
max_tokens: 100
---
Be brief.
"""


def test_max_tokens_wraps_up_then_ends_with_max_tokens(tmp_path: Path, model: ModelStub) -> None:
    config = write_config(tmp_path / "cfg", {"lazy": stub("lazy")}, {"frugal": AGENT})
    echo = [("c1", "lazy__echo", {"text": "x"})]
    # Each reply bills 40 tokens (30 in, of them 20 cached, 10 out): after two, the third
    # would bring 120 > 100, so the third turn is the wrap-up.
    model.enqueue(
        openai_stream(text="step one", tool_calls=echo, usage=(30, 10), cached=20),
        openai_stream(text="step two", tool_calls=echo, usage=(30, 10), cached=20),
        openai_stream(text="partial answer", usage=(30, 10), cached=20),
    )
    run = spawn_json(
        config,
        "--max-tokens",
        "5000",  # above the agent's 100: lowered, with a warning
        "frugal",
        "go",
        state=tmp_path / "state",
        env=stub_env(model.openai_base),
        cwd=tmp_path,
    )

    assert run.code == 1, run.stderr
    assert "--max-tokens 5000 is above agent 'frugal''s max_tokens 100" in run.stderr
    end = run.end()
    assert end["status"] == "max_tokens"
    assert end["result"] == "partial answer"
    usage = end["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (90, 30)
    assert usage["cache_read_tokens"] == 60 and usage["cache_write_tokens"] == 0
    assert usage["total"]["input_tokens"] == 90
    assert len(model.requests) == 3
    assert "tools" not in model.requests[2].body  # the wrap-up turn offers no tool
    wrap = [e for e in run.of_type("user_message") if e["kind"] == "wrap_up"]
    assert len(wrap) == 1 and "token budget" in wrap[0]["content"]
    budgets = run.of_type("budget")
    assert len(budgets) == 4  # the start, and each of three turns' end
    assert budgets[0]["limits"]["max_tokens"] == 100
    assert budgets[0]["limits"]["idle_timeout"] == 600
    assert budgets[2]["used"]["tokens"] == 80 and budgets[2]["left"]["tokens"] == 20
    assert run.events[-1]["type"] == "session_end"


def test_max_cost_prices_anthropic_cache_tokens_and_ends_with_max_cost(
    tmp_path: Path, model: ModelStub
) -> None:
    config = write_config(tmp_path / "cfg", {"lazy": stub("lazy")})
    with_prices(
        config,
        {
            "anthropic:stub-model": {
                "input": 1000,
                "output": 1000,
                "cache_read": 100,
                "cache_write": 1250,
            }
        },
    )
    echo = [("c1", "lazy__echo", {"text": "x"})]
    # One reply: 100 fresh in, 50 written to the cache, 200 read from it, 20 out =
    # (100*1000 + 50*1250 + 200*100 + 20*1000) / 1e6 = $0.2025. Two fit $0.5; a third
    # would not, so it is the wrap-up.
    reply = {"usage": (100, 20), "cache": (50, 200)}
    model.enqueue(
        anthropic_stream(text="one", tool_calls=echo, **reply),  # type: ignore[arg-type]
        anthropic_stream(text="two", tool_calls=echo, **reply),  # type: ignore[arg-type]
        anthropic_stream(text="what I have", **reply),  # type: ignore[arg-type]
    )
    run = spawn_json(
        config,
        "--model",
        "anthropic:stub-model",
        "--max-cost",
        "0.5",
        "go",
        state=tmp_path / "state",
        env=stub_env(model.openai_base, anthropic=model.anthropic_base),
        cwd=tmp_path,
    )

    assert run.code == 1, run.stderr
    end = run.end()
    assert end["status"] == "max_cost"
    assert end["result"] == "what I have"
    usage = end["usage"]
    assert usage["cost_usd"] == pytest.approx(3 * 0.2025)
    assert usage["input_tokens"] == 3 * 350
    assert (usage["cache_write_tokens"], usage["cache_read_tokens"]) == (150, 600)
    replies = run.of_type("assistant_message")
    assert replies[0]["usage"]["cost_usd"] == pytest.approx(0.2025)
    assert run.of_type("budget")[-1]["left"]["cost_usd"] == 0
    # `log` shows the cost per session, `log --usage` per agent and model.
    (session,) = log_json(tmp_path / "state")
    assert session["status"] == "max_cost"
    assert session["cost_usd"] == pytest.approx(3 * 0.2025)
    (row,) = log_json(tmp_path / "state", "--usage")
    assert (row["agent"], row["model"]) == ("general-purpose", "anthropic:stub-model")
    assert row["cost_usd"] == pytest.approx(3 * 0.2025)


def test_max_cost_on_a_model_with_no_known_price_refuses_to_start(
    tmp_path: Path, model: ModelStub
) -> None:
    marker = tmp_path / "lazy.started"
    config = write_config(tmp_path / "cfg", {"lazy": stub("lazy", "--marker", str(marker))})
    run = spawn_json(
        config,
        "--model",
        "openai:stub-unpriced",
        "--max-cost",
        "1",
        "go",
        state=tmp_path / "state",
        env=stub_env(model.openai_base),
        cwd=tmp_path,
    )

    assert run.code == 2
    assert "openai:stub-unpriced" in run.stderr and "Traceback" not in run.stderr
    assert model.requests == []
    assert not marker.exists()  # fail closed before any server starts
