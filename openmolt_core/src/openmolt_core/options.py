"""Option models that accept each name in camelCase and in snake_case, through one mechanism.

The spec writes options in camelCase (``baseUrl``, ``refreshToken``); Python code writes them in
snake_case (``base_url``). Rather than looking each key up twice by hand, every option model
derives from `Options`, whose pydantic alias generator gives each field its camelCase alias:
``Options`` models validate ``{"baseUrl": ...}`` and ``{"base_url": ...}`` alike, and refuse a
dict that spells one field both ways with different values (``give baseUrl or base_url, not
both``). Attributes are always the snake_case names.

The ``repr`` (and ``str``) of an `Options` model masks its secret values, in every spelling
(`masked_repr_args`: the core's rule for settings, `openmolt_core.secrets.settings_secrets`):
a field named like a secret (``token``, ``secret``, ``api_key``), every non-standard header, a
URL's password. A model that cannot derive from `Options` uses `masked_repr_args` too.

A model for a free-form dict (an integration's credential config, a provider's settings) sets
``extra="allow"``: the fields it knows are read in either spelling, other keys are kept as
given. `camel_keys` writes the known fields back under their camelCase names, for templates that
read ``config.accessToken``.

The memory options the loop reads live here too (`AgentMemory`, `MemoryPart`). The option
models of the layers that read them live with those layers: `openmolt_core.agentconfig`
(``create_agent``'s ``config`` and ``integrations``, read by the assembly) and
`openmolt_core.integrations.config.EngineConfig` (the keys of an integration's config the HTTP
engine reads); their old names here still import (on first use). `create_agent` and the
``openmolt`` command's agent files use the same models, so both accept and refuse the same
things. `parse_options` turns a validation error into a `openmolt_core.errors.ConfigurationError`
naming the key (and the closest known one).

```python
class ProviderSettings(Options):
	model_config = options_config(extra="allow")
	api_key: str | None = None
	base_url: str | None = None


ProviderSettings.model_validate({"apiKey": "sk-..."}).api_key  # "sk-..."
```
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel, to_snake
from pydantic.json_schema import SkipJsonSchema

from openmolt_core._support import lazy_exports

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

	Each model is built on first use (``defer_build``): a process validates only the option
	models its configuration has (a one-shot run builds few of them). pydantic builds such a
	model thread-safely from 2.14 (the first use may come from several threads at once), hence
	openmolt-core's ``pydantic>=2.14``.

	A validation error leaves out the values given (``hide_input_in_errors``): option models
	hold secrets (a signing secret, a bot token, a client secret, a header's token, an API key),
	and pydantic's text repeats each wrong ``input_value``, a secret given in the wrong shape or
	under a misspelled key whole. The error still names each field and what is wrong with it;
	`parse_options` and the agent files say which value they refuse where it is safe to.

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
		defer_build=True,
		hide_input_in_errors=True,
	)


def masked_repr_args(
	model: BaseModel, args: Iterable[tuple[str | None, Any]]
) -> Iterator[tuple[str | None, Any]]:
	"""A model's ``repr`` arguments with its secret values masked, in every spelling.

	Its secrets are what the core's rule for settings finds in its fields and extras
	(`openmolt_core.secrets.settings_secrets`: a value under a name holding a hint such as
	``token``, ``secret`` or ``key``; every header's value but a few standard ones, and the
	credential part of ``Bearer <token>``; a URL's password and secret query values; nested
	mappings too). A nested model masks its own (its ``repr`` is its own).

	Args:
		model: The model (``self`` in a ``__repr_args__``).
		args: What pydantic's ``__repr_args__`` gives.
	"""
	from openmolt_core._support.masking import mask_deep, settings_secrets

	data = dict(model)  # the fields (an excluded one too) and the extras, as they are
	secrets = frozenset(settings_secrets(data))
	for name, value in args:
		if not secrets or isinstance(value, BaseModel) or value is None:
			yield name, value
		else:
			yield name, mask_deep(value, secrets)


class Options(BaseModel):
	"""Base of every option model: each field by its snake_case name or its camelCase alias.

	A field given in both spellings with different values is refused; with the same value it is
	taken once. Subclasses change ``extra`` or ``frozen`` with `options_config`. Its ``repr``
	and ``str`` mask its secrets (`masked_repr_args`).
	"""

	model_config: ClassVar[ConfigDict] = options_config()

	def __repr_args__(self) -> Any:
		"""Pydantic's ``repr`` arguments, with the secret values masked (`masked_repr_args`)."""
		return masked_repr_args(self, super().__repr_args__())

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


def read_model_config(value: ModelConfig | Mapping[str, Any], where: str) -> ModelConfig:
	"""Read a model configuration: a `ModelConfig`, or a dict of its settings.

	One reading for ``create_agent(model_config=...)`` and ``agent.model_config = ...``.

	Args:
		value: What was given.
		where: Who was given it, for the message (``create_agent``, ``agent.model_config``).

	Raises:
		ConfigurationError: It is neither, or a setting is unknown (the nearest named) or of
			the wrong type (what it must be, and what was given).
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
		fields = ModelConfig.model_fields
		unknown: list[str] = []
		wrong: dict[str, tuple[list[str], Any]] = {}  # per key: what it must be (a union's each)
		for error in exc.errors():
			key = str(error["loc"][0]) if error["loc"] else ""
			if error["type"] == "extra_forbidden":
				from openmolt_core._support.suggest import typo_of

				close = typo_of(key, fields)
				hint = f"; did you mean {close!r}?" if close else ""
				unknown.append(f"unknown key {key!r}{hint} (allowed: {', '.join(fields)})")
			else:
				must = str(error["msg"]).removeprefix("Input should be ").split(", unable")[0]
				wrong.setdefault(key, ([], error.get("input")))[0].append(must)
		problems = unknown + [
			f"{key} must be {' or '.join(musts)} (got {shown(given)})"
			for key, (musts, given) in wrong.items()
		]
		raise ConfigurationError(f"{where}: model_config: " + "; ".join(problems)) from None


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
	from openmolt_core._support.words import shown  # loaded by an error only

	out: list[str] = []
	for error in exc.errors():
		if error["loc"] and error["loc"][0] in ("max_cost", "maxCost"):  # dollars, not seconds
			text = f"{where}[{error['loc'][0]!r}] must be US dollars > 0 (maxCost: 0.5), got "
			if not any(o.startswith(text) for o in out):
				out.append(f"{text}{shown(error.get('input'), error['loc'])}")
			continue
		path = "".join(f"[{p!r}]" for p in error["loc"])
		if error["type"] == "extra_forbidden":
			import difflib  # only for an error message

			# The key is unknown to the model it was given in: the option's, or one inside it
			# (``credential``'s keys, not the integration entry's).
			inner, keys = _nested(model, error["loc"][:-1])
			at = where + "".join(f"[{p!r}]" for p in keys)
			if inner is None:  # not an options model there: no list to offer
				out.append(f"{at}: unknown key {error['loc'][-1]!r}")
				continue
			fields = inner.model_fields
			known = sorted({n for f, field in fields.items() for n in (f, field.alias) if n})
			close = difflib.get_close_matches(str(error["loc"][-1]), known, n=1)
			hint = f"; did you mean {close[0]!r}?" if close else ""
			names = ", ".join(f for f in fields)
			out.append(f"{at}: unknown key {error['loc'][-1]!r}{hint} (allowed: {names})")
		else:
			what = _PLAIN.get(error["type"]) if len(error["loc"]) == 1 else None
			text = what or f"is wrong: {error['msg']}"
			out.append(f"{where}{path} {text}, got {shown(error.get('input'), error['loc'])}")
	return out


def _nested(
	model: type[BaseModel], parts: Iterable[Any]
) -> tuple[type[BaseModel] | None, list[Any]]:
	"""The options model at ``parts`` inside ``model``, or None; and the parts that name keys.

	A union's member (``MemoryPart`` in ``memory.long_term``) is a part pydantic adds: it names
	the member it tried, not a key.
	"""
	import typing

	members: tuple[Any, ...] = ()
	keys: list[Any] = []
	found: type[BaseModel] | None = model
	for part in parts:
		member = next((m for m in members if getattr(m, "__name__", None) == part), None)
		if member is not None:
			found, members = member, ()
			continue
		keys.append(part)
		if found is None:
			continue
		fields = found.model_fields
		field = fields.get(str(part)) or next((f for f in fields.values() if f.alias == part), None)
		members = tuple(
			arg
			for arg in (
				() if field is None else (field.annotation, *typing.get_args(field.annotation))
			)
			if isinstance(arg, type) and issubclass(arg, BaseModel)
		)
		found = members[0] if members else None
	return found, keys


class MemoryPart(Options):
	"""One memory's initial content, and who hears its updates.

	Long-term memory is each end user's: a run for a user (``agent.run(..., user=...)``) reads
	and writes that user's, which starts empty; a run for no user reads and writes the agent's
	own, which starts from ``data`` (docs/guides/agents.md#memory).

	Attributes:
		data: The initial text (any other JSON value is written as JSON): of the agent's own
			long-term memory, which runs for no user read (or of every run's, when ``shared``).
		on_update: Called (sync or async) with the new text after each update (Python only);
			one with an ``update_id`` parameter gets the update's id too, the same when a
			durable run calls it again after a crash (docs/guides/durable.md); one with an
			``untrusted`` parameter is told whether the run that wrote it had read untrusted
			content (keep it with the text, and give it back as ``untrusted``); one with a
			``user`` parameter is told whose memory it is (the run's user; None: the agent's).
			Long-term memory's callback without one (``**kwargs`` is not one) is not called for
			a user's runs (it would keep that user's text as the agent's): a warning says so,
			once.
		untrusted: ``data`` was written by a run that had read untrusted content (what
			``on_update`` was told): a run that starts from it starts tainted, so its outbound
			calls go through the taint policy (docs/guides/safety.md).
		shared: Long-term memory only: one memory for every run of the agent, whoever it acts
			for (what one user's run writes, another user's reads). Default: each user's own.
	"""

	data: Any = ""
	on_update: SkipJsonSchema[Callable[[str], Any] | None] = Field(default=None, exclude=True)
	untrusted: bool = False
	shared: bool = False


class AgentMemory(Options):
	"""``create_agent(memory=...)``: initial long- and short-term memory.

	Attributes:
		long_term: Memory that outlives a run (``longTerm``): text or a `MemoryPart`. Each end
			user's own, the agent's for runs for no user; one for all with ``shared``.
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


# The option models of the layers that read them, under their old names here (loaded on first
# use; not in __all__: a star import does not load the assembly or the HTTP engine).
_HOMES: Mapping[str, str] = {
	"AgentConfig": "openmolt_core.agentconfig",
	"EngineConfig": "openmolt_core.integrations.config",
	"IntegrationCredential": "openmolt_core.agentconfig",
	"IntegrationEntry": "openmolt_core.agentconfig",
	# the rule every path option follows (the durable backend's store checks its file with it)
	"path_problem": "openmolt_core._support.paths",
}

__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), _HOMES)
