"""A tool's result that is not JSON-like (a dataclass, a pydantic model, bytes, a set, an object
whose repr shows a secret) is masked in the events and everywhere else the redactor reads it."""

from __future__ import annotations

import dataclasses
from typing import Any

import pydantic
import pytest

from openmolt import FunctionTool, OpenMolt
from openmolt_core._support.masking import MASK, mask_deep
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio

KEY = "sk-live-Deep0bjects-01"
SECRETS = frozenset({KEY})


@dataclasses.dataclass
class Creds:
	user: str
	token: str = dataclasses.field(repr=False)  # hidden from repr, not from the data


class Model(pydantic.BaseModel):
	user: str
	token: str


class Shown:
	def __repr__(self) -> str:
		return f"Shown({KEY})"


def test_objects_holding_a_secret_are_masked_and_others_kept() -> None:
	assert mask_deep(Creds("u", KEY), SECRETS) == {"user": "u", "token": MASK}
	assert mask_deep(Model(user="u", token=KEY), SECRETS) == {"user": "u", "token": MASK}
	assert mask_deep([KEY.encode(), {KEY}], SECRETS) == [MASK, [MASK]]
	assert mask_deep({"x": Shown()}, SECRETS) == {"x": f"Shown({MASK})"}
	clean, model, raw = Creds("u", "public"), Model(user="u", token="t"), b"\x00\xff"
	assert mask_deep([clean, model, raw, 1.5, None, True], SECRETS) == [
		clean,
		model,
		raw,
		1.5,
		None,
		True,
	]
	out = mask_deep([clean, model, raw], SECRETS)
	assert out[0] is clean and out[1] is model and out[2] is raw


async def test_the_tool_response_event_shows_no_secret_of_an_object_result() -> None:
	async def creds(i: dict[str, Any], ctx: Any) -> Any:
		return {"a": Creds("u", KEY), "b": Model(user="u", token=KEY), "c": KEY.encode()}

	om = OpenMolt({"openai": {"api_key": KEY}}, entry_points=False)
	model = ScriptedModel([call_tool("local.creds"), finish(done=True)])
	tool = FunctionTool(handle="creds", description="d", function=creds)
	agent = om.create_agent(name="A", model=model, tools=[tool])
	seen: list[Any] = []
	agent.on("tool:response", lambda e: seen.append(e))
	await agent.run("go")
	assert seen and KEY not in repr(seen) and MASK in repr(seen)
	assert seen[0].response["a"] == {"user": "u", "token": MASK}


def test_keys_that_mask_alike_are_all_kept() -> None:
	"""Two keys holding secrets (or one and a key spelled as the mask) mask alike: none is lost."""
	other = "sk-live-Deep0bjects-02"
	secrets = frozenset({KEY, other})
	assert mask_deep({KEY: 1, other: 2, "n": 3}, secrets) == {
		MASK: 1,
		f"{MASK} 2": 2,
		"n": 3,
	}
	assert mask_deep({MASK: "was there", f"id {KEY}": {KEY: 4}}, secrets) == {
		MASK: "was there",
		f"id {MASK}": {MASK: 4},
	}
	assert mask_deep({KEY: 1, MASK: 2}, secrets) == {MASK: 1, f"{MASK} 2": 2}
