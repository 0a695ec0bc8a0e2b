r"""Built-in guardrails named in data: the ``guardrails`` list of an agent file.

```json
"guardrails": [
	{"use": "pii_redaction"},
	{"use": "max_size", "limit": 20000},
	{"use": "prompt_injection", "action": "refuse"},
	{"use": "json_schema", "on": "tool_call", "tools": ["gmail.sendMessage"], "schema": {...}}
]
```

Each entry names a built-in with ``use``; the other keys are its options (camelCase accepted).
Guardrails of your own are Python: give them to ``create_agent(guardrails=[...])``.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, get_type_hints

from openmolt_core.errors import ConfigurationError
from openmolt_core.guardrails.base import Guardrail
from openmolt_core.guardrails.checks import json_schema, max_size
from openmolt_core.guardrails.injection import prompt_injection
from openmolt_core.guardrails.pii import pii_redaction

__all__ = ["BUILTINS", "from_spec"]

BUILTINS: dict[str, Callable[..., Guardrail]] = {
	"json_schema": json_schema,
	"max_size": max_size,
	"pii_redaction": pii_redaction,
	"prompt_injection": prompt_injection,
}
"""The built-ins an agent file can name, by ``use``."""


def _snake(key: str) -> str:
	return re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()


@functools.cache
def _options(name: str) -> Any:
	"""A model of built-in ``name``'s options: its parameters, with JSON's types.

	Strict: ``"10"`` is not a number and ``"no"`` not a boolean, as elsewhere in an agent file.
	Each field is named ``o_<option>`` and aliased to the option (``schema`` would shadow
	``BaseModel.schema``); errors name the alias.
	"""
	from pydantic import ConfigDict, Field, create_model

	make = BUILTINS[name]
	hints = get_type_hints(make)
	fields: dict[str, Any] = {
		f"o_{p.name}": (
			hints[p.name],
			Field(... if p.default is p.empty else p.default, alias=p.name),
		)
		for p in inspect.signature(make).parameters.values()
	}
	return create_model(f"{name}_options", __config__=ConfigDict(strict=True), **fields)


def _check_types(
	name: str, options: Mapping[str, Any], given: Mapping[str, str], where: str
) -> None:
	"""Refuse an option of the wrong JSON type, or a required one left out, naming it.

	Args:
		name: The built-in.
		options: Its options, by parameter name.
		given: Each parameter's key as the entry spells it (``onlyTrifecta``, ``only_trifecta``).
		where: The entry's place (``guardrails[2]``).
	"""
	from pydantic import ValidationError

	try:
		text = json.dumps(dict(options), ensure_ascii=False)
	except (TypeError, ValueError):
		return  # Python objects in an entry given from code: the built-in checks them
	try:
		_options(name).model_validate_json(text)
	except ValidationError as exc:
		problems = []
		for error in exc.errors():
			head, *rest = error["loc"]
			key = given.get(str(head), str(head))
			if error["type"] == "missing":
				problems.append(f"{where} ({name}): missing required option {key!r}")
				continue
			path = key + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in rest)
			got = json.dumps(error.get("input"), ensure_ascii=False)
			got = got if len(got) <= 60 else got[:57] + "..."
			problems.append(f"{where}.{path}: {error['msg']} (got {got})")
		raise ConfigurationError("; ".join(problems)) from None


def from_spec(spec: Mapping[str, Any], where: str = "guardrails") -> Guardrail:
	"""Make a built-in guardrail from its entry in an agent file.

	Args:
		spec: ``{"use": name, **options}``.
		where: The entry's place, for messages (``guardrails[2]``).

	Raises:
		ConfigurationError: An unknown built-in or option, or a bad value (named).
	"""
	if not isinstance(spec, Mapping) or not isinstance(spec.get("use"), str):
		raise ConfigurationError(
			f'{where}: an entry is {{"use": name, ...options}}; names: {", ".join(BUILTINS)}'
		)
	name = spec["use"]
	make = BUILTINS.get(name)
	if make is None:
		raise ConfigurationError(
			f"{where}: {name!r} is no built-in guardrail; use one of {', '.join(BUILTINS)}"
		)
	options = {_snake(str(k)): v for k, v in spec.items() if k != "use"}
	given = {_snake(str(k)): str(k) for k in spec if k != "use"}
	allowed = [p for p in inspect.signature(make).parameters]
	unknown = sorted(given[k] for k in set(options) - set(allowed))  # as the entry spells them
	if unknown:
		raise ConfigurationError(
			f"{where} ({name}): unknown option(s) {unknown}; allowed: {', '.join(allowed)}"
		)
	for key in ("tools", "labels", "kinds"):
		if isinstance(options.get(key), str):
			options[key] = [options[key]]
	_check_types(name, options, given, where)
	try:
		return make(**options)
	except TypeError as exc:  # a required option left out
		raise ConfigurationError(f"{where} ({name}): {exc}") from None
