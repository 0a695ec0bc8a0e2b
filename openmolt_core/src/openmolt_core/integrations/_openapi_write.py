r"""An imported integration written out as JSON, or as a Python module built from literals only.

Every value in the module comes from the document (titles, descriptions, enums, defaults, URLs)
and is written with `repr`, so it is a Python literal whatever it holds (quotes, triple quotes,
backslashes, NUL, ``\r``, U+2028); the docstring is written by `ast.unparse`. No name in the module
comes from the document: the classes and keywords are ours, and the finished source is parsed
again and refused unless it is only literals, our constructors and the fixed hook
(`check_module`).
"""

from __future__ import annotations

import ast
import json
import keyword
import math
from typing import Any

from openmolt_core.errors import ConfigurationError
from openmolt_core.integrations.model import (
	ApiSetup,
	AuthCredential,
	BasicCredential,
	BearerCredential,
	CustomCredential,
	HttpTool,
	Integration,
	OAuth2Credential,
)

__all__ = ["check_module", "to_json", "to_module"]

_MODELS: tuple[type[Any], ...] = (
	ApiSetup,
	AuthCredential,
	BasicCredential,
	BearerCredential,
	CustomCredential,
	HttpTool,
	OAuth2Credential,
)
_CALLABLE = {"Integration", "register", *(m.__name__ for m in _MODELS)}
_NAMES = {*_CALLABLE, "INTEGRATION", "Any", "hookimpl", "annotations"}
_NODES = (
	ast.Module,
	ast.Expr,
	ast.Constant,
	ast.ImportFrom,
	ast.alias,
	ast.Assign,
	ast.Name,
	ast.Store,
	ast.Load,
	ast.Call,
	ast.keyword,
	ast.Dict,
	ast.List,
	ast.UnaryOp,
	ast.USub,
	ast.FunctionDef,
	ast.arguments,
	ast.arg,
)
_MODULES = {"__future__", "typing", "openmolt_core", "openmolt_core.integrations"}


def to_json(integration: Integration) -> str:
	"""The integration as the JSON ``register_integration`` accepts (camelCase keys)."""
	data = integration.model_dump(mode="json", by_alias=True, exclude_defaults=True)
	return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _keyword(name: str) -> str:
	# Field names are ours (pydantic models), never the document's; checked all the same.
	if not name.isidentifier() or keyword.iskeyword(name):
		raise ConfigurationError(f"cannot write field {name!r} as a keyword argument")
	return name


def _literal(value: Any, level: int) -> str:
	"""``value`` as Python source: literals and our model constructors, nothing pasted."""
	pad, inner = "\t" * level, "\t" * (level + 1)
	if type(value) in _MODELS:
		fields = value.model_dump(exclude_defaults=True)
		name = type(value).__name__
		if not fields:
			return f"{name}()"
		body = "".join(
			f"{inner}{_keyword(k)}={_literal(v, level + 1)},\n" for k, v in fields.items()
		)
		return f"{name}(\n{body}{pad})"
	if isinstance(value, dict):
		if not value:
			return "{}"
		body = "".join(
			f"{inner}{_literal(k, level + 1)}: {_literal(v, level + 1)},\n"
			for k, v in value.items()
		)
		return f"{{\n{body}{pad}}}"
	if isinstance(value, (list, tuple)):
		if not value:
			return "[]"
		if all(isinstance(v, str) for v in value) and sum(len(v) + 4 for v in value) < 80:
			return "[" + ", ".join(repr(v) for v in value) + "]"
		body = "".join(f"{inner}{_literal(v, level + 1)},\n" for v in value)
		return f"[\n{body}{pad}]"
	if value is None or isinstance(value, (str, bool, int)):
		return repr(value)
	if isinstance(value, float) and math.isfinite(value):
		return repr(value)
	raise ConfigurationError(
		f"cannot write {type(value).__name__} value {str(value)[:40]!r} into the module; "
		"an imported document holds JSON values only"
	)


def _imports(integration: Integration) -> list[str]:
	kinds = {type(cred).__name__ for cred in integration.credential_setup}
	return sorted({"ApiSetup", "HttpTool", "Integration", *kinds})


def check_module(source: str) -> None:
	"""Refuse generated source that is anything but literals, our constructors and the hook.

	Args:
		source: The module text `to_module` wrote.

	Raises:
		ConfigurationError: The source holds another statement, name or expression (a bug in
			the writer: nothing from the document may become code).
	"""
	try:
		tree = ast.parse(source)
	except SyntaxError as exc:
		raise ConfigurationError(f"the generated module does not parse: {exc.msg}") from None
	for node in ast.walk(tree):
		if not isinstance(node, _NODES):
			raise ConfigurationError(
				f"the generated module holds a {type(node).__name__} at line "
				f"{getattr(node, 'lineno', '?')}; only data may come from the document"
			)
		if isinstance(node, ast.Name) and node.id not in _NAMES:
			raise ConfigurationError(f"the generated module names {node.id!r}")
		if isinstance(node, ast.Call) and not (
			isinstance(node.func, ast.Name) and node.func.id in _CALLABLE
		):
			raise ConfigurationError("the generated module calls something other than a model")
		if isinstance(node, ast.ImportFrom) and node.module not in _MODULES:
			raise ConfigurationError(f"the generated module imports {node.module!r}")
	functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
	if [f.name for f in functions] != ["register_integrations"]:
		raise ConfigurationError("the generated module defines functions other than the hook")


def to_module(integration: Integration, *, source: str = "") -> str:
	"""The integration as a Python module a person can read and edit (tabs, one tool per block).

	The module defines ``INTEGRATION`` and the ``register_integrations`` hook, so it works as a
	plugin (an ``openmolt.integrations`` entry point) or with ``om.register_integration``. Every
	value is a Python literal (`repr`), whatever the document holds.

	Args:
		integration: The integration (from `openmolt_core.integrations.openapi.from_openapi`).
		source: The document's file name, for the module docstring.

	Raises:
		ConfigurationError: A value cannot be written as a literal.
	"""
	version = f" {integration.api_version}" if integration.api_version else ""
	doc = (
		f"{integration.name}{version}, imported from {source or 'an OpenAPI document'} by "
		"`openmolt import-openapi`.\n\n"
		"Every tool is plain data: edit the descriptions, drop the tools you do not need, and\n"
		"register it with `om.register_integration(INTEGRATION.id, INTEGRATION)`.\n"
	)
	docstring = ast.unparse(ast.Module(body=[ast.Expr(ast.Constant(doc))], type_ignores=[]))
	header = (
		f"{docstring}\n\n"
		"from __future__ import annotations\n\n"
		"from typing import Any\n\n"
		"from openmolt_core import hookimpl\n"
		f"from openmolt_core.integrations import {', '.join(_imports(integration))}\n\n"
	)
	fields = integration.model_dump(
		exclude_defaults=True, exclude={"tools", "credential_setup", "api_setup"}
	)
	lines = [f"\t{_keyword(k)}={_literal(v, 1)},\n" for k, v in fields.items()]
	lines.append(f"\tapi_setup={_literal(integration.api_setup, 1)},\n")
	if integration.credential_setup:
		lines.append(f"\tcredential_setup={_literal(list(integration.credential_setup), 1)},\n")
	lines.append(f"\ttools={_literal(list(integration.tools), 1)},\n")
	body = "INTEGRATION = Integration(\n" + "".join(lines) + ")\n"
	hook = (
		"\n\n@hookimpl\n"
		"def register_integrations(register: Any) -> None:\n"
		'\t"""Register the integration (when this module is an entry point)."""\n'
		"\tregister(INTEGRATION)\n"
	)
	text = header + body + hook
	check_module(text)
	return text
