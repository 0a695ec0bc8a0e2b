"""AG-UI's streamed message is the reply masked as a whole: never masked again delta by delta.

The reply's text is masked where it streams (`openmolt_core.capabilities.streaming`), with every
secret a served response is masked with; the endpoint and the server's own masking pass each
delta on as it is. Masked again one delta at a time, a short secret that starts a delta became
``[redacted]`` inside a word, and a secret another live instance knows went out in halves.
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote

import pytest

from openmolt import OpenMolt
from openmolt_core._support.masking import mask
from openmolt_core.testing import call_tool, finish
from openmolt_core.tools import ToolContext, tool
from tests.core.test_stream_consumers_masked import LONG, SAYINGS, WIDE
from tests.core.test_streaming import Streamer
from tests.serve.test_serve_agui import run_agent
from tests.serve.test_serve_agui_fallback_stream import messages

pytestmark = pytest.mark.anyio


async def _said(
	om: OpenMolt, said: str, size: int, *, first: list[dict[str, Any]] | None = None
) -> list[str]:
	"""The AG-UI text messages of one run whose finish says ``said``, streamed ``size`` at a time."""

	@tool(labels=[])
	def refresh(context: ToolContext) -> str:
		"""Refresh the token."""
		om.secrets.add(LONG)  # a secret learned mid-run (an OAuth2 refresh)
		return "ok"

	replies = [*(first or []), {"commands": [finish({"result": "r"}, human_message=said)]}]
	agent = om.create_agent(
		name="Helper",
		instructions="Help.",
		model=Streamer(replies, size=size),
		tools=[refresh],
	)
	events = await run_agent(agent)
	await om.aclose()
	return messages(events)


@pytest.mark.parametrize("size", [1, 2, 3, 5])
@pytest.mark.parametrize("case", list(SAYINGS))
async def test_the_streamed_message_is_the_whole_reply_masked(case: str, size: int) -> None:
	"""A short secret inside a word stays a word, alone it is masked; every spelling is masked."""
	secret, said = SAYINGS[case]
	om = OpenMolt(entry_points=False)
	om.secrets.add(secret)
	assert await _said(om, said, size) == [mask(said, frozenset({secret}))]


@pytest.mark.parametrize("size", [1, 3, 5])
async def test_another_instances_secret_never_leaves_in_halves(size: int) -> None:
	"""The server masks every live instance's secrets: split across deltas, they are held too."""
	other = OpenMolt(entry_points=False)
	other.secrets.add(WIDE)
	said = f"the key is {WIDE}, keep it"
	assert await _said(OpenMolt(entry_points=False), said, size) == [
		"the key is [redacted], keep it"
	]
	del other


@pytest.mark.parametrize("size", [1, 4])
async def test_a_secret_learned_mid_run_never_streams(size: int) -> None:
	"""A token a tool's refresh brings before the finish is held and masked in its deltas."""
	om = OpenMolt(entry_points=False)
	b64 = base64.b64encode(LONG.encode()).decode()
	said = f"new {LONG} and {quote(LONG, safe='')} and {b64}."
	got = await _said(om, said, size, first=[{"commands": [call_tool("local.refresh")]}])
	assert got == [mask(said, frozenset({LONG}))]
	assert LONG not in got[0] and b64 not in got[0]


@pytest.mark.parametrize("size", [1, 3, 64])
async def test_a_secret_set_in_the_environment_after_the_instance_never_streams(
	size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A key exported once the instance had read the environment (what every other frame of the
	stream masks) is masked in the streamed message too: one message, never in clear."""
	om = OpenMolt(entry_points=False)
	om.secrets.values()  # the instance has read the environment
	late = "late-env-token-8c1f0a77"
	monkeypatch.setenv("ACME_LATE_TOKEN", late)
	assert await _said(om, f"the token is {late}, keep it", size) == [
		"the token is [redacted], keep it"
	]
