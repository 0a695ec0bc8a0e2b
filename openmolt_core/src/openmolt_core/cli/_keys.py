"""Keys for the command: the environment wins over a ``.env`` file, then the key store, then the file.

A provider's key is ``OPENMOLT_<NAME>_API_KEY``; every config key an integration reads is
``OPENMOLT_<ID>_<KEY>`` (``OPENMOLT_SLACK_TOKEN``, ``OPENMOLT_S3_SECRET_ACCESS_KEY``: `env_var`).
The key store is ``openmolt keys set`` (`openmolt_core.cli._keystore`). Where each key came from is
reported in verbose mode; a value never is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmolt_core._envvars import env_var  # one spelling of the variable names
from openmolt_core.errors import ConfigurationError

__all__ = [
	"KeyReport",
	"apply_dotenv",
	"default_dotenv",
	"env_var",
	"ignored_variables",
	"read_dotenv",
	"resolve_keys",
	"snapshot_environ",
]

_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def read_dotenv(path: Path) -> dict[str, str]:
	r"""Parse a ``.env`` file: ``KEY=value`` lines, ``export`` allowed, ``#`` comments, quotes.

	Nothing is expanded or executed. Double-quoted values understand ``\\n``, ``\\t``, ``\\"``
	and ``\\\\``; single-quoted ones are literal; an unquoted value ends at `` #``.

	Raises:
		ConfigurationError: A line is not ``KEY=value``; the message gives its number, not its text.
	"""
	values: dict[str, str] = {}
	# utf-8-sig: a BOM, as Notepad saves, is not part of the first name.
	for number, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), 1):
		if not line.strip() or line.lstrip().startswith("#"):
			continue
		match = _LINE.match(line)
		if match is None:
			raise ConfigurationError(f"{path}:{number}: not a KEY=value line")
		key, value = match.groups()
		if len(value) >= 2 and value[0] == value[-1] == "'":
			value = value[1:-1]
		elif len(value) >= 2 and value[0] == value[-1] == '"':
			value = re.sub(r"\\(.)", lambda m: _ESCAPES.get(m[1], m[0]), value[1:-1])
		else:
			value = re.split(r"\s+#", value, maxsplit=1)[0].strip()
		values[key] = value
	return values


def apply_dotenv(values: Mapping[str, str], environ: MutableMapping[str, str]) -> None:
	"""Add ``.env`` values to the environment without overriding what is already set."""
	for key, value in values.items():
		environ.setdefault(key, value)


@dataclass(frozen=True, slots=True)
class KeyReport:
	"""Where one key came from.

	Args:
		owner: ``openai`` or ``integrations.notion``.
		variable: The environment variable that would hold it.
		source: A description of the source, or None when no key was found.
	"""

	owner: str
	variable: str
	source: str | None

	def line(self) -> str:
		"""One line for verbose output; never the value."""
		if self.source is None:
			return f"no key for {self.owner} (set {self.variable})"
		return f"key for {self.owner}: from {self.source}"


def _file_key(settings: Mapping[str, Any], key: str) -> tuple[str, Any] | None:
	spellings = ("apiKey", "api_key") if key == "apiKey" else (key,)
	for name in spellings:
		if settings.get(name):
			return name, settings[name]
	return None


def resolve_keys(
	owners: Iterable[tuple[str, str, dict[str, Any]]],
	*,
	environ: Mapping[str, str],
	dotenv: Mapping[str, str],
	dotenv_path: Path | None,
	file: Path | None,
	stored: Mapping[str, str] | None = None,
	stored_path: Path | None = None,
	keys_of: Callable[[str], Sequence[str]] | None = None,
) -> list[KeyReport]:
	"""Put the winning value of each key into its settings dict, in place.

	Args:
		owners: ``(label, name, settings)``: e.g. ``("openai", "openai", {...})`` or
			``("integrations.notion", "notion", {...})``. Provider settings get ``api_key``;
			integration configs get each key they read under its own name (``apiKey``,
			``token``, ``secretAccessKey``), which is what their templates read.
		environ: The process environment as it was before the ``.env`` file was applied.
		dotenv: The ``.env`` values.
		dotenv_path: The ``.env`` file, for the report.
		file: The agent file, for the report.
		stored: The key store's values (``openmolt keys set``), by variable name.
		stored_path: The key store's file, for the report.
		keys_of: The config keys an integration reads, by id (default: ``apiKey`` only).

	Returns:
		One report per provider; per integration, one per key found (and ``apiKey`` always).
	"""
	store = stored or {}
	reports = []
	for label, name, settings in owners:
		integration = label.startswith("integrations.")
		keys: Sequence[str] = ("apiKey",)
		if integration and keys_of is not None:
			keys = keys_of(name) or ("apiKey",)
		for key in keys:
			variable = env_var(name, key)
			target = key if integration else "api_key"
			found = _file_key(settings, key)
			source: str | None = None
			if environ.get(variable):
				value, source = environ[variable], f"environment variable {variable}"
			elif dotenv.get(variable):
				value, source = dotenv[variable], f"{dotenv_path} ({variable})"
			elif store.get(variable):
				value, source = store[variable], f"the key store {stored_path} ({variable})"
			elif found is not None:
				where = label if integration else f"llmProviders.{label}"
				value, source = found[1], f"{file} ({where}.{found[0]})"
			if source is not None:
				if key == "apiKey":
					for alias in ("apiKey", "api_key"):
						settings.pop(alias, None)
				settings[target] = value
			if source is not None or key == "apiKey":
				owner = label if key == "apiKey" else f"{label}.{key}"
				reports.append(KeyReport(owner=owner, variable=variable, source=source))
	return reports


def ignored_variables(
	integration: str, keys: Sequence[str], *sources: Mapping[str, str]
) -> list[str]:
	"""``OPENMOLT_<ID>_*`` variables that are set but name no key the integration reads.

	``OPENMOLT_SLACK_API_KEY`` for Slack, which reads ``token``: a warning, not silence.

	Args:
		integration: The integration id.
		keys: The config keys it reads.
		sources: The environment, the ``.env`` values, the key store.
	"""
	from openmolt_core._envvars import key_of_variable

	known = {env_var(integration, k) for k in keys}
	out = []
	for values in sources:
		for variable in values:
			if variable in known or variable in out or not values[variable]:
				continue
			if key_of_variable(integration, variable) is not None:
				out.append(variable)
	return out


def default_dotenv(explicit: str | None) -> Path | None:
	"""The ``.env`` file to read: ``--env-file``, else ``./.env`` when it exists.

	Raises:
		ConfigurationError: An explicit file does not exist.
	"""
	if explicit is not None:
		path = Path(explicit)
		if not path.is_file():
			raise ConfigurationError(f"{path}: no such .env file")
		return path
	path = Path(".env")
	return path if path.is_file() else None


def snapshot_environ() -> dict[str, str]:
	"""A copy of the environment, before the ``.env`` file is applied."""
	return dict(os.environ)
