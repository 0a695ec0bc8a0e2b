"""The environment variables of keys and settings: ``OPENMOLT_<OWNER>_<KEY>``, one spelling.

A provider's key is ``OPENMOLT_OPENAI_API_KEY``; every config key an integration reads is
``OPENMOLT_<ID>_<KEY>`` (``OPENMOLT_SLACK_TOKEN``, ``OPENMOLT_S3_SECRET_ACCESS_KEY``). This module
imports nothing else of OpenMolt, so the command can check keys before it loads the engine.
"""

from __future__ import annotations

import re

__all__ = ["env_var", "installed_owners", "key_of_variable"]


def _upper_snake(name: str) -> str:
	snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
	return re.sub(r"[^A-Za-z0-9]+", "_", snake).strip("_").upper()


def env_var(integration: str, key: str = "apiKey") -> str:
	"""The environment variable that holds one config key of an integration (or a provider's key).

	``("slack", "token")`` → ``OPENMOLT_SLACK_TOKEN``, ``("s3", "secretAccessKey")`` →
	``OPENMOLT_S3_SECRET_ACCESS_KEY``, ``("googleDrive",)`` → ``OPENMOLT_GOOGLE_DRIVE_API_KEY``,
	``("openai",)`` → ``OPENMOLT_OPENAI_API_KEY``.

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
