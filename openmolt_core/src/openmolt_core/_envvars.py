"""The environment variables of keys and settings: ``OPENMOLT_<OWNER>_<KEY>``, one spelling.

A provider's key is ``OPENMOLT_OPENAI_API_KEY``; every config key an integration reads is
``OPENMOLT_<ID>_<KEY>`` (``OPENMOLT_SLACK_TOKEN``, ``OPENMOLT_S3_SECRET_ACCESS_KEY``). This module
imports nothing else of OpenMolt, so the command can check keys before it loads the engine.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = [
	"AGENT_SECRETS",
	"KEYED_PROVIDERS",
	"agent_secret_variable",
	"blank",
	"blank_variables",
	"env_var",
	"installed_owners",
	"key_of_variable",
]

KEYED_PROVIDERS = ("anthropic", "google", "openai")
"""The built-in providers whose official API needs a key (a test checks this against them); a
local model server's (Ollama, vLLM...) most often needs none."""


def blank(value: object) -> bool:
	"""Whether a key's value counts as not given: None, or a string of nothing but whitespace.

	One rule for every source (a variable, a ``.env`` line, a config value), as the credential
	code strips what it signs with: ``OPENMOLT_SLACK_TOKEN=" "`` is no token, and the check
	before a run says so instead of sending ``Authorization: Bearer`` with nothing after it.

	Args:
		value: The value as given.
	"""
	return value is None or (isinstance(value, str) and not value.strip())


def _upper_snake(name: str) -> str:
	# A word starts at a capital after a lower-case letter or digit (secretAccessKey), and at the
	# last capital of a run that a lower-case letter follows (userIDToken: USER_ID_TOKEN).
	snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
	return re.sub(r"[^A-Za-z0-9]+", "_", snake).strip("_").upper()


def blank_variables(
	variables: Iterable[str], *sources: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> str:
	"""`` (OPENMOLT_SLACK_TOKEN is set but empty)`` for the variables set `blank`, else ``""``.

	Said next to "set OPENMOLT_SLACK_TOKEN" when the variable is there but holds nothing (an
	``export OPENMOLT_SLACK_TOKEN=`` line, a ``.env`` entry without its value): the user sees
	why the variable they set was not used.

	Args:
		variables: The variables asked for.
		sources: More places that hold variables (a ``.env`` file's values).
		environ: The environment (default: ``os.environ``).
	"""
	import os

	places = [os.environ if environ is None else environ, *sources]
	empty = [
		v
		for v in dict.fromkeys(variables)
		if any(v in place for place in places) and all(blank(place.get(v)) for place in places)
	]
	if not empty:
		return ""
	return f" ({' and '.join(empty)} {'is' if len(empty) == 1 else 'are'} set but empty)"


def env_var(integration: str, key: str = "apiKey") -> str:
	"""The environment variable that holds one config key of an integration (or a provider's key).

	``("slack", "token")`` → ``OPENMOLT_SLACK_TOKEN``, ``("s3", "secretAccessKey")`` →
	``OPENMOLT_S3_SECRET_ACCESS_KEY``, ``("googleDrive",)`` → ``OPENMOLT_GOOGLE_DRIVE_API_KEY``,
	``("openai",)`` → ``OPENMOLT_OPENAI_API_KEY``, ``("x", "userIDToken")`` →
	``OPENMOLT_X_USER_ID_TOKEN`` (a run of capitals is one word).

	Args:
		integration: The integration id (or the provider's name).
		key: The config key, as the integration's templates read it (default ``apiKey``).
	"""
	return f"OPENMOLT_{_upper_snake(integration)}_{_upper_snake(key)}"


def installed_owners() -> list[str]:
	"""The installed providers' names and integrations' ids (their entry points, not loaded).

	Their variables are theirs: one of another owner is never taken for a misspelling.
	"""
	from importlib import metadata

	found = metadata.entry_points()
	groups = ("openmolt.providers", "openmolt.integrations")
	return [ep.name for group in groups for ep in found.select(group=group)]


AGENT_SECRETS = ("webhookSecret", "a2aToken", "aguiToken")
"""The keys of an agent's own secrets, ``OPENMOLT_<AGENT>_WEBHOOK_SECRET``, ``..._A2A_TOKEN`` and
``..._AGUI_TOKEN`` (``openmolt serve``): variables of an agent, never a misspelt integration key."""

_AGENT_SUFFIXES = tuple(f"_{_upper_snake(key)}" for key in AGENT_SECRETS)


def agent_secret_variable(variable: str) -> bool:
	"""Whether a variable holds an agent's own secret (`AGENT_SECRETS`), not an integration's key.

	Args:
		variable: The variable's name.
	"""
	return variable.startswith("OPENMOLT_") and variable.endswith(_AGENT_SUFFIXES)


def key_of_variable(integration: str, variable: str) -> str | None:
	"""The config key an ``OPENMOLT_<ID>_<KEY>`` variable names, in camelCase (None if not one).

	``("slack", "OPENMOLT_SLACK_TOKEN")`` → ``token``; the inverse of `env_var` for every key an
	integration reads in camelCase.

	Args:
		integration: The integration id.
		variable: The environment variable's name.
	"""
	prefix = f"OPENMOLT_{_upper_snake(integration)}_"
	if not variable.startswith(prefix) or len(variable) == len(prefix):
		return None
	first, *rest = variable[len(prefix) :].lower().split("_")
	return first + "".join(part.title() for part in rest)
