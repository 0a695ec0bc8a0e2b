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

```python
class ProviderSettings(Options):
	model_config = options_config(extra="allow")
	api_key: str | None = None
	base_url: str | None = None


ProviderSettings.model_validate({"apiKey": "sk-..."}).api_key  # "sk-..."
```
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic.alias_generators import to_camel

__all__ = ["Options", "camel", "camel_keys", "options_config"]


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


def camel_keys(options: Options) -> dict[str, Any]:
	"""An options model as a dict: its set fields under their camelCase names, extras as given.

	Args:
		options: A validated model.
	"""
	return options.model_dump(by_alias=True, exclude_unset=True)
