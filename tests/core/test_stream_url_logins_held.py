"""A URL's login split across two ``text:delta`` pieces never reaches a listener in halves.

Each piece masked alone shows no URL (``https://app:Pa`` has no ``@`` yet, ``ss@db.example`` no
scheme): a plain ``agent.on("text:delta")`` listener got the password in two unmasked halves.
The emitter holds the word that may still be a URL's login (`_support.loginholds`) and sends it
whole, masked, when it ends (a space) or its field does. Text that cannot be part of one goes on
at once: a word that ended, and the start of a word up to its letters that may be a scheme's.
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core._support.masking import mask_url_logins
from openmolt_core.testing import finish
from tests.core.test_streaming import Streamer

pytestmark = pytest.mark.anyio

PASSWORD = "Pw7f3a9e21c4d8"
SAYINGS = {
	"https": f"Connect with https://app:{PASSWORD}@db.example/runs then run it.",
	"postgres at the end": f"The string is postgresql://app:{PASSWORD}@db.example/runs",
	"no slashes": f"Open https:app:{PASSWORD}@db.example/x now.",
	"line break inside": f"use https://app:{PASSWORD}\n@db.example/x please",
	"after punctuation": f"Here,https://app:{PASSWORD}@db.example/x ok",
}


async def _heard(said: str, size: int) -> tuple[list[str], Any]:
	"""What a plain listener of ``text:delta`` gets of a streamed humanMessage, and the result."""
	om = OpenMolt(entry_points=False)
	model = Streamer([{"commands": [finish({"n": 1}, human_message=said)]}], size=size)
	agent = om.create_agent(name="S", model=model)
	heard: list[str] = []

	def listen(event: Any) -> None:
		if event.field == "humanMessage":
			heard.append(event.text)

	agent.on("text:delta", listen)
	result = await agent.run("go")
	await om.aclose()
	return heard, result


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 11, 16])
@pytest.mark.parametrize("case", sorted(SAYINGS))
async def test_a_listener_never_gets_a_url_login_in_halves(case: str, size: int) -> None:
	heard, result = await _heard(SAYINGS[case], size)
	joined = "".join(heard)
	assert all(piece for piece in heard)  # no empty delta reaches a listener
	for piece in heard:
		assert PASSWORD[:4] not in piece, (piece, heard)
	assert PASSWORD not in joined
	assert joined == mask_url_logins(SAYINGS[case])  # the whole text, as a person is sent it
	assert result.status == "success"


async def test_the_run_returns_the_text_as_the_model_wrote_it() -> None:
	_, result = await _heard(SAYINGS["https"], 3)
	assert result.human_message == SAYINGS["https"]  # what run() returns is the caller's, whole
