"""The credential check as a capability: a run whose integrations lack their keys never starts.

``create_agent`` adds it (first, outermost) to an agent that binds integrations. Around each drive
of a run (`wrap_run`: a start, a resume, a durable execution, a sub-agent's run) it checks the
credentials of the run's tools (`openmolt_core.integrations.preflight.check_credentials`) and
raises `openmolt_core.errors.ConfigurationError` naming each missing key and where it can come
from, before a model call is paid for. Being outermost, before the run observers, a refused run
is not recorded as a run that started. It changes nothing a run journals: it is not in the
agent's fingerprint.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, ClassVar, cast

from openmolt_core.hooks import Capability

if TYPE_CHECKING:
	from openmolt_core._binding import BoundTool
	from openmolt_core.hooks import Run
	from openmolt_core.result import RunResult

__all__ = ["CREDENTIAL_CHECK", "CredentialCheck"]


class CredentialCheck(Capability):
	"""Refuse to drive a run whose integrations lack their credentials (stateless: one is shared)."""

	__slots__ = ()

	name = "credential-check"
	in_fingerprint: ClassVar[bool] = False  # a check: nothing a run journals depends on it

	async def wrap_run(self, run: Run, drive: Callable[[], Awaitable[RunResult]]) -> RunResult:
		"""Check the run's tools' credentials, then drive the run.

		Raises:
			ConfigurationError: An integration lacks config its credential needs.
		"""
		tools = cast("Iterable[BoundTool]", run.tools.values())  # the kernel's records
		if any(t.integration is not None for t in tools):  # only integrations hold credentials
			from openmolt_core.integrations.preflight import check_credentials

			check_credentials(tools, agent=run.agent)
		return await drive()


CREDENTIAL_CHECK: CredentialCheck = CredentialCheck()
"""The one check the agents that bind integrations share."""
