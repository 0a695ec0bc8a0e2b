"""Refresh tokens a service replaces during a command's run: kept in the key store, or said.

Some services send a new refresh token with each refresh and refuse the old one from then on
(X's are single-use). A credential whose refresh token came from the key store (``openmolt keys
set``) refreshes through it (`openmolt_core.cli._keystore.RefreshTokens`): under a lock shared by
every process, it reads the newest token, spends it, and keeps the new one there, so two
``openmolt serve`` processes (or a run and a server) never spend one token twice and the next run
has it. One from the environment, a ``.env`` file or the agent file cannot be rewritten: the run
says so once, naming where it came from and how to let the command keep tokens (``openmolt auth
ID``, whose credential store is kept current by every refresh). Values are never shown. The other
agents of the process that read the same variable (``openmolt serve`` builds an instance per agent
file) take the new token too: the old one is refused from then on.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
	from openmolt_core.agent import Agent
	from openmolt_core.cli._keys import KeyReport

__all__ = ["watch_refresh_tokens"]


def watch_refresh_tokens(
	agent: Agent, keys: Sequence[KeyReport], say: Callable[[str], None]
) -> None:
	"""Listen to the refreshes of the agent's OAuth2 credentials that the command gave a token.

	Args:
		agent: The agent the command runs.
		keys: Where each of its keys came from (`openmolt_core.cli._keys.resolve_keys`).
		say: Prints a warning line for the user (never a value).
	"""
	from openmolt_core.cli._keys import KEY_STORE
	from openmolt_core.integrations.credentials import OAuth2Auth

	reports = {report.owner: report for report in keys if report.source is not None}
	seen: set[int] = set()
	for tool in agent._tools.values():
		auth = getattr(tool.context, "auth", None)
		if not isinstance(auth, OAuth2Auth) or id(auth) in seen or auth.stored:
			continue  # a credential store's token is kept by the refresh itself
		seen.add(id(auth))
		iid = tool.context.integration
		report = reports.get(f"integrations.{iid}.refreshToken")
		if report is None:
			continue  # given by Python code (its on_token_refresh keeps it) or not at all
		if (report.source or "").startswith(f"{KEY_STORE} "):
			from openmolt_core.cli._keystore import RefreshTokens

			stored = {  # the token keys the key store gave: the others are not its to replace
				key: found.variable
				for key in ("refreshToken", "accessToken", "expiryDate")
				if (found := reports.get(f"integrations.{iid}.{key}"))
				and (found.source or "").startswith(f"{KEY_STORE} ")
			}
			auth.use_store(RefreshTokens(stored), iid, keys=frozenset(stored))
			continue
		old = str(auth.config.get("refreshToken") or "")  # camelCase always (oauth2_config)
		rotation = _Rotation(iid, report, old, say, auth)
		_SHARING.setdefault(report.variable, weakref.WeakSet()).add(rotation)
		auth.add_refresh_listener(rotation.refreshed)


_SHARING: dict[str, weakref.WeakSet[_Rotation]] = {}
"""The watched credentials of this process, by the variable their refresh token came from: the
agents of one ``openmolt serve`` (each agent file its own instance) that read the same key."""


class _Rotation:
	"""One credential's refresh token as the command gave it, and what became of it."""

	__slots__ = ("__weakref__", "auth", "iid", "report", "said", "say", "token")

	def __init__(
		self, iid: str, report: KeyReport, token: str, say: Callable[[str], None], auth: Any
	) -> None:
		self.iid = iid
		self.report = report
		self.token = token  # the refresh token now
		self.say = say
		self.said = False
		self.auth: Any = weakref.proxy(auth)  # the auth holds this watch: no cycle kept alive

	def adopt(self, old: str, new: str) -> None:
		"""Take a refresh token another credential of this process got for the same key.

		Only while this one still holds the token that was replaced: the service now refuses it.
		"""
		if self.token != old:
			return
		self.token = new
		config = dict(self.auth.config)
		config["refreshToken"] = new
		if "refresh_token" in config:  # the user's spelling too
			config["refresh_token"] = new
		self.auth.config = config

	async def refreshed(self, config: dict[str, Any]) -> None:
		"""After a refresh: give a new refresh token to the others of the process, and say it once."""
		new = str(config.get("refreshToken") or "")
		if not new or new == self.token:
			return  # the service kept the refresh token (Google): nothing to keep
		old, self.token = self.token, new
		for other in list(_SHARING.get(self.report.variable, ())):
			if other is not self:
				other.adopt(old, new)
		source = self.report.source or ""
		if self.said:
			return
		self.said = True
		self.say(
			f"warning: {self.iid} sent a new refresh token, which this run cannot keep: the one "
			f"from {source} may be refused from now on (X's are single-use). Run `openmolt auth "
			f"{self.iid}` and remove {self.report.variable} there: the command then keeps each "
			"new token"
		)
