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

import logging
import os

from openmolt_core.integrations.connect import env_var
from openmolt_core.triggers import secret_from

__all__ = ["agent_env", "agent_secret"]

log: logging.Logger = logging.getLogger("openmolt")


def agent_env(agent: str, key: str) -> str:
	"""The variable that holds one of an agent's secrets.

	Args:
		agent: The agent's name.
		key: The secret's key (``a2aToken``, ``aguiToken``, ``webhookSecret``).
	"""
	return env_var(agent, key)


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
	if old != name and not os.environ.get(name) and os.environ.get(old):
		log.warning("%s is read from %s, its former name: rename the variable %s", what, old, name)
		return os.environ[old]
	return secret_from(None, name, what=what)
