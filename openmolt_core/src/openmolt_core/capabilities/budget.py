"""Token and cost budgets as a capability: ``create_agent(max_tokens=..., max_cost=...)``.

``max_tokens`` starts no model call once the run's tokens (input + output, summed) reach it, and
tells the model its call is the last when one more call of the average size would reach it.
``max_cost`` (USD) starts no model call once the run's spend reaches it, nor once a call of the
run had no price (`openmolt_core.llm.Usage.unpriced_calls`: a model whose price went missing after
the assembly checked it, a provider that names another model): its spend is unknown, so the cap
fails closed rather than count it as free; and tells the model its
call is the last when the call is expected to reach it: its request's size (characters / 4, or the
last prompt as the provider counted it, its images and audio included, and the turns since) at the
dearest input price (a cache write's, or audio's when the prompt holds audio) plus the model's
``max_output_tokens`` (or `ASSUMED_OUTPUT_TOKENS`) at the output price (a spoken reply's when the
model can speak: ``gpt-audio``)
(`openmolt_core._cost` prices the calls), at the dearest model that may answer it (an agent's
fallback models serve a step its first model fails). Both end the run with ``limit_reached``.

A sub-agent's run stops at what its calling run had left, when that is less than its own budget:
the calling run hands its caps down (`Budget.hand_down`: ``CallingRun.cost_left`` and
``tokens_left``) with a `Budget` of no budget of its own, which the called run attaches when its
agent has none, so the cap holds in a sub-agent created without ``max_tokens`` or ``max_cost``.
Sub-agents called at once share what was left when the batch began (`share`).

The assembly attaches a `Budget` to an agent given either option (or the instance's
``max_cost``); the loop asks it through `Capability.before_step` and `Capability.last_step`, whose
answers are a pure function of the journaled state (usage, steps, messages) and of the calling
run's caps, so a durable replay ends the run at the same step.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from openmolt_core._cost import Price, estimate_tokens, price_of
from openmolt_core.hooks import Capability, Run, Stop, ToolSpec

if TYPE_CHECKING:
	from openmolt_core.hooks import ModelAccess
	from openmolt_core.result import RunState
	from openmolt_core.tools import CallingRun

__all__ = [
	"ASSUMED_OUTPUT_TOKENS",
	"Budget",
	"audio_price_of",
	"budget",
	"estimate",
	"share",
	"spends_budget",
	"spoken_price_of",
	"usd",
]

ASSUMED_OUTPUT_TOKENS = 4_096
"""Output tokens a call is expected to use when ``model_config.max_output_tokens`` is unset."""


def usd(amount: float) -> str:
	"""An amount of dollars for a message: ``0.06``, ``0.00006``, ``1.5`` (six decimals at most)."""
	text = f"{amount:.6f}".rstrip("0").rstrip(".")
	return text if text not in ("", "-0") else "0"


def audio_price_of(provider: Any, model: str) -> float | None:
	"""The provider's price of a model's audio input (USD per million tokens), or None.

	From the provider's optional ``audio_price(model)`` (the providers of
	``openmolt-providers``: Gemini Flash prices audio apart from text); None when it has none, or
	the model's audio costs its input price.

	Args:
		provider: The provider.
		model: The model.
	"""
	return _asked(provider, "audio_price", model)


def spoken_price_of(provider: Any, model: str) -> float | None:
	"""The provider's price of a model's audio output (USD per million tokens), or None.

	From the provider's optional ``spoken_price(model)`` (``gpt-audio``, Gemini's live models);
	None when it has none.

	Args:
		provider: The provider.
		model: The model.
	"""
	return _asked(provider, "spoken_price", model)


def _asked(provider: Any, method: str, model: str) -> float | None:
	"""What the provider's optional price method (``audio_price``...) says of a model, or None."""
	at = getattr(provider, method, None)
	value = at(model) if callable(at) else None
	return None if value is None else float(value)


def estimate(
	price: Price,
	input_tokens: int,
	output_tokens: int | None,
	audio: float | None = None,
	spoken: float | None = None,
) -> float:
	"""What the next call is expected to cost: its request at its dearest input price, and output.

	A prompt token may be written to the cache (Anthropic writes the new part of every prompt, at
	1.25 times the input price; OpenAI's gpt-5.6 and later bill writes too) or be audio (Gemini
	Flash: 1.00 a million where text is 0.30): priced at the input price, such a call cost more
	than the estimate, and the run was not told its last call.

	Args:
		price: The model's price.
		input_tokens: The request's estimated size in tokens.
		output_tokens: The model's ``max_output_tokens`` (None: `ASSUMED_OUTPUT_TOKENS`).
		audio: The model's price of audio input when the prompt holds audio (None: none, or the
			model has no price of its own for it).
		spoken: The model's price of audio output (None: it has none). Whether the reply will be
			spoken is known only after the call, so a model that can speak has its output
			estimated at the dearer of the two prices.
	"""
	inp, _, out, write = price
	dearest = max(inp, write or 0.0, audio or 0.0)
	said = max(out, spoken or 0.0)
	return (input_tokens * dearest + (output_tokens or ASSUMED_OUTPUT_TOKENS) * said) / 1e6


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


class Budget(Capability):
	"""Ends a run once its tokens or its spend reach a cap (its own, or what its caller had left).

	Args:
		max_tokens: Tokens (input + output, summed) after which no model call starts (None: none).
		max_cost: USD the run may spend on model calls, sub-agents' included (None: none).
	"""

	name = "budget"
	in_fingerprint = False  # the steps a run asks for are the same; only where it ends differs

	def __init__(self, max_tokens: int | None = None, max_cost: float | None = None) -> None:
		self.max_tokens = max_tokens or None
		self.max_cost = max_cost

	def __repr__(self) -> str:
		return f"Budget(max_tokens={self.max_tokens!r}, max_cost={self.max_cost!r})"

	def _tokens(self, link: CallingRun | None) -> tuple[int, str] | None:
		"""The run's token cap: its own ``max_tokens``, or what its calling run has left if less."""
		own = self.max_tokens
		left = link.tokens_left if link is not None else None
		if left is not None and (own is None or left < own):
			return max(left, 0), "the calling run had left"
		return None if own is None else (own, "tokens")

	def _cost(self, link: CallingRun | None) -> tuple[float, str] | None:
		"""The run's cost cap: its own ``max_cost``, or what its calling run has left if less."""
		own = self.max_cost
		left = link.cost_left if link is not None else None
		if left is not None and (own is None or left < own):
			return max(left, 0.0), "cost budget (max_cost) the calling run had left"
		return None if own is None else (own, "cost budget (max_cost)")

	async def before_step(self, run: Run) -> Stop | None:
		"""End the run once its tokens or its spend reached the cap."""
		usage = run.state.usage
		tokens = self._tokens(run.link)
		if tokens is not None and usage.total_tokens >= tokens[0]:
			used, (most, of) = usage.total_tokens, tokens
			return Stop(
				f"{used} of {most} tokens used"
				if of == "tokens"
				else f"{used} tokens used, of the {most} {of}",
				"limit_reached",
			)
		budget = self._cost(run.link)
		if budget is not None:
			cap, whose = budget
			if usage.unpriced_calls:  # fail closed: what they spent is not known
				calls = usage.unpriced_calls
				return Stop(
					f"{calls} model call{'s' if calls != 1 else ''} of this run had no price, so "
					f"the ${usd(cap)} {whose} cannot be held: give every model a price",
					"limit_reached",
				)
			spent = usage.cost_usd or 0.0
			if spent >= cap:
				return Stop(f"${usd(spent)} of the ${usd(cap)} {whose} spent", "limit_reached")
		return None

	def last_step(self, run: Run) -> str | None:
		"""Why the coming call is the last: one more call would reach the token or cost cap."""
		state = run.state
		tokens = self._tokens(run.link)
		if tokens is not None and state.steps:
			per_call = state.usage.total_tokens / state.steps
			if state.usage.total_tokens + per_call >= tokens[0]:
				most, of = tokens
				return f"{most} tokens" if of == "tokens" else f"the {most} tokens {of}"
		budget = self._cost(run.link)
		models = run.models
		if budget is not None and models is not None:
			expected = _expected(state, models)
			if expected is not None and (state.usage.cost_usd or 0.0) + expected >= budget[0]:
				return f"the ${usd(budget[0])} cost budget"
		return None

	def hand_down(self, run: Run, tools: Sequence[ToolSpec]) -> Sequence[Mapping[str, Any]]:
		"""Hand each call what the run has left (a share, for sub-agents called at once)."""
		state = run.state
		tokens = self._tokens(run.link)
		cost = self._cost(run.link)
		if tokens is None and cost is None:
			return ()
		tokens_left = None if tokens is None else tokens[0] - state.usage.total_tokens
		cost_left = None if cost is None else cost[0] - (state.usage.cost_usd or 0.0)
		spends = [spends_budget(getattr(t, "tool", t)) for t in tools]  # a bound tool's tool
		spenders = sum(spends)
		shared_cost, shared_tokens = cost_left, tokens_left
		if spenders > 1:
			shared_cost = share(cost_left, spenders)
			split = share(tokens_left, spenders)
			shared_tokens = None if split is None else int(split)
		return [
			{
				"cost_left": shared_cost if spent else cost_left,
				"tokens_left": shared_tokens if spent else tokens_left,
				"capabilities": (_INHERITED,),
			}
			for spent in spends
		]


def _expected(state: RunState, models: ModelAccess) -> float | None:
	"""What the coming call is expected to cost: at the dearest model that may answer it.

	The first model answers unless it fails, and then a fallback does (`ModelAccess.chain`):
	which one is known only after the call, so each is priced and the dearest counts (with one
	model, its own). None when no model has a price.
	"""
	most = models.config.max_output_tokens
	chain = models.chain()
	heard = any(a.media_type.startswith("audio/") for m in state.messages for a in m.attachments)
	expected: float | None = None
	for provider, model, system in chain:
		prompt = _prompt(state, system)
		price = price_of(provider, model, prompt)  # past a long-context threshold: its tier's
		if price is None:
			continue
		audio = audio_price_of(provider, model) if heard else None
		cost = estimate(price, prompt, most, audio, spoken_price_of(provider, model))
		if expected is None or cost > expected:
			expected = cost
	return expected


def _prompt(state: RunState, system: str) -> int:
	"""The coming prompt's size in tokens: its text (characters / 4), or the provider's count.

	When more: the last call's prompt as its provider counted it, and the turns appended since.
	The text alone leaves out what the prompt carries beside it (images, audio, documents: a
	recording of an hour is about 115,000 Gemini tokens, no character of text); the provider's
	count of the last prompt holds them.
	"""
	text = estimate_tokens(state.messages, system)
	if not state.context_tokens:  # no call yet, or the history was compacted since
		return text
	return max(text, state.context_tokens + estimate_tokens(state.messages[-2:]))


_INHERITED = Budget()
"""What a run hands down with its caps: a budget of its own, none; the calling run's, read there."""


@functools.lru_cache(maxsize=64)
def budget(max_tokens: int | None, max_cost: float | None) -> Budget:
	"""The budget of these caps (agents with the same caps share one: it holds no run's state).

	Args:
		max_tokens: The agent's ``max_tokens`` (None: none).
		max_cost: The agent's ``max_cost`` (None: none).
	"""
	return Budget(max_tokens, max_cost)
