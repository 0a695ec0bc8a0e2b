"""A provider object given as ``model=`` has its keys masked, as a provider made by name has."""

import logging

import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ProviderError, RunError
from openmolt_core.llm import ModelRequest, ModelResponse
from openmolt_core.testing import ScriptedModel, finish

pytestmark = pytest.mark.anyio

HELD = "CANARYheldkey0001"
ATTRIBUTE = "CANARYattribute02"


class Leaky:
	"""A custom provider whose failure quotes its own key (as a careless error message may)."""

	name = "leaky"
	model = "leaky-1"

	def __init__(self) -> None:
		self.api_key = ATTRIBUTE
		self.author = "me"  # named like a secret ("auth"), too short to be one: never masked
		self._held = HELD

	def secrets(self) -> set[str]:
		return {self._held}

	async def generate(self, request: ModelRequest) -> ModelResponse:
		raise ProviderError(
			f"refused key {self._held} (attribute {self.api_key})",
			provider="leaky",
			model=self.model,
		)


async def test_a_provider_object_s_keys_never_show(caplog: pytest.LogCaptureFixture) -> None:
	caplog.set_level(logging.DEBUG, logger="openmolt")
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="A", model=Leaky())
	events: list[str] = []
	agent.on("error", lambda e: events.append(repr(e)))
	with pytest.raises(RunError) as caught:
		await agent.run("hi")
	shown = [str(caught.value), repr(caught.value.result.state.to_dict()), *events, caplog.text]
	for text in shown:
		assert HELD not in text and ATTRIBUTE not in text
	assert "refused key" in str(caught.value)  # the message itself is kept, masked
	assert "me" not in om.secrets.values()  # a short value is no secret


async def test_a_fallback_provider_object_s_keys_never_show() -> None:
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="A", model=[ScriptedModel([finish("ok")]), Leaky()])
	assert HELD in om.secrets.values() and ATTRIBUTE in om.secrets.values()
	assert (await agent.run("hi")).status == "success"
