"""The secrets a step reads are kept between uses, and a secret learned mid-run still shows nowhere.

An instance's secret set asks its sources (the keys given in code, each provider's key) several
times a step; `registered_keys` keeps its answer until a key is registered or its owner dies, and a
source that gives nothing new is not read value by value. Neither may hide a secret that appears
during a run: one given in code, or one a source starts to give, is masked from the next step on.
"""

from __future__ import annotations

import gc
import json
from typing import Any

import pytest

from openmolt import FunctionTool, OpenMolt
from openmolt_core._support.secretset import SecretSet, register_key, registered_keys
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio


class _Owner:
	"""Something that holds a key given in code (a viewer, a webhook)."""


def test_the_keys_given_in_code_are_read_again_after_a_register_and_a_death() -> None:
	first = _Owner()
	register_key(first, "kept-answer-key-one-0101")
	before = registered_keys()
	assert "kept-answer-key-one-0101" in before
	assert registered_keys() is before  # kept: the same set while nothing changes
	second = _Owner()
	register_key(second, "kept-answer-key-two-0102")
	now = registered_keys()
	assert {"kept-answer-key-one-0101", "kept-answer-key-two-0102"} <= now
	register_key(second, "kept-answer-key-three-0103")  # a second key of the same owner
	assert "kept-answer-key-three-0103" in registered_keys()
	del first
	gc.collect()
	after = registered_keys()
	assert "kept-answer-key-one-0101" not in after  # its owner died: no longer a secret
	assert {"kept-answer-key-two-0102", "kept-answer-key-three-0103"} <= after
	del second
	gc.collect()
	assert not {"kept-answer-key-two-0102", "kept-answer-key-three-0103"} & registered_keys()


def test_a_source_that_starts_to_give_a_secret_is_read_whole_again() -> None:
	secrets = SecretSet()
	secrets.add("known-value-kept-0104")
	given: set[str] = {"known-value-kept-0104"}
	secrets.add_source(lambda: given)
	assert secrets.values() == {"known-value-kept-0104"}
	given.add("learned-later-value-0105")
	assert secrets.values() == {"known-value-kept-0104", "learned-later-value-0105"}
	given.add("   ")  # a blank one is no secret, in a set as in any other iterable
	given.add(b"bytes-are-not-text-0106")  # type: ignore[arg-type]  # a source's mistake
	assert secrets.values() == {"known-value-kept-0104", "learned-later-value-0105"}
	given.clear()
	assert secrets.values() == {"known-value-kept-0104"}


@pytest.mark.parametrize("how", ["register_key", "source", "add"])
async def test_a_secret_learned_during_a_run_is_masked_from_the_next_step_on(how: str) -> None:
	"""A tool learns a secret at step 1; the model writes it at step 2 and 3: it shows nowhere."""
	secret = f"mid-run-secret-{how}-0107"
	om = OpenMolt(entry_points=False)
	given: set[str] = set()
	om.secrets.add_source(lambda: given)
	owners = [_Owner()]  # alive for the run: its key is a secret while it lives
	got: list[Any] = []

	def learn(i: dict[str, Any], ctx: Any) -> Any:
		if how == "register_key":
			register_key(owners[0], secret)
		elif how == "source":
			given.add(secret)
		else:
			om.secrets.add(secret)
		return {"learned": True}

	def echo(i: dict[str, Any], ctx: Any) -> Any:
		got.append(i)
		return {"said": secret}  # the tool's result shows it too

	model = ScriptedModel(
		[call_tool("local.learn"), call_tool("local.echo", v=secret), finish(done=secret)]
	)
	tools = [
		FunctionTool(handle="learn", description="d", function=learn),
		FunctionTool(handle="echo", description="d", function=echo),
	]
	agent = om.create_agent(name="A", model=model, tools=tools)
	result = await agent.run("go")
	assert result.status == "success", result
	assert got == [{"v": "[redacted]"}]
	assert result.output == {"done": "[redacted]"}
	state = json.dumps(result.state.to_dict())
	assert "[redacted]" in state
	assert secret not in state
	assert secret not in json.dumps(result.to_dict())
	owners.clear()
	gc.collect()


def test_a_text_found_clean_is_masked_again_once_a_secret_is_learned() -> None:
	"""The redactor keeps the last text that showed no secret; a secret learned since masks it."""
	om = OpenMolt(entry_points=False)
	given: set[str] = set()
	om.secrets.add_source(lambda: given)
	redact = om.create_agent(name="A", model=ScriptedModel([]))._redactor
	text = '{"commands":[{"type":"finish","output":"late-secret-value-0108"}]}'
	assert redact(text) == text
	assert redact(text) == text  # kept: the same secrets, the same text
	given.add("late-secret-value-0108")
	assert redact(text) == '{"commands":[{"type":"finish","output":"[redacted]"}]}'
	om.secrets.add("another-late-value-0109")
	other = "then another-late-value-0109 shows"
	assert redact(other) == "then [redacted] shows"
	assert redact(text) == '{"commands":[{"type":"finish","output":"[redacted]"}]}'
	clean = "says registered-late-0110"
	assert redact(clean) == clean
	owner = _Owner()
	register_key(owner, "registered-late-0110")
	assert redact(clean) == "says [redacted]"
	del owner
	gc.collect()
	assert redact(clean) == clean  # its owner died: no longer a secret
	assert redact(clean) == clean
