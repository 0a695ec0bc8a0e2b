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

import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any

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
	allowed = [p for p in inspect.signature(make).parameters]
	unknown = sorted(set(options) - set(allowed))
	if unknown:
		raise ConfigurationError(
			f"{where} ({name}): unknown option(s) {unknown}; allowed: {', '.join(allowed)}"
		)
	for key in ("tools", "labels", "kinds"):
		if isinstance(options.get(key), str):
			options[key] = [options[key]]
	try:
		return make(**options)
	except TypeError as exc:  # a required option left out
		raise ConfigurationError(f"{where} ({name}): {exc}") from None
