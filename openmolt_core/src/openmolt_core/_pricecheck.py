"""The price check of ``max_cost``: an agent given a cost budget must know its models' prices.

A model without a known price would count as free, so a budget could not hold: `build_agent`
(`openmolt_core.assembly`) refuses such an agent when it is given ``max_cost``, and a setter that
changes its models checks again. Loaded by the first agent given a budget; `openmolt_core.assembly`
and `openmolt_core._cost` re-export these names from their old home.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from openmolt_core._cost import price_of
from openmolt_core.errors import ConfigurationError

if TYPE_CHECKING:
	from openmolt_core.agent import Agent

__all__ = ["Model", "OtherModel", "check_agent_prices", "check_prices"]


class Model(Protocol):
	"""A model the price check reads: a `openmolt_core._chain.ModelSlot` or an `OtherModel`."""

	@property
	def id(self) -> str:
		"""``provider:model``, for messages."""
		...

	@property
	def model(self) -> str:
		"""The model name the provider is asked for."""
		...

	def provider(self) -> Any:
		"""The provider."""
		...


@dataclass(frozen=True, slots=True)
class OtherModel:
	"""A model outside the agent's chain (its compaction model), for the price check.

	Args:
		client: The provider.
		model: The model name.
	"""

	client: Any
	model: str

	@property
	def id(self) -> str:
		"""``provider:model``."""
		return f"{getattr(self.client, 'name', 'custom')}:{self.model}"

	def provider(self) -> Any:
		"""The provider."""
		return self.client


def check_prices(name: str, slots: Iterable[Model], label: str) -> None:
	"""Refuse a cost budget for an agent whose models have no known price.

	Args:
		name: The agent's name.
		slots: Its models (primary and fallbacks).
		label: Where the budget was set, for the message.

	Raises:
		ConfigurationError: A model's price is unknown: its cost would count as zero.
	"""
	for slot in slots:
		if price_of(slot.provider(), slot.model) is None:
			raise ConfigurationError(
				f"{label}: the price of {slot.id!r} (agent {name!r}) is unknown, so max_cost "
				"cannot be enforced: use a model the provider has a price for, give a provider "
				"object with a price(model) method, or leave max_cost out"
			)


def check_agent_prices(agent: Agent, label: str = "create_agent: max_cost") -> None:
	"""Refuse ``max_cost`` when a model whose calls it counts has no known price.

	The agent's, its sub-agents' and its guardrail agents' (theirs too, at any depth): each of
	their calls spends the run's budget (a guardrail agent's, the run it judges).

	Args:
		agent: The agent given ``max_cost``.
		label: Where the budget was set, for the message.

	Raises:
		ConfigurationError: A model's price is unknown: its cost would count as zero.
	"""
	from openmolt_core.taint import guard_agents

	seen: set[int] = set()
	todo: list[tuple[Agent, str]] = [(agent, "")]
	while todo:
		one, what = todo.pop()
		if id(one) in seen:
			continue
		seen.add(id(one))
		where = label + (f" ({what} {one.name!r})" if what else "")
		check_prices(one.name, one._models.slots, where)
		if one.compaction is not None and one.compactor is not None:  # summaries cost too
			provider, model = one.compactor()
			check_prices(one.name, [OtherModel(provider, model)], f"{where} (compaction model)")
		todo.extend((sub, "sub-agent") for sub in one.sub_agents)
		todo.extend((judge, "guardrail agent") for judge in guard_agents(one))
