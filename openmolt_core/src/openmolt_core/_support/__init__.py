"""Libraries with no agent concept: JSON Schema validation and fitting, safe JSON, small helpers.

The lowest layer of `openmolt_core` (importlinter.toml, "support"): its modules import nothing
else of the package, and know nothing of agents, tools or runs. The package is private: what of
it is public is re-exported elsewhere (`openmolt_core.structured.SchemaDialect`,
`openmolt_core.tools.cancelled`).

- `jsonschema`: validate a value against a JSON Schema (through pydantic-core).
- `metaschema`: check that a schema is a valid JSON Schema.
- `schemafit`: fit a schema to a provider's dialect (`SchemaDialect`) and undo the changes on
  a value (the repairs).
- `jsonsafe`: JSON a state can always hold (strict decoding, encodable copies).
- `sync`: call sync or async code without stalling the event loop.
- `watch`: run one call while checks watch it (the first answer cancels it).
- `masking`: mask a secret in every spelling it can take (percent-encoded, base64, escaped...).
- `secretset`: the secrets a process knows (a set per owner, the keys given in code) and the
  redactors that mask them; every live one feeds the logging filter.
- `suggest`: nearest-name hints for error messages.
- `private`: folders 0700 and files 0600, whatever the umask.
- `docs`: the address on the web of a documentation page a message names.
- `paths`: whether a value given for a path can name a file (text, no NUL character).
- `webheaders`: the security headers every answer of OpenMolt's own web servers carries.

This module itself holds the lazy re-exports (`lazy_exports`, PEP 562 module attributes that
import their module on first access), the one helper ``import openmolt`` needs: the facades
(`openmolt`, `openmolt_core`) re-export names from heavier modules, and resolving each on first
use keeps ``import openmolt`` from loading pydantic, pluggy or httpx before a program needs
them; and `LazyPattern`, a regular expression compiled on its first use. Importing it loads no
other module of the package.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["LazyPattern", "lazy_exports", "loaded"]


def lazy_exports(
	namespace: dict[str, Any], exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
	"""Build a module's ``__getattr__`` and ``__dir__`` for names living in other modules.

	Args:
		namespace: The module's ``globals()``; a resolved name is cached there.
		exports: Name to the module that defines it.
	"""

	def __getattr__(name: str) -> Any:
		module = exports.get(name)
		if module is None:
			raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
		value = getattr(importlib.import_module(module), name)
		namespace[name] = value
		return value

	def __dir__() -> list[str]:
		return sorted({*namespace, *exports})

	return __getattr__, __dir__


def loaded(module: str, name: str) -> Any:
	"""A module's attribute if the module is imported already, else None; never imports it.

	For ``isinstance`` checks against a feature's class: when its module was never imported, no
	instance of the class can exist, so a plain run need not import the feature to ask.

	Args:
		module: The module's full name.
		name: The attribute.
	"""
	found = sys.modules.get(module)
	return None if found is None else getattr(found, name, None)


class LazyPattern:
	"""A regular expression compiled on its first use, not when its module is imported.

	Compiling takes tens of microseconds a pattern, paid by every process that imports the module;
	a pattern for a rare path (an error's wording, an escape a secret may take, a docstring
	format) costs nothing until that path runs. Call it for the compiled pattern:
	``_WORD().match(text)``. Two threads may both compile it once; either result is the same.

	Args:
		pattern: The regular expression.
		flags: `re` flags.
	"""

	__slots__ = ("_compiled", "_flags", "_pattern")

	def __init__(self, pattern: str, flags: int = 0) -> None:
		self._pattern = pattern
		self._flags = flags
		self._compiled: re.Pattern[str] | None = None

	def __call__(self) -> re.Pattern[str]:
		"""The compiled pattern (compiled on the first call)."""
		compiled = self._compiled
		if compiled is None:
			compiled = self._compiled = re.compile(self._pattern, self._flags)
		return compiled

	def __repr__(self) -> str:
		return f"LazyPattern({self._pattern!r})"
