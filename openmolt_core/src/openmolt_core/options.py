"""Option models that accept each name in camelCase and in snake_case, through one mechanism.

The spec writes options in camelCase (``baseUrl``, ``refreshToken``); Python code writes them in
snake_case (``base_url``). Rather than looking each key up twice by hand, every option model
derives from `Options`, whose pydantic alias generator gives each field its camelCase alias:
``Options`` models validate ``{"baseUrl": ...}`` and ``{"base_url": ...}`` alike, and refuse a
dict that spells one field both ways with different values (``give baseUrl or base_url, not
both``). Attributes are always the snake_case names.

A model for a free-form dict (an integration's credential config, a provider's settings) sets
``extra="allow"``: the fields it knows are read in either spelling, other keys are kept as
given. `camel_keys` writes the known fields back under their camelCase names, for templates that
read ``config.accessToken``.

The typed options of `openmolt_core.OpenMolt.create_agent` live here too (`AgentConfig`,
`AgentMemory`, `IntegrationEntry`), and the ``openmolt`` command's agent files use the same
models, so both accept and refuse the same things. `parse_options` turns a validation error into
a `openmolt_core.errors.ConfigurationError` naming the key (and the closest known one).

```python
class ProviderSettings(Options):
	model_config = options_config(extra="allow")
	api_key: str | None = None
	base_url: str | None = None


ProviderSettings.model_validate({"apiKey": "sk-..."}).api_key  # "sk-..."
```
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import (
	BaseModel,
	ConfigDict,
	Field,
	StrictBool,
	StrictFloat,
	StrictInt,
	ValidationError,
	model_validator,
)
from pydantic.alias_generators import to_camel, to_snake
from pydantic.json_schema import SkipJsonSchema

__all__ = [
	"AgentConfig",
	"AgentMemory",
	"EngineConfig",
	"IntegrationCredential",
	"IntegrationEntry",
	"MemoryPart",
	"Options",
	"camel",
	"camel_keys",
	"options_config",
	"parse_options",
	"snake_keys",
	"snake_options",
]


def camel(name: str) -> str:
	"""The camelCase spelling of a snake_case name (``refresh_token`` → ``refreshToken``).

	Args:
		name: The snake_case name.
	"""
	return to_camel(name)


def options_config(
	*,
	extra: Literal["allow", "ignore", "forbid"] = "forbid",
	frozen: bool = True,
	arbitrary_types_allowed: bool = False,
) -> ConfigDict:
	"""The pydantic config of an `Options` model, with camelCase aliases.

	Args:
		extra: What to do with keys that are not fields: ``forbid`` (an error naming them),
			``allow`` (kept as given) or ``ignore``.
		frozen: Whether instances are immutable.
		arbitrary_types_allowed: Whether fields may hold classes pydantic does not know.
	"""
	return ConfigDict(
		alias_generator=to_camel,
		validate_by_name=True,
		validate_by_alias=True,
		extra=extra,
		frozen=frozen,
		arbitrary_types_allowed=arbitrary_types_allowed,
	)


class Options(BaseModel):
	"""Base of every option model: each field by its snake_case name or its camelCase alias.

	A field given in both spellings with different values is refused; with the same value it is
	taken once. Subclasses change ``extra`` or ``frozen`` with `options_config`.
	"""

	model_config: ClassVar[ConfigDict] = options_config()

	@model_validator(mode="before")
	@classmethod
	def _one_spelling(cls, data: Any) -> Any:
		if not isinstance(data, Mapping):
			return data
		out = dict(data)
		for name, field in cls.model_fields.items():
			alias = field.alias
			if not alias or alias == name or name not in out or alias not in out:
				continue
			if out[name] != out[alias]:
				raise ValueError(f"give {alias} or {name}, not both")
			del out[name]
		return out


_M = TypeVar("_M", bound="Options")


def camel_keys(options: Options) -> dict[str, Any]:
	"""An options model as a dict: its set fields under their camelCase names, extras as given.

	Args:
		options: A validated model.
	"""
	return options.model_dump(by_alias=True, exclude_unset=True)


def snake_keys(options: Mapping[str, Any]) -> dict[str, Any]:
	"""A dict with each key in snake_case (``baseUrl`` → ``base_url``), values as given.

	For settings handed to code that reads snake_case only (a third-party provider plugin).

	Args:
		options: The settings.
	"""
	return {to_snake(str(key)): value for key, value in options.items()}


def snake_options(options: Mapping[str, Any], where: str) -> dict[str, Any]:
	"""A dict's keys in snake_case, for option classes that are not `Options` models (dataclasses).

	The same rule as `Options`: ``onOutbound`` and ``on_outbound`` name one option; giving both
	with different values is refused.

	Args:
		options: The options, in either spelling.
		where: Where they were given, for the message (``durability``).

	Raises:
		ConfigurationError: One key spelled both ways with different values.
	"""
	from openmolt_core.errors import ConfigurationError

	out: dict[str, Any] = {}
	given: dict[str, str] = {}
	for key, value in options.items():
		name = to_snake(str(key))
		if name in out and out[name] != value:
			raise ConfigurationError(
				f"{where}: give {given[name]!r} or {key!r}, not both (they are one option)"
			)
		out[name] = value
		given[name] = str(key)
	return out


def parse_options(model: type[_M], value: Any, where: str) -> _M:
	"""Validate options into ``model``, as a `ConfigurationError` that names the key and the fix.

	Args:
		model: The `Options` model.
		value: A model instance (returned as is) or a dict in either spelling.
		where: Where the options were given, for the message (``create_agent: config``).

	Raises:
		ConfigurationError: An unknown key (with the closest known one), a wrong value, or one
			key spelled both ways with different values.
	"""
	from openmolt_core.errors import ConfigurationError

	if isinstance(value, model):
		return value
	if not isinstance(value, Mapping):
		raise ConfigurationError(f"{where} must be a dict, got {type(value).__name__}")
	try:
		return model.model_validate(value)
	except ValidationError as exc:
		raise ConfigurationError("; ".join(_problems(model, exc, where))) from None


_PLAIN = {
	"int_type": "must be a whole number >= 1",
	"int_from_float": "must be a whole number >= 1",
	"greater_than_equal": "must be a whole number >= 1",
	"float_type": "must be seconds > 0",
	"greater_than": "must be seconds > 0",
	"bool_type": "must be True or False",
}


def _problems(model: type[Options], exc: ValidationError, where: str) -> list[str]:
	known = sorted({n for f, field in model.model_fields.items() for n in (f, field.alias) if n})
	out: list[str] = []
	for error in exc.errors():
		if error["loc"] and error["loc"][0] in ("max_cost", "maxCost"):  # dollars, not seconds
			text = f"{where}[{error['loc'][0]!r}] must be US dollars > 0 (maxCost: 0.5), got "
			if not any(o.startswith(text) for o in out):
				out.append(f"{text}{error.get('input')!r}")
			continue
		path = "".join(f"[{p!r}]" for p in error["loc"])
		if error["type"] == "extra_forbidden":
			close = difflib.get_close_matches(str(error["loc"][-1]), known, n=1)
			hint = f"; did you mean {close[0]!r}?" if close else ""
			names = ", ".join(f for f in model.model_fields)
			out.append(f"{where}: unknown key {error['loc'][-1]!r}{hint} (allowed: {names})")
		else:
			what = _PLAIN.get(error["type"]) if len(error["loc"]) == 1 else None
			text = what or f"is wrong: {error['msg']}"
			out.append(f"{where}{path} {text}, got {error.get('input')!r}")
	return out


class EngineConfig(Options):
	"""The keys of an integration's config that the HTTP engine itself reads (either spelling).

	Every other key of the config is the integration's (its templates read them).

	Attributes:
		allow_internal_hosts: Internal hosts or networks the integration's tools may reach
			(``allowInternalHosts``; see `openmolt_core.integrations._ssrf`).
		allow_private: The retired switch that opened every internal address (refused).
	"""

	model_config: ClassVar[ConfigDict] = options_config(extra="ignore")

	allow_internal_hosts: Any = None
	allow_private: Any = None

	@classmethod
	def of(cls, config: Mapping[str, Any]) -> EngineConfig:
		"""The engine's keys of a config (other keys ignored).

		Args:
			config: The integration's credential config.

		Raises:
			ConfigurationError: A key is given in both spellings with different values.
		"""
		return parse_options(cls, config, "integration config")


# The typed options of create_agent, shared with the agent files of the ``openmolt`` command ----

_Count = Annotated[StrictInt, Field(ge=1)]


class AgentConfig(Options):
	"""``create_agent(config=...)``: the instance settings one agent overrides.

	Explicit keyword arguments of `openmolt_core.OpenMolt.create_agent` win over these.

	Attributes:
		max_steps: The most model calls a run makes (``maxSteps``).
		max_tokens: Tokens over the run after which no model call starts (``maxTokens``).
		timeout: Seconds the whole run may take.
		max_cost: US dollars a run may spend on model calls (``maxCost``).
		verbose: Log this agent's steps and tool calls to stderr.
		max_reply_chars: Cap of a model reply (`openmolt_core.agent.Limits`).
		max_result_chars: Cap of a tool result shown to the model.
		max_memory_chars: Cap of each memory.
		max_answer_chars: Cap of a person's answer.
		max_result_chars_per_tool: Result thresholds by tool handle or pattern
			(`openmolt_core.offload`), in characters.
	"""

	max_steps: _Count | None = Field(default=None, description="The most model calls a run makes.")
	max_tokens: _Count | None = Field(default=None, description="Tokens over the run.")
	timeout: Annotated[StrictFloat | StrictInt, Field(gt=0)] | None = Field(
		default=None, description="Seconds the whole run may take."
	)
	max_cost: (
		Annotated[StrictFloat, Field(gt=0, allow_inf_nan=False)]
		| Annotated[StrictInt, Field(gt=0)]
		| None
	) = Field(default=None, description="US dollars a run may spend on model calls.")
	verbose: StrictBool | None = Field(default=None, description="Log steps to stderr.")
	max_reply_chars: _Count | None = None
	max_result_chars: _Count | None = None
	max_memory_chars: _Count | None = None
	max_answer_chars: _Count | None = None
	max_result_chars_per_tool: dict[str, _Count] | None = Field(
		default=None,
		description="Result thresholds by tool handle or pattern, e.g. {'notion.*': 8000}.",
	)

	def limits(self) -> dict[str, Any]:
		"""The caps that are set, for `openmolt_core.agent.Limits`."""
		names = (
			"max_reply_chars",
			"max_result_chars",
			"max_memory_chars",
			"max_answer_chars",
			"max_result_chars_per_tool",
		)
		return {n: getattr(self, n) for n in names if getattr(self, n) is not None}


class MemoryPart(Options):
	"""One memory's initial content, and who hears its updates.

	Attributes:
		data: The initial text (any other JSON value is written as JSON).
		on_update: Called (sync or async) with the new text after each update (Python only).
	"""

	data: Any = ""
	on_update: SkipJsonSchema[Callable[[str], Any] | None] = Field(default=None, exclude=True)


class AgentMemory(Options):
	"""``create_agent(memory=...)``: initial long- and short-term memory.

	Attributes:
		long_term: Memory that outlives a run (``longTerm``): text or a `MemoryPart`.
		short_term: Memory of one run (``shortTerm``).
	"""

	long_term: MemoryPart | str | None = None
	short_term: MemoryPart | str | None = None


class IntegrationCredential(Options):
	"""The credential an agent uses for one integration.

	Attributes:
		type: The credential type (``bearer``, ``oauth2``...; default: the integration's first).
		config: The values its templates read (API keys, tokens, account ids).
		on_token_refresh: Called with the new config after an OAuth2 refresh (Python only).
	"""

	type: str | None = Field(
		default=None, description="bearer, custom, oauth2... (default: first)."
	)
	config: dict[str, Any] = Field(
		default_factory=dict, repr=False, description="Values for the templates."
	)
	on_token_refresh: SkipJsonSchema[Callable[[dict[str, Any]], Any] | None] = Field(
		default=None, exclude=True
	)


class IntegrationEntry(Options):
	"""One integration an agent may use, with its credential and scopes.

	Attributes:
		integration: The integration id (``notion``).
		credential: The credential to use (default: the integration's first type, with the
			instance's config).
		scopes: The scopes granted, or ``"all"`` (the default).
		account: Whose account the tools act as: ``operator`` (the default: the credential
			given, the environment or the operator's stored one) or ``user`` (each run's end
			user, ``agent.run(input, user=...)``, from the credential store; a user who has
			not connected parks the run with an authorization request, see
			`openmolt_core.accounts`).
	"""

	integration: str = Field(min_length=1, description="The integration id, e.g. 'notion'.")
	credential: IntegrationCredential | None = None
	scopes: list[str] | Literal["all"] | None = Field(default=None, description="Default: all.")
	account: Literal["operator", "user"] = Field(
		default="operator",
		description="'user': each run's end user's stored credential; 'operator': one account.",
	)
