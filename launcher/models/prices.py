"""What a model reply cost: the maintained `genai-prices` table, under the user's overrides.

An override (`"prices"` in `mcp.json`) wins; its key is `PROVIDER:MODEL` as in `--model`,
or a bare model id that matches under any provider. A `scripted:` model costs nothing. A
model neither knows is unpriced (None): its replies' `cost_usd` is null, and a run with
`max_cost_usd` refuses to start on it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

from launcher.budget import Spend
from launcher.config.types import ModelPrice
from launcher.models.base import Usage

PER_MILLION = 1_000_000

Pricer = Callable[[Usage], float]
"""A reply's usage -> its cost in USD."""

FREE_PROVIDERS = frozenset({"scripted"})
"""Providers that never bill (a replayed script)."""


def pricer_for(spec: str, overrides: Mapping[str, ModelPrice]) -> Pricer | None:
    """How `spec`'s (`PROVIDER:MODEL`) replies are priced, or None when no table knows it."""
    provider, _, model = spec.partition(":")
    if provider in FREE_PROVIDERS:
        return lambda usage: 0.0
    own = overrides.get(spec) or overrides.get(model)
    if own is not None:
        return functools.partial(_priced, own)
    return _from_table(provider, model)


def spend_of(usage: Usage, pricer: Pricer | None) -> Spend:
    """A reply's spend: its tokens, and its cost when the model is priced."""
    return Spend(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        cost_usd=pricer(usage) if pricer is not None else None,
    )


def _priced(price: ModelPrice, usage: Usage) -> float:
    read = price.cache_read if price.cache_read is not None else price.input
    write = price.cache_write if price.cache_write is not None else price.input
    fresh = max(0, usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens)
    total = (
        fresh * price.input
        + usage.cache_read_tokens * read
        + usage.cache_write_tokens * write
        + usage.output_tokens * price.output
    )
    return total / PER_MILLION


def _from_table(provider: str, model: str) -> Pricer | None:
    """`genai-prices`' pricer for the model, if its table has it (imported only here: a
    third of a second, paid by runs of priced HTTP models alone)."""
    try:
        import genai_prices
    except ImportError:  # an install without it prices overrides only
        return None

    def price(usage: Usage) -> float:
        calc = genai_prices.calc_price(
            genai_prices.Usage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_tokens=usage.cache_read_tokens,
                cache_write_tokens=usage.cache_write_tokens,
            ),
            model_ref=model,
            provider_id=provider,
        )
        return float(calc.total_price)

    try:
        price(Usage())
    except LookupError:
        return None
    return price
