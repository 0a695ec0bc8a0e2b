"""Option models in camelCase and snake_case alike, and the memory options the loop reads.

`Options` and its helpers are `openmolt_core._support.optionmodels`'s, re-exported here; the
other option models live with the layers that read them (their old names import on first use).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import Field, ValidationError, model_validator
from pydantic.json_schema import SkipJsonSchema

from openmolt_core._support import lazy_exports
from openmolt_core._support.optionmodels import (  # the mechanism: a library
	Options,
	camel,
	camel_keys,
	masked_repr_args,
	options_config,
	problems,
	setting_problems,
	snake_keys,
)

if TYPE_CHECKING:
	from openmolt_core.llm import ModelConfig

__all__ = [
	"AgentMemory",
	"MemoryPart",
	"Options",
	"camel",
	"camel_keys",
	"masked_repr_args",
	"options_config",
	"parse_options",
	"read_model_config",
	"snake_keys",
]


_M = TypeVar("_M", bound="Options")


def read_model_config(value: ModelConfig | Mapping[str, Any], where: str) -> ModelConfig:
	"""Read a model configuration: a `ModelConfig`, or a dict of its settings.

	Args:
		value: What was given.
		where: Who was given it, for the message (``create_agent``, ``agent.model_config``).

	Raises:
		ConfigurationError: It is neither, or a setting is unknown or of the wrong type.
	"""
	from openmolt_core.llm import ModelConfig

	if isinstance(value, ModelConfig):
		return value
	from openmolt_core._support.words import shown  # loaded by an error only
	from openmolt_core.errors import ConfigurationError

	if not isinstance(value, Mapping):
		raise ConfigurationError(
			f"{where}: model_config must be a dict of its settings (got {shown(value)}), "
			"e.g. model_config={'temperature': 0.2}"
		)
	from pydantic import ValidationError

	try:
		return ModelConfig.model_validate(value)
	except ValidationError as exc:
		found = "; ".join(setting_problems(ModelConfig, exc))
		raise ConfigurationError(f"{where}: model_config: {found}") from None


def parse_options(model: type[_M], value: Any, where: str) -> _M:
	"""Validate options into ``model``, as a `ConfigurationError` that names the key and the fix.

	Args:
		model: The `Options` model.
		value: A model instance (returned as is) or a dict in either spelling.
		where: Where the options were given, for the message (``create_agent: config``).

	Raises:
		ConfigurationError: An unknown key, a wrong value, or a key spelled both ways.
	"""
	from openmolt_core.errors import ConfigurationError

	if isinstance(value, model):
		return value
	if not isinstance(value, Mapping):
		raise ConfigurationError(f"{where} must be a dict, got {type(value).__name__}")
	try:
		return model.model_validate(value)
	except ValidationError as exc:
		raise ConfigurationError("; ".join(problems(model, exc, where))) from None


class MemoryPart(Options):
	"""One memory's initial content, and who hears its updates (docs/guides/agents.md#memory).

	Attributes:
		data: The initial text (any other JSON value is written as JSON): of the agent's own
			long-term memory, which runs for no user read (or every run's, when ``shared``).
		on_update: Called (sync or async) with the new text after each update (Python only);
			it may take ``update_id``, ``untrusted`` and ``user`` (whose memory it is). Long-term
			memory's callback without ``user`` is not called for a user's runs.
		untrusted: ``data`` was written by a run that had read untrusted content: a run that
			starts from it starts tainted.
		shared: Long-term memory only: one memory for every run of the agent, whoever it acts
			for. Default: each end user's own.
	"""

	data: Any = ""
	on_update: SkipJsonSchema[Callable[[str], Any] | None] = Field(default=None, exclude=True)
	untrusted: bool = False
	shared: bool = False


class AgentMemory(Options):
	"""``create_agent(memory=...)``: initial long- and short-term memory.

	Attributes:
		long_term: Memory that outlives a run (``longTerm``): text or a `MemoryPart`.
		short_term: Memory of one run (``shortTerm``).
	"""

	long_term: MemoryPart | str | None = None
	short_term: MemoryPart | str | None = None

	@model_validator(mode="after")
	def _one_runs(self) -> AgentMemory:
		if isinstance(self.short_term, MemoryPart) and self.short_term.shared:
			raise ValueError(
				"short_term.shared: short-term memory is one run's (in a session, its user's) "
				"and is never shared; give shared to long_term"
			)
		return self


# Names that live above the contract, under their old names here (loaded on first use; not in
# __all__: a star import does not load them).
_HOMES: Mapping[str, str] = {
	"AgentConfig": "openmolt_core.agentconfig",
	"EngineConfig": "openmolt_core.integrations.config",
	"IntegrationCredential": "openmolt_core.agentconfig",
	"IntegrationEntry": "openmolt_core.agentconfig",
	"path_problem": "openmolt_core._support.paths",
	"snake_options": "openmolt_core.taint",
}

__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), _HOMES)
