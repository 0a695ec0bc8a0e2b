"""API keys for the command: the environment wins over a ``.env`` file, which wins over the file.

Where each key came from is reported in verbose mode; a value never is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmolt_core.errors import ConfigurationError
from openmolt_core.integrations.connect import env_var  # one spelling of the variable names

__all__ = [
	"KeyReport",
	"apply_dotenv",
	"default_dotenv",
	"env_var",
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
	for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
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


def _file_key(settings: Mapping[str, Any]) -> tuple[str, Any] | None:
	for name in ("apiKey", "api_key"):
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
) -> list[KeyReport]:
	"""Put the winning key into each settings dict (``api_key`` / ``apiKey``), in place.

	Args:
		owners: ``(label, name, settings)``: e.g. ``("openai", "openai", {...})`` or
			``("integrations.notion", "notion", {...})``. Provider settings get ``api_key``,
			integration configs ``apiKey`` (what their templates read).
		environ: The process environment as it was before the ``.env`` file was applied.
		dotenv: The ``.env`` values.
		dotenv_path: The ``.env`` file, for the report.
		file: The agent file, for the report.

	Returns:
		One report per owner.
	"""
	reports = []
	for label, name, settings in owners:
		variable = env_var(name)
		target = "apiKey" if label.startswith("integrations.") else "api_key"
		found = _file_key(settings)
		source: str | None = None
		if environ.get(variable):
			value, source = environ[variable], f"environment variable {variable}"
		elif dotenv.get(variable):
			value, source = dotenv[variable], f"{dotenv_path} ({variable})"
		elif found is not None:
			where = label if label.startswith("integrations.") else f"llmProviders.{label}"
			value, source = found[1], f"{file} ({where}.{found[0]})"
		if source is not None:
			for alias in ("apiKey", "api_key"):
				settings.pop(alias, None)
			settings[target] = value
		reports.append(KeyReport(owner=label, variable=variable, source=source))
	return reports


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
