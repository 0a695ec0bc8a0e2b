"""The cost budget (``max_cost``, USD): model prices, the cost of a call, the next call's estimate.

Prices come from the provider: a provider that knows them has ``price(model)`` returning
``(input, cached input, output, cache write)`` in USD per million tokens (the providers of
``openmolt-providers`` read the genai-prices table; `openmolt_core.testing.ScriptedModel` takes
``price=``). A call's cost is the provider's own ``usage.cost_usd`` when it reports one, else
computed here from that price. The next call is expected to cost its request's size (characters
/ 4, the compaction estimate) at the input price plus the model's ``max_output_tokens`` (or
`ASSUMED_OUTPUT_TOKENS` when unset) at the output price. A reply whose usage names no token at
all (a server or proxy that reports none) is counted from its size the same way (`counted`), so
``max_tokens`` and ``max_cost`` hold for it too: it is never free.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from openmolt_core._support import lazy_exports

if TYPE_CHECKING:
	from openmolt_core.llm import Message, Usage
	from openmolt_core.result import RunState

__all__ = [
	"ASSUMED_OUTPUT_TOKENS",
	"Price",
	"call_cost",
	"counted",
	"estimate",
	"estimate_tokens",
	"needs_compaction",
	"price_call",
	"price_of",
	"share",
	"spends_budget",
	"usd",
]

Price = tuple[float, float, float, float | None]
"""USD per million tokens: input, cached input, output, cache write (None: the input price)."""

ASSUMED_OUTPUT_TOKENS = 4_096
"""Output tokens a call is expected to use when ``model_config.max_output_tokens`` is unset."""


def usd(amount: float) -> str:
	"""An amount of dollars for a message: ``0.06``, ``0.00006``, ``1.5`` (six decimals at most)."""
	text = f"{amount:.6f}".rstrip("0").rstrip(".")
	return text if text not in ("", "-0") else "0"


def price_of(provider: Any, model: str) -> Price | None:
	"""The provider's price of a model, or None when it has none."""
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

	Args:
		usage: The reply's usage (changed in place when it names no token).
		messages: The request's messages.
		system: The request's system prompt.
		text: The reply's text.
	"""
	if usage.input_tokens or usage.output_tokens:
		return
	usage.input_tokens = estimate_tokens(messages, system)
	usage.output_tokens = (len(text) + 3) // 4
	if not usage.cost_usd:
		usage.cost_usd = None


def estimate(price: Price, input_tokens: int, output_tokens: int | None) -> float:
	"""What the next call is expected to cost: its request at the input price, its most output.

	Args:
		price: The model's price.
		input_tokens: The request's estimated size in tokens.
		output_tokens: The model's ``max_output_tokens`` (None: `ASSUMED_OUTPUT_TOKENS`).
	"""
	inp, _, out, _ = price
	return (input_tokens * inp + (output_tokens or ASSUMED_OUTPUT_TOKENS) * out) / 1e6


def estimate_tokens(messages: list[Message], system: str = "") -> int:
	"""A rough token count (characters / 4) for a prompt: enough to decide when to compact."""
	return (len(system) + sum(len(m.content) for m in messages)) // 4


def needs_compaction(state: RunState, threshold: int, system: str) -> bool:
	"""Whether the next call's prompt would pass the threshold (`openmolt_core.compaction`).

	The last call's input tokens (the provider's own count) plus the turns appended since; before
	any call, the estimate of the whole prompt.
	"""
	appended = state.messages[-1:] if state.context_tokens else state.messages
	base = state.context_tokens or 0
	return base + estimate_tokens(appended, "" if base else system) > threshold


def spends_budget(tool: Any) -> bool:
	"""Whether calls of a tool spend the calling run's cost budget (it runs an agent).

	A tool that runs an agent reads `openmolt_core.tools.CallingRun.cost_left` as its cap and
	says so with a true ``spends_budget`` attribute (`openmolt_core.subagents.AgentTool` does).
	"""
	return getattr(tool, "spends_budget", False) is True


def share(left: float | None, spenders: int) -> float | None:
	"""What one of ``spenders`` calls made at once may spend of what the run has ``left``.

	Sub-agents called in one batch run at the same time and count their spend into the calling
	run only when they end, so each would otherwise take the whole of what is left: each
	reserves an equal part of what was left when the batch began (whichever ends first), and
	what one does not spend stays the run's.

	Args:
		left: What the run may still spend (None: no cost budget).
		spenders: How many calls of the batch spend the budget (1 or fewer: no split).
	"""
	if left is None or spenders <= 1:
		return left
	return left / spenders


# The price check of an agent given ``max_cost`` is the assembly's (it reads prices when it
# builds the agent): its names here are its old ones, loaded on first use.
_HOMES = {
	"Model": "openmolt_core.assembly",
	"OtherModel": "openmolt_core.assembly",
	"check_prices": "openmolt_core.assembly",
}

__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), _HOMES)
