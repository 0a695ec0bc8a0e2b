"""The cost of model calls (USD): model prices, the cost of a call, the size of a prompt.

Prices come from the provider's ``price(model)``: ``(input, cached input, output, cache write)``
in USD per million tokens (``price_at(model, prompt_tokens)``: a long-context tier; the providers
of ``openmolt-providers`` read the genai-prices table, `openmolt_core.testing.ScriptedModel` takes
``price=``). A call's cost is the provider's own ``usage.cost_usd`` when it reports one, else
computed here; a reply whose usage names no token is counted from its size (`counted`), so
budgets hold for it too. The prices of audio in and out are the budget's
(`openmolt_core.capabilities.budget`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from openmolt_core._support import lazy_exports

if TYPE_CHECKING:
	from openmolt_core.llm import Message, Usage

__all__ = [
	"Price",
	"call_cost",
	"counted",
	"estimate_tokens",
	"price_call",
	"price_of",
]

Price = tuple[float, float, float, float | None]
"""USD per million tokens: input, cached input, output, cache write (None: the input price)."""


def price_of(provider: Any, model: str, prompt_tokens: int | None = None) -> Price | None:
	"""The provider's price of a model, or None when it has none.

	Args:
		provider: The provider (its ``price(model)``).
		model: The model.
		prompt_tokens: The size of the prompt to price: the price a prompt that long pays (a
			long-context tier), from the provider's optional ``price_at(model, prompt_tokens)``;
			without it, or None, ``price(model)``.
	"""
	at = getattr(provider, "price_at", None) if prompt_tokens is not None else None
	if callable(at):
		value = at(model, prompt_tokens)
	else:
		price = getattr(provider, "price", None)
		if not callable(price):
			return None
		value = price(model)
	if value is None:
		return None
	inp, cached, out, *rest = value
	return (float(inp), float(cached), float(out), rest[0] if rest else None)


def call_cost(price: Price, usage: Usage) -> float:
	"""The cost of one call in USD, from its usage at ``price``."""
	inp, cached, out, _ = price
	fresh = max(usage.input_tokens - usage.cached_tokens, 0)
	return round((fresh * inp + usage.cached_tokens * cached + usage.output_tokens * out) / 1e6, 10)


def price_call(provider: Any, model: str, usage: Usage) -> None:
	"""Set ``usage.cost_usd`` from the model's price when the provider did not report a cost."""
	if usage.cost_usd is None:
		price = price_of(provider, model)
		if price is not None:
			usage.cost_usd = call_cost(price, usage)


def counted(usage: Usage, messages: list[Message], system: str, text: str) -> None:
	"""Fill a reply's usage from its size when the provider reported no token (characters / 4).

	Its reported cost, computed from no tokens, is dropped so `price_call` prices the estimate.
	A reply with text whose usage counts the prompt alone (no output token: a server that counts
	only what it was sent) gets its output counted the same way, and one whose usage counts the
	output alone (``prompt_tokens: null``: no prompt is empty) gets its prompt counted.

	Args:
		usage: The reply's usage (changed in place when it names no token).
		messages: The request's messages.
		system: The request's system prompt.
		text: The reply's text.
	"""
	if usage.input_tokens or usage.output_tokens:
		if not usage.output_tokens and text:
			usage.output_tokens = (len(text) + 3) // 4
			usage.cost_usd = None  # priced from no output: `price_call` prices the estimate
		if not usage.input_tokens and (prompt := estimate_tokens(messages, system)):
			usage.input_tokens = prompt
			usage.cost_usd = None  # priced from no prompt: `price_call` prices the estimate
		return
	usage.input_tokens = estimate_tokens(messages, system)
	usage.output_tokens = (len(text) + 3) // 4
	if not usage.cost_usd:
		usage.cost_usd = None


def estimate_tokens(messages: list[Message], system: str = "") -> int:
	"""A rough token count (characters / 4) for a prompt: enough to decide when to compact."""
	return (len(system) + sum(len(m.content) for m in messages)) // 4


# The price check of an agent given ``max_cost`` is `openmolt_core._pricecheck`'s, the budget's
# estimate, prices of audio and messages the budget capability's: their names here are their old
# ones, loaded on first use.
_BUDGET = "openmolt_core.capabilities.budget"
_HOMES = {
	"ASSUMED_OUTPUT_TOKENS": _BUDGET,
	"estimate": _BUDGET,
	"share": _BUDGET,
	"spends_budget": _BUDGET,
	"usd": _BUDGET,
	"audio_price_of": _BUDGET,  # only the budget's estimate prices audio apart
	"spoken_price_of": _BUDGET,
	"Model": "openmolt_core._pricecheck",
	"OtherModel": "openmolt_core._pricecheck",
	"check_prices": "openmolt_core._pricecheck",
	"needs_compaction": "openmolt_core.capabilities",  # compaction's own check
}

__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), _HOMES)
