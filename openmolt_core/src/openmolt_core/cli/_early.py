"""The provider-key check a run makes before it builds anything (imports next to nothing).

``openmolt agent.json`` without a key used to import the whole engine (about 600 modules, over a
second) before saying which variable to set. This check reads the agent file as plain JSON and the
same key sources as `openmolt_core.cli._keys` (environment, ``.env``, the file, key store) and stops
at once when a built-in provider at its official API has no key. Anything it cannot decide (a
provider instance with its own ``baseUrl``, a third-party provider, a file that does not parse) is
left to the full check (`openmolt_core.cli._run.check_ready`), which gives the same message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from openmolt_core._envvars import KEYED_PROVIDERS  # re-exported: the check before a run reads it

__all__ = ["KEYED_PROVIDERS", "missing_provider_key", "near_variable", "no_key"]


def _variable(name: str, suffix: str) -> str:
	from openmolt_core._envvars import env_var

	return env_var(name, suffix)


def missing_provider_key(file: str, env_file: str | None) -> str | None:
	"""The message for the first model provider that certainly lacks its key, else None.

	Args:
		file: The agent file given to the command.
		env_file: ``--env-file``.
	"""
	path = Path(file)
	if path.suffix != ".json":
		return None
	from openmolt_core._support.paths import read_text
	from openmolt_core.cli._typos import MAX_AGENT_FILE_BYTES

	try:  # a BOM, as Notepad saves
		text = read_text(path, limit=MAX_AGENT_FILE_BYTES, encoding="utf-8-sig")
		data = json.loads(text)
	except (OSError, ValueError, RecursionError):
		return None  # the full load explains what is wrong with the file (a pipe, a device...)
	if not isinstance(data, dict):
		return None
	models: list[Any] = []
	model = data.get("model")
	models += model if isinstance(model, list) else [model]
	fallbacks = data.get("fallbackModels", data.get("fallback_models", []))
	models += fallbacks if isinstance(fallbacks, list) else []
	providers = data.get("llmProviders", data.get("llm_providers", {}))
	if not isinstance(providers, dict):
		return None
	dotenv = _dotenv(env_file)
	stored = _stored()
	for entry in models:
		if not isinstance(entry, str) or ":" not in entry:
			continue
		name = entry.partition(":")[0]
		settings = providers.get(name, {})
		if not isinstance(settings, dict) or name not in KEYED_PROVIDERS:
			continue
		if any(settings.get(k) for k in ("provider", "baseUrl", "base_url")):
			continue  # another server, or another plugin: the provider decides
		base = _variable(name, "baseUrl")
		if _given(os.environ.get(base), dotenv.get(base)):
			continue
		variable = _variable(name, "apiKey")
		if _given(
			os.environ.get(variable),
			dotenv.get(variable),
			stored.get(variable),
			settings.get("apiKey"),
			settings.get("api_key"),
		):
			continue
		return no_key(name, variable, dotenv)
	return None


def _given(*values: Any) -> bool:
	"""Whether any value is given: an empty or blank one (``OPENMOLT_OPENAI_API_KEY=``) is not."""
	from openmolt_core._envvars import blank

	return any(not blank(v) for v in values)


def no_key(
	name: str,
	variable: str,
	dotenv: dict[str, str] | None = None,
	owners: Iterable[str] | None = None,
) -> str:
	"""The message for a provider without its key (a near variable that is set, named).

	Args:
		name: The provider.
		variable: Its key's variable.
		dotenv: The ``.env`` file's values (their names may be the near one).
		owners: The providers and integrations known (`near_variable`).
	"""
	from openmolt_core._envvars import blank_variables

	near = near_variable([variable], [*(dotenv or {})], owners)
	typo = f" ({near[0]} is set: a typo of {near[1]}?)" if near else ""
	return (
		f"no API key for {name}: set {variable} (in the environment, a .env file or "
		f"`openmolt keys set {name}`){blank_variables([variable], dotenv or {})}{typo}"
	)


def near_variable(
	needed: Sequence[str],
	more: Sequence[str] = (),
	owners: Iterable[str] | None = None,
	real: Iterable[str] = (),
) -> tuple[str, str] | None:
	"""A set ``OPENMOLT_`` variable spelled close to a needed one, and that one; else None.

	A variable of another provider or integration is not a typo: ``OPENMOLT_OPENAI_IMAGE_API_KEY``
	(the openaiImage integration's) is not offered for ``OPENMOLT_OPENAI_API_KEY`` nor the other
	way round, nor ``OPENMOLT_SLACK_ACCESS_TOKEN`` for ``OPENMOLT_DISCORD_ACCESS_TOKEN``.

	Args:
		needed: The variables wanted (``OPENMOLT_SLACK_TOKEN``).
		more: Other names that are set (a ``.env`` file's).
		owners: The provider names and integration ids known (None: the installed ones, read
			only when a name is close).
		real: Variables that are no typos whatever they are close to: the ones the integration
			reads for its other keys and credential types (X's ``OPENMOLT_X_BEARER_TOKEN`` is
			not a typo of ``OPENMOLT_X_REFRESH_TOKEN``).
	"""
	import difflib

	skip = {*needed, *real}
	given = [v for v in [*os.environ, *more] if v.startswith("OPENMOLT_") and v not in skip]
	prefixes: list[str] | None = None

	def owner_of(name: str) -> str | None:
		# The longest prefix: OPENMOLT_OPENAI_IMAGE_API_KEY is openaiImage's, not openai's.
		return max((p for p in prefixes or () if name.startswith(p)), key=len, default=None)

	best: tuple[float, str, str] | None = None
	for variable in needed:
		for close in difflib.get_close_matches(variable, given, n=5, cutoff=0.85):
			if prefixes is None:
				known = _installed_owners() if owners is None else owners
				prefixes = [_variable(owner, "") for owner in known]  # OPENMOLT_SLACK_
			if owner_of(close) not in (None, owner_of(variable)):  # another owner's: no typo
				continue
			# The closest pair: OPENMOLT_SLACK_BOT_TOKN is BOT_TOKEN's typo, not TOKEN's.
			ratio = difflib.SequenceMatcher(None, close, variable).ratio()
			if best is None or ratio > best[0]:
				best = (ratio, close, variable)
	return (best[1], best[2]) if best is not None else None


def _installed_owners() -> list[str]:
	"""The installed providers' names and integrations' ids (their entry points, not loaded)."""
	from openmolt_core._envvars import installed_owners

	return [*KEYED_PROVIDERS, *installed_owners()]


def _dotenv(env_file: str | None) -> dict[str, str]:
	from openmolt_core.cli._keys import default_dotenv, read_dotenv

	try:
		path = default_dotenv(env_file)
		return read_dotenv(path) if path else {}
	except Exception:  # the full load reports a broken .env file with its line
		return {}


def _stored() -> dict[str, str]:
	from openmolt_core.cli import _keystore

	try:
		return _keystore.load()
	except Exception:  # the full load reports a broken key store
		return {}
