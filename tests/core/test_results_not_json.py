"""A tool's result that is not JSON reaches every capability, the state and the model as JSON.

Measured before: a result holding a tuple key (``{(1, 2): 3}``) failed the run ("the run failed
unexpectedly: ... offload: its replace_result hook raised TypeError: keys must be str, int, float,
bool or None"), and so did one holding an object whose ``str()`` raises. The kernel made the
result one the state can hold (`encodable`) before any ``replace_result`` hook, but left keys and
objects that are not JSON to each reader's ``default=str``. Now the kernel writes them once.
"""

from __future__ import annotations

import datetime
import enum
import json
from typing import Any

import pytest

from openmolt import FunctionTool, OpenMolt
from openmolt_core._support.jsonsafe import encodable, problem
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio

NONE = {"type": "object", "properties": {}, "additionalProperties": False}


class Unwritable:
	"""An object whose str() raises."""

	def __str__(self) -> str:
		raise RuntimeError("no text for you")

	__repr__ = __str__


class Color(enum.Enum):
	RED = 1


WHEN = datetime.datetime(2026, 12, 6, 1, 2, 3)

CASES: list[tuple[Any, Any]] = [
	({(1, 2): 3}, {"(1, 2)": 3}),
	({frozenset(): "x"}, {"frozenset()": "x"}),
	({"at": WHEN}, {"at": "2026-12-06 01:02:03"}),
	([Color.RED, {1, 2}], ["Color.RED", "{1, 2}"]),
	(Unwritable(), "(a Unwritable that cannot be written: its str() raised RuntimeError)"),
	({2: "a", None: "b", False: "c"}, {2: "a", None: "b", False: "c"}),  # json.dumps writes these
]


@pytest.mark.parametrize(("value", "written"), CASES)
def test_what_is_not_json_is_written_once(value, written) -> None:
	"""Keys and objects that are not JSON become their str(); JSON's own keys stay."""
	cleaned = encodable(value)
	assert cleaned == written
	json.dumps(cleaned)  # no default=str needed


def test_a_result_that_is_json_is_not_copied() -> None:
	"""The check costs no copy for a result that is JSON already (bytes are kept for storing)."""
	value = {"a": [1, 2.5, None, True, "x"], "b": b"raw"}
	assert problem(value) is None
	assert encodable(value) is value


@pytest.mark.parametrize("offload", [True, False], ids=["offload", "plain"])
@pytest.mark.parametrize(("value", "written"), CASES)
async def test_a_run_whose_tool_returns_it_goes_on(value, written, offload) -> None:
	"""The run succeeds; the model reads the written result; the saved state is JSON."""
	tool = FunctionTool(
		handle="f", description="d", function=lambda i, c: value, input_schema=NONE, labels=[]
	)
	model = ScriptedModel([call_tool("local.f"), finish("ok")])
	om = OpenMolt(entry_points=False)
	config = {"max_result_chars": 10} if offload else None  # offloaded past 10 characters
	agent = om.create_agent(name="A", model=model, tools=[tool], config=config)
	result = await agent.run("go")
	assert result.status == "success", result.error
	read = model.last_turn()["results"][0]
	assert read["ok"] is True
	if offload:
		assert "stored" in json.dumps(read["result"])  # the offload capability read it
	else:
		assert read["result"] == json.loads(json.dumps(written))
	json.dumps(result.state.to_dict())
