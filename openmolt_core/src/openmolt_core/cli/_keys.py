"""Keys for the command: the environment wins over a ``.env`` file, then the file, then the key store.

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

from openmolt_core._envvars import (  # one spelling of the variable names
	KEYED_PROVIDERS,
	blank,
	env_var,
)
from openmolt_core.errors import ConfigurationError

__all__ = [
	"MAX_DOTENV_BYTES",
	"KeyReport",
	"apply_dotenv",
	"default_dotenv",
	"env_var",
	"ignored_variables",
	"read_dotenv",
	"rejected_key_source",
	"resolve_keys",
	"snapshot_environ",
]

MAX_DOTENV_BYTES = 1 << 20
"""The largest ``.env`` file read (one of a few keys is under a kilobyte; certificates fit too)."""

_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def read_dotenv(path: Path) -> dict[str, str]:
	r"""Parse a ``.env`` file: ``KEY=value`` lines, ``export`` allowed, ``#`` comments, quotes.

	Nothing is expanded or executed. Double-quoted values understand ``\\n``, ``\\t``, ``\\"``
	and ``\\\\``; single-quoted ones are literal; an unquoted value ends at `` #``.

	Raises:
		ConfigurationError: The file cannot be read (it is missing, not a regular file, or over
			`MAX_DOTENV_BYTES`), or a line is not ``KEY=value``; the message gives its number,
			not its text.
	"""
	from openmolt_core._support.paths import read_text

	values: dict[str, str] = {}
	# utf-8-sig: a BOM, as Notepad saves, is not part of the first name.
	try:
		text = read_text(path, limit=MAX_DOTENV_BYTES, encoding="utf-8-sig")
	except OSError as exc:
		raise ConfigurationError(
			f"the .env file {str(path)!r} cannot be read: {exc.strerror or exc}"
		) from None
	except UnicodeDecodeError as exc:
		from openmolt_core._support.textfile import not_utf8

		raise ConfigurationError(not_utf8(str(path), exc)) from None
	for number, line in enumerate(text.splitlines(), 1):
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


KEY_STORE = "the key store"
"""How a `KeyReport`'s source names the key store (``the key store PATH (VARIABLE)``)."""


@dataclass(frozen=True, slots=True)
class KeyReport:
	"""Where one key came from.

	Args:
		owner: ``openai`` or ``integrations.notion``.
		variable: The environment variable that would hold it.
		source: A description of the source, or None when no key was found.
		optional: Whether the run goes on without it (a local model server, which most often
			asks for none).
	"""

	owner: str
	variable: str
	source: str | None
	optional: bool = False

	def line(self) -> str:
		"""One line for verbose output; never the value."""
		if self.source is None and self.optional:
			return f"no key for {self.owner} (none needed unless the server asks: {self.variable})"
		if self.source is None:
			return f"no key for {self.owner} (set {self.variable})"
		return f"key for {self.owner}: from {self.source}"


_REJECTED = re.compile(r"the API key was rejected \(\d{3}\); set a valid key in (OPENMOLT_\w+)")
"""A provider's refusal of its key (`openmolt_providers._common`), naming the key's variable."""


def rejected_key_source(text: str, keys: Sequence[KeyReport]) -> str:
	"""A provider's "the API key was rejected" with where the rejected key came from.

	The provider names the variable the key is read from; the command knows which source gave
	it (the environment, a ``.env`` file, the agent file, the key store), and a person fixing
	the key must change that one: a new value in the key store changes nothing while the
	environment still gives the old one. The value is never said.

	Args:
		text: An error or progress line.
		keys: Where each key of the run came from (`resolve_keys`).
	"""
	found = _REJECTED.search(text)
	if found is None:
		return text
	report = next(
		(r for r in keys if r.variable == found[1] and "." not in r.owner and r.source), None
	)
	if report is None or report.source is None:
		return text
	note = f"; the key sent came from {report.source}"
	if report.source.startswith(KEY_STORE):
		note += f": `openmolt keys set {report.owner}` replaces it"
	return text + note


def _spellings(key: str) -> tuple[str, str]:
	"""A key in camelCase and in snake_case (``refreshToken``, ``refresh_token``)."""
	return key, env_var("x", key).removeprefix("OPENMOLT_X_").lower()


def _file_key(settings: Mapping[str, Any], key: str) -> tuple[str, Any] | None:
	"""The file's value of ``key``, in camelCase or snake_case (``refresh_token``); not blank."""
	for name in _spellings(key):
		if not blank(settings.get(name)):
			return name, settings[name]
	return None


def _variable_value(values: Mapping[str, str], variable: str) -> str | None:
	"""A variable's value without its surrounding whitespace; None when unset or blank."""
	value = values.get(variable)
	return None if value is None or blank(value) else value.strip()


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
	aliases_of: Callable[[str], Sequence[Sequence[str]]] | None = None,
	code_first: bool = False,
) -> list[KeyReport]:
	"""Put the winning value of each key into its settings dict, in place.

	The order, first found wins: the environment, the ``.env`` file, the agent file, the key
	store; for an agent.py (``code_first``) the code's own value comes first, as it does for the
	integrations its code configures and as it would when the file runs as ``python agent.py``.
	The key store is the user's default, below anything a run is given explicitly. A
	value that is `blank` (empty, spaces) is no value: the next source is read. A key the file
	gives in the other spelling (``refresh_token``) is replaced in both when a variable wins.
	Names of one secret (``aliases_of``: Slack's ``token`` and ``botToken``) are one key: the
	first source that gives either gives it, and the others' values of it are dropped.

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
		aliases_of: The groups of keys that name one secret, by integration id (default: none).
		code_first: The settings were given by Python code (an agent.py), which wins.

	Returns:
		One report per provider; per integration, one per key found (and ``apiKey`` always).
	"""
	store = stored or {}
	file_rank = 0 if code_first else 2  # where the agent file's own value stands
	reports = []
	for label, name, settings in owners:
		integration = label.startswith("integrations.")
		keys: Sequence[str] = ("apiKey",)
		if integration and keys_of is not None:
			keys = keys_of(name) or ("apiKey",)
		where = label if integration else f"llmProviders.{label}"
		found: dict[str, tuple[int, Any, str]] = {}  # key: (rank, value, source)
		for key in keys:
			variable = env_var(name, key)
			given = _file_key(settings, key)
			spelled = given[0] if given else key
			if code_first:  # named as the code spells it
				code = f"integrations[{name!r}]" if integration else f"llm_providers[{name!r}]"
				in_file = f"{file} ({code}[{spelled!r}])"
			else:
				in_file = f"{file} ({where}.{spelled})"
			sources = [
				(_variable_value(environ, variable), f"environment variable {variable}"),
				(_variable_value(dotenv, variable), f"{dotenv_path} ({variable})"),
				(_variable_value(store, variable), f"{KEY_STORE} {stored_path} ({variable})"),
			]
			sources.insert(file_rank, (given[1] if given else None, in_file))
			for rank, (value, source) in enumerate(sources):
				if value is not None:
					found[key] = (rank, value, source)
					break
		groups = aliases_of(name) if integration and aliases_of is not None else ()
		for group in groups:
			ranks = [found[k][0] for k in group if k in found]
			for key in group:
				if key in found and found[key][0] > min(ranks):
					# Another name of the secret came first: this one's value is dropped.
					del found[key]
					for spelled in _spellings(key):
						settings.pop(spelled, None)
		for key in keys:
			target = key if integration else "api_key"
			if key in found:
				rank, value, source = found[key]
				if rank != file_rank or not integration:  # not the file's own value: one spelling
					for spelled in _spellings(key):
						settings.pop(spelled, None)
					settings[target] = value
			if key in found or key == "apiKey":
				owner = label if key == "apiKey" else f"{label}.{key}"
				where_from = found[key][2] if key in found else None
				optional = not integration and name not in KEYED_PROVIDERS
				reports.append(
					KeyReport(
						owner=owner,
						variable=env_var(name, key),
						source=where_from,
						optional=optional,
					)
				)
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
	from openmolt_core._envvars import agent_secret_variable, key_of_variable

	known = {env_var(integration, k) for k in keys}
	out = []
	for values in sources:
		for variable in values:
			if variable in known or variable in out or blank(values[variable]):
				continue
			if agent_secret_variable(variable):  # OPENMOLT_GITHUB_TRIAGE_WEBHOOK_SECRET: an agent's
				continue
			if key_of_variable(integration, variable) is not None:
				out.append(variable)
	return out


def default_dotenv(explicit: str | None) -> Path | None:
	"""The ``.env`` file to read: ``--env-file``, else ``./.env`` when it exists.

	Raises:
		ConfigurationError: An explicit file is empty, a folder, or does not exist.
	"""
	if explicit is not None:
		if not explicit.strip():  # Path("") is ".", which is no file either: say what is missing
			raise ConfigurationError("--env-file: give the path of a .env file")
		path = Path(explicit)
		if path.is_dir():
			raise ConfigurationError(f"--env-file {explicit}: a folder; give the .env file in it")
		if not path.exists():
			raise ConfigurationError(f"{path}: no such .env file")
		from openmolt_core._support.paths import check_regular

		try:
			check_regular(path)
		except OSError as exc:
			raise ConfigurationError(f"--env-file {explicit}: {exc.strerror}") from None
		return path
	path = Path(".env")
	return path if path.is_file() else None


def snapshot_environ() -> dict[str, str]:
	"""A copy of the environment, before the ``.env`` file is applied."""
	return dict(os.environ)
