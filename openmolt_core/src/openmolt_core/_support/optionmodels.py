"""Option models that accept each name in camelCase and in snake_case: the mechanism.

The spec writes options in camelCase (``baseUrl``), Python code in snake_case (``base_url``).
`Options` is the base of every option model (`openmolt_core.options` re-exports these names):
pydantic's alias generator gives each field its camelCase alias, so ``{"baseUrl": ...}`` and
``{"base_url": ...}`` validate alike, and a dict that spells one field both ways with different
values is refused; attributes are the snake_case names. The ``repr`` (and ``str``) masks the
secret values in every spelling (`masked_repr_args`, which a model that cannot derive from
`Options` uses too): a field named like a secret, every non-standard header, a URL's password.
A model for a free-form dict (a credential config, a provider's settings) sets
``extra="allow"``: its known fields are read in either spelling, other keys kept as given;
`camel_keys` writes the known fields back in camelCase, for templates (``config.accessToken``).
`problems` turns a validation error into messages that name each key.

```python
class ProviderSettings(Options):
	model_config = options_config(extra="allow")
	api_key: str | None = None


ProviderSettings.model_validate({"apiKey": "sk-..."}).api_key  # "sk-..."
```

A library with no agent concept: pydantic models and dicts in, models, dicts and messages out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic.alias_generators import to_camel, to_snake

__all__ = [
	"Options",
	"camel",
	"camel_keys",
	"masked_repr_args",
	"options_config",
	"problems",
	"setting_problems",
	"snake_keys",
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


_PLAIN = {
	"int_type": "must be a whole number >= 1",
	"int_from_float": "must be a whole number >= 1",
	"greater_than_equal": "must be a whole number >= 1",
	"float_type": "must be seconds > 0",
	"greater_than": "must be seconds > 0",
	"bool_type": "must be True or False",
}


def problems(model: type[Options], exc: ValidationError, where: str) -> list[str]:
	"""A validation error of ``model`` as messages that name each key, the closest known one.

	What `openmolt_core.options.parse_options` raises as one error.

	Args:
		model: The options model validated.
		exc: Its validation error.
		where: Where the options were given, for the messages (``create_agent: config``).
	"""
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


def setting_problems(model: type[BaseModel], exc: ValidationError) -> list[str]:
	"""A validation error of a flat, closed ``model`` as messages that name each key.

	An unknown key names the nearest known one and the allowed keys; a key of the wrong type
	says what it must be (each member of a union) and what was given.

	Args:
		model: The model validated (``extra="forbid"``).
		exc: Its validation error.
	"""
	from openmolt_core._support.suggest import typo_of  # loaded by an error only
	from openmolt_core._support.words import shown

	fields = model.model_fields
	unknown: list[str] = []
	wrong: dict[str, tuple[list[str], Any]] = {}  # per key: what it must be (a union's each)
	for error in exc.errors():
		key = str(error["loc"][0]) if error["loc"] else ""
		if error["type"] == "extra_forbidden":
			close = typo_of(key, fields)
			hint = f"; did you mean {close!r}?" if close else ""
			unknown.append(f"unknown key {key!r}{hint} (allowed: {', '.join(fields)})")
		else:
			must = str(error["msg"]).removeprefix("Input should be ").split(", unable")[0]
			wrong.setdefault(key, ([], error.get("input")))[0].append(must)
	return unknown + [
		f"{key} must be {' or '.join(musts)} (got {shown(given)})"
		for key, (musts, given) in wrong.items()
	]


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
