r"""Reading an OpenAPI document within bounds: JSON values only, bounded depth and size.

A document is someone else's text. Reading it must end, in little memory, with JSON values or a
`ConfigurationError` that names the place:

- YAML is composed first and its aliases counted as they would expand: aliases that add more
  than `MAX_ALIAS_VALUES` values (the "billion laughs" alias bomb), or an alias inside the value
  it names, are refused before anything is built;
- nesting deeper than `MAX_NESTING` is refused (JSON, YAML and dicts alike), and so is a dict
  that contains itself;
- what YAML reads beyond JSON becomes JSON: dates become ISO strings, numeric or boolean keys
  (``200:``) become strings; binary values, sets, NaN and infinities are refused; a lone UTF-16
  surrogate (``"\ud800"`` in JSON) becomes U+FFFD.
"""

from __future__ import annotations

import datetime
import errno
import json
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from openmolt_core._support.masking import masked_excerpt, url_secrets
from openmolt_core.errors import ConfigurationError

__all__ = [
	"MAX_ALIAS_VALUES",
	"MAX_DOCUMENT_BYTES",
	"MAX_NESTING",
	"MAX_NODES",
	"load_document",
	"pointer",
]

MAX_DOCUMENT_BYTES = 128 * 1024 * 1024
"""The largest document file read (GitHub's dereferenced GHEC document, the largest known, is 78
MB): a larger one is refused by its size, before it is read, and so is a path that names no
regular file (a folder, a device such as ``/dev/zero``, a named pipe)."""

MAX_NESTING = 200
"""Containers nested deeper than this in a document are refused."""

MAX_ALIAS_VALUES = 100_000
"""Values YAML aliases may add to a document once expanded (repeating a block is fine)."""

MAX_NODES = 5_000_000
"""Values a document may hold once YAML aliases are expanded (GitHub's REST API has ~1.3M)."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def pointer(parts: tuple[str | int, ...]) -> str:
	"""A JSON pointer (``#/paths/~1pets/get``) for a place in the document.

	Args:
		parts: The keys and indexes from the root.
	"""
	return "#/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


_Where = tuple[Any, str | int] | None
"""A place in the document, built cheaply while walking: (the parent's place, the key)."""


def _parts(where: _Where) -> tuple[str | int, ...]:
	parts: list[str | int] = []
	while where is not None:
		where, key = where
		parts.append(key)
	return tuple(reversed(parts))


class _Walk:
	"""What one conversion has seen: the containers above the current one, and a count."""

	__slots__ = ("ancestors", "count")

	def __init__(self) -> None:
		self.ancestors: set[int] = set()
		self.count = 0


def _text(value: str) -> str:
	if value.isascii() or not _SURROGATE.search(value):
		return value
	return _SURROGATE.sub("\ufffd", value)


def _plain(value: Any, where: _Where, depth: int, walk: _Walk) -> Any:
	"""The value as JSON types, refusing what JSON cannot hold (see the module docstring).

	Scalars inside a container are handled in its loop: GitHub's document has 1.3 million
	values, and a call for each would take most of the import's time.
	"""
	kind = type(value)
	if kind is str:
		return _text(value)
	if value is None or kind is bool or kind is int:
		return value
	if isinstance(value, Mapping) or isinstance(value, (list, tuple)):
		if depth >= MAX_NESTING or id(value) in walk.ancestors:
			parts = _parts(where)
			raise ConfigurationError(
				f"{pointer(parts[:12])}{'/...' if len(parts) > 12 else ''}: the document nests "
				f"deeper than {MAX_NESTING} levels (or contains itself); flatten it"
			)
		walk.count += 1 + len(value)
		if walk.count > MAX_NODES:
			raise ConfigurationError(
				f"{pointer(_parts(where)[:12])}: the document holds more than {MAX_NODES:,} "
				"values; import a part of it"
			)
		walk.ancestors.add(id(value))
		try:
			mapping = isinstance(value, Mapping)
			pairs: Iterable[tuple[Any, Any]] = (
				value.items() if isinstance(value, Mapping) else enumerate(value)
			)
			out: dict[Any, Any] = {}
			for key, item in pairs:
				name = key
				if mapping and not (type(key) is str and key.isascii()):
					name = _key(key, where)
				inner = type(item)
				if inner is str:
					out[name] = item if item.isascii() else _text(item)
				elif item is None or inner is bool or inner is int:
					out[name] = item
				else:
					out[name] = _plain(item, (where, name), depth + 1, walk)
			return out if mapping else list(out.values())
		finally:
			walk.ancestors.discard(id(value))
	if isinstance(value, (bool, int)):
		return value
	if isinstance(value, str):
		return _text(str(value))
	if isinstance(value, float):
		if not math.isfinite(value):
			raise ConfigurationError(
				f"{pointer(_parts(where))}: {value} is not a JSON number; write it as a string"
			)
		return value
	if isinstance(value, (datetime.date, datetime.datetime)):
		return value.isoformat()
	raise ConfigurationError(
		f"{pointer(_parts(where))}: a {type(value).__name__} value is not JSON (YAML tags such as "
		"!!binary and !!set are not read); write it as a string"
	)


def _key(key: Any, where: _Where) -> str:
	if isinstance(key, str):
		return _text(str(key))
	if isinstance(key, bool):
		return "true" if key else "false"
	if key is None or isinstance(key, (int, float, datetime.date)):
		return "null" if key is None else str(key)
	raise ConfigurationError(f"{pointer(_parts(where))}: a {type(key).__name__} key is not JSON")


def _yaml(text: str, path: Path) -> Any:
	try:
		import yaml  # type: ignore[import-untyped, unused-ignore]  # optional
	except ImportError:
		from openmolt_core._hints import install_command

		raise ConfigurationError(
			f"{path}: reading YAML needs PyYAML; run: {install_command('pyyaml')} (or convert "
			"the document to JSON)"
		) from None
	loader = yaml.SafeLoader(text)
	try:
		node = loader.get_single_node()
		if node is None:
			return None
		_expanded_size(node, path)
		return loader.construct_document(node)
	except yaml.YAMLError as exc:
		raise ConfigurationError(f"{path}: invalid YAML: {exc}") from None
	finally:
		loader.dispose()


def _expanded_size(root: Any, path: Path) -> int:
	"""The values a composed YAML tree holds once its aliases are expanded, without expanding.

	Raises:
		ConfigurationError: The aliases add more than `MAX_ALIAS_VALUES` values (or the whole
			past `MAX_NODES`), or an alias refers to a node that contains it.
	"""
	sizes: dict[int, int] = {}
	visiting: set[int] = set()
	stack: list[tuple[Any, bool]] = [(root, False)]
	while stack:
		node, done = stack.pop()
		if id(node) in sizes:
			continue
		children = _children(node)
		if done:
			visiting.discard(id(node))
			sizes[id(node)] = 1 + sum(sizes[id(c)] for c in children)
			if sizes[id(node)] > MAX_NODES or sizes[id(node)] - len(sizes) > MAX_ALIAS_VALUES:
				raise ConfigurationError(
					f"{path}:{node.start_mark.line + 1}: the YAML aliases here expand to more "
					f"than {MAX_ALIAS_VALUES:,} extra values (an alias bomb?); write the values "
					"out or use $ref"
				)
			continue
		if id(node) in visiting:
			raise ConfigurationError(
				f"{path}:{node.start_mark.line + 1}: a YAML alias here refers to a value that "
				"contains it; a document is a tree"
			)
		visiting.add(id(node))
		stack.append((node, True))
		stack.extend((c, False) for c in children if id(c) not in sizes)
	return sizes[id(root)]


def _children(node: Any) -> list[Any]:
	value = node.value
	if not isinstance(value, list):
		return []
	out: list[Any] = []
	for item in value:
		if isinstance(item, tuple):
			out.extend(item)
		else:
			out.append(item)
	return out


def load_document(source: str | Path | Mapping[str, Any]) -> dict[str, Any]:
	"""Read an OpenAPI document: a dict, or a JSON or YAML file, as JSON values.

	Raises:
		ConfigurationError: The file cannot be read or parsed, it nests too deeply or expands
			too far, or it is not OpenAPI 3.
	"""
	if isinstance(source, Mapping):
		raw: Any = source
	else:
		given = str(source)
		if re.match(r"(?i)https?:/", given):
			given = re.sub(r"(?i)^(https?):/(?!/)", r"\1://", given)  # a Path keeps one slash
			url = masked_excerpt(given, 200, url_secrets(given))  # its password, its ?token=
			raise ConfigurationError(
				f"{url!r} is a URL; the importer reads a file (or a dict): download it "
				f"first (curl -o openapi.json '{url}') and give the file"
			)
		if "\x00" in given:
			raise ConfigurationError(
				f"{given[:200]!r} cannot name an OpenAPI document (it holds a NUL character)"
			)
		from openmolt_core._support.paths import read_text

		path = Path(source)
		try:  # a BOM, as Notepad saves
			text = read_text(path, limit=MAX_DOCUMENT_BYTES, encoding="utf-8-sig")
		except (
			OSError
		) as exc:  # a FileRefused says what the path is (a pipe, a device), or its size
			hint = ""
			if exc.errno == errno.EFBIG:
				hint = (
					"; import a part of it (or a document that is not dereferenced: $refs keep it "
					"small)"
				)
			raise ConfigurationError(
				f"{path}: cannot read the OpenAPI document: {exc.strerror or exc}{hint}"
			) from None
		except UnicodeDecodeError as exc:
			from openmolt_core._support.textfile import not_utf8

			raise ConfigurationError(not_utf8(str(path), exc)) from None
		try:
			if path.suffix.lower() in (".yaml", ".yml"):
				raw = _yaml(text, path)
			else:
				raw = _json(text, path)
				if isinstance(raw, dict) and not _SURROGATE_ESCAPE.search(text):
					return _openapi_3(raw)  # json.loads made JSON values; _json checked depth
		except RecursionError:
			raise ConfigurationError(
				f"{path}: the document nests deeper than the parser can read; flatten it"
			) from None
	if not isinstance(raw, Mapping):
		raise ConfigurationError("an OpenAPI document is a JSON object")
	return _openapi_3(_plain(raw, None, 0, _Walk()))


def _json(text: str, path: Path) -> Any:
	"""JSON text as values, refusing NaN and nesting deeper than `MAX_NESTING` (C-speed checks)."""

	def constant(name: str) -> Any:
		raise ConfigurationError(f"{path}: {name} is not a JSON number; write it as a string")

	try:
		raw = json.loads(text, parse_constant=constant)
	except json.JSONDecodeError as exc:
		raise ConfigurationError(
			f"{path}:{exc.lineno}: invalid JSON: {exc.msg} (YAML files must end in .yaml)"
		) from None
	brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
	depth = deepest = 0
	for char in brackets:
		depth += 1 if char in "[{" else -1
		deepest = max(deepest, depth)
	if deepest > MAX_NESTING:
		raise ConfigurationError(
			f"{path}: the document nests {deepest} levels deep, more than {MAX_NESTING}; flatten it"
		)
	return raw


def _openapi_3(document: dict[str, Any]) -> dict[str, Any]:
	version = str(document.get("openapi", ""))
	if not version.startswith("3."):
		found = f"swagger {document['swagger']}" if "swagger" in document else repr(version or None)
		raise ConfigurationError(
			f"only OpenAPI 3.x documents are supported, this one is {found}; convert it first "
			"(for Swagger 2.0: swagger2openapi)"
		)
	return document
