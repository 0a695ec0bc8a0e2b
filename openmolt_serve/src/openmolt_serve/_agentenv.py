"""The environment variables of an agent's own secrets: its A2A and AG-UI tokens, its webhook secret.

``OPENMOLT_<AGENT>_<KEY>``, named by the command's one rule for variables
(`openmolt_core.integrations.connect.env_var`): the agent ``supportBot`` reads
``OPENMOLT_SUPPORT_BOT_A2A_TOKEN``, as an integration ``googleDrive`` reads
``OPENMOLT_GOOGLE_DRIVE_...``. Until 2026-12-04 these three were named by a rule of their own (every
character but a letter or digit made ``_``, then capitals: ``OPENMOLT_SUPPORTBOT_A2A_TOKEN``); where
that name differs and only it is set, it is still read, with a warning that names the new one, so
a deployment that set it keeps working.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable

from openmolt_core._support.masking import warn
from openmolt_core.errors import ConfigurationError
from openmolt_core.integrations.connect import env_var
from openmolt_core.triggers import Triggers, secret_from, strong_enough

__all__ = ["agent_env", "agent_secret", "check_distinct"]


def agent_env(agent: str, key: str) -> str:
	"""The variable that holds one of an agent's secrets.

	Accents are dropped (``Café``: ``CAFE``); a name with letters of another script (``助手``)
	keeps the former spelling, which writes them as they are: the rule would drop them, and two
	such agents would share one variable.

	Args:
		agent: The agent's name.
		key: The secret's key (one of `openmolt_core._envvars.AGENT_SECRETS`).
	"""
	folded = unicodedata.normalize("NFKD", agent)
	if any(c.isalnum() and not c.isascii() for c in folded):
		return _old_env(agent, key)
	return env_var(folded.encode("ascii", "ignore").decode("ascii"), key)


def _old_env(agent: str, key: str) -> str:
	slug = "".join(c if c.isalnum() else "_" for c in agent).upper()
	return f"OPENMOLT_{slug}_{env_var('', key).removeprefix('OPENMOLT__')}"


def agent_secret(value: str | None, env: str | None, *, agent: str, key: str, what: str) -> str:
	"""An agent's secret: given as is, else from ``env``, else from its variable (`agent_env`).

	Args:
		value: The secret itself (the trigger's ``token`` or ``secret``).
		env: The variable the trigger names (``tokenEnv``, ``secretEnv``), if any.
		agent: The agent's name.
		key: The secret's key, for its default variable.
		what: What it is, for the messages (``the a2a token of 'Planner'``).

	Raises:
		ConfigurationError: It is not set; the message names the variable to export.
	"""
	if value or env:
		return secret_from(value, env, what=what)
	name = agent_env(agent, key)
	old = _old_env(agent, key)
	new_value, old_value = os.environ.get(name, "").strip(), os.environ.get(old, "").strip()
	if old != name and old_value:
		if not new_value:
			_warn(f"{what} is read from {old}, its former name: rename the variable {name}")
			return strong_enough(os.environ[old], what=f"{what} ({old})")
		if old_value != new_value:
			_warn(
				f"{what}: {name} and {old} (its former name) are both set, to different values; "
				f"{name} is read: remove the other"
			)
	return secret_from(None, name, what=what)


def _warn(text: str) -> None:
	# A Python warning: the `openmolt` command (serve, ui) prints it as one line of its own, an
	# application sees it as any library's (the `openmolt` logger shows nothing without a handler).
	warn(text, UserWarning, stacklevel=3)  # masked with the secrets known now, as every warning


def check_distinct(agents: Iterable[tuple[str, Triggers]]) -> None:
	"""Refuse two agents whose secrets would come from one variable.

	``supportBot`` and ``support_bot`` both read ``OPENMOLT_SUPPORT_BOT_WEBHOOK_SECRET``: one of
	them would take the other's secret.

	Args:
		agents: Each agent's name and triggers.

	Raises:
		ConfigurationError: Two agents read one default variable; it names both and the fix.
	"""
	taken: dict[str, str] = {}
	for name, triggers in agents:
		for key, config, own in (
			("webhookSecret", triggers.webhook, "secretEnv"),
			("a2aToken", triggers.a2a, "tokenEnv"),
			("aguiToken", triggers.agui, "tokenEnv"),
		):
			if config is None or _given(config):
				continue
			variable = agent_env(name, key)
			other = taken.setdefault(variable, name)
			if other != name:
				raise ConfigurationError(
					f"agents {other!r} and {name!r} would both read {variable}: give one of "
					f"them a variable of its own ({own!r} in its triggers)"
				)


def _given(config: object) -> bool:
	"""Whether a trigger names its secret itself (a value, or a variable of its choice)."""
	names = ("secret", "secret_env", "token", "token_env", "callers")  # callers: a token each
	return any(getattr(config, a, None) for a in names)
