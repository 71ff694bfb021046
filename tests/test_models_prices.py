"""Pricing a reply: overrides first (PROVIDER:MODEL, then a bare id), the genai-prices table,
scripted free, and an unknown model unpriced."""

from __future__ import annotations

import pytest

from launcher.config.types import ModelPrice
from launcher.models.base import Usage
from launcher.models.prices import pricer_for, spend_of

USAGE = Usage(input_tokens=1_000_000, output_tokens=500_000, cache_read_tokens=200_000)


def test_an_override_prices_fresh_cached_and_output_tokens() -> None:
    price = ModelPrice(input=1.0, output=4.0, cache_read=0.1, cache_write=2.0)
    pricer = pricer_for("openai:mine", {"openai:mine": price})
    assert pricer is not None
    # 800k fresh at $1, 200k cached at $0.10, 500k out at $4
    assert pricer(USAGE) == pytest.approx(0.8 + 0.02 + 2.0)
    written = Usage(input_tokens=1000, cache_write_tokens=1000)
    assert pricer(written) == pytest.approx(1000 * 2.0 / 1e6)


def test_a_bare_model_id_matches_any_provider_and_the_full_spec_wins() -> None:
    overrides = {"mine": ModelPrice(input=1.0), "anthropic:mine": ModelPrice(input=3.0)}
    openai, anthropic = (
        pricer_for("openai:mine", overrides),
        pricer_for("anthropic:mine", overrides),
    )
    assert openai is not None and anthropic is not None
    one = Usage(input_tokens=1_000_000)
    assert (openai(one), anthropic(one)) == (1.0, 3.0)


def test_the_table_knows_a_public_model_and_not_an_invented_one() -> None:
    known = pricer_for("openai:gpt-4.1-mini", {})
    assert known is not None and known(USAGE) > 0
    assert pricer_for("openai:no-such-model-anywhere", {}) is None


def test_scripted_is_free_and_an_unknown_model_is_unpriced() -> None:
    scripted = pricer_for("scripted:/x.yaml", {})
    assert scripted is not None and scripted(USAGE) == 0.0
    assert spend_of(USAGE, None).cost_usd is None
    assert spend_of(USAGE, scripted).tokens == 1_500_000
