"""A failed run's error chain (its cause, the cause's notes and arguments) shows no secret, as
``traceback`` prints it; the exceptions keep their types."""

from __future__ import annotations

import traceback
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, ValidationError

from openmolt import OpenMolt
from openmolt_core.errors import RunError
from openmolt_core.testing import ScriptedModel
from tests._leaks import leaks

pytestmark = pytest.mark.anyio

KEY = "sk-live-Chained-0042"


class ProviderBoom(Exception):
	pass


async def test_the_cause_of_a_failed_run_shows_no_secret() -> None:
	async def fail(request: Any) -> Any:
		try:
			raise ValueError(f"inner {KEY}")
		except ValueError as inner:
			error = ProviderBoom("the provider said", {"key": KEY})
			error.add_note(f"sent to https://api.example/v1?key={KEY}")
			raise error from inner

	om = OpenMolt({"openai": {"api_key": KEY}}, entry_points=False)
	agent = om.create_agent(name="A", model=ScriptedModel([fail]))
	with pytest.raises(RunError) as raised:
		await agent.run("go")
	error = raised.value
	shown = "".join(traceback.format_exception(error))
	assert "ProviderBoom" in shown and "inner [redacted]" in shown, shown
	assert KEY not in shown
	assert isinstance(error.__cause__, ProviderBoom)
	assert isinstance(error.__cause__.__cause__, ValueError)


class Refused(Exception):
	"""A provider SDK's error: its text is built from an attribute, not from its arguments."""

	def __init__(self, body: dict[str, Any]) -> None:
		super().__init__("the API refused the request")
		self.body = body

	def __str__(self) -> str:
		return f"the API refused the request: {self.body}"


class Unauthorized(Exception):
	"""An SDK's error whose text reads the HTTP response it keeps (an object, not JSON)."""

	def __init__(self, response: httpx.Response) -> None:
		super().__init__("unauthorized")
		self.response = response

	def __str__(self) -> str:
		return f"unauthorized: {self.response.text}"


class Limits(BaseModel):
	retries: int


def _open_missing() -> None:
	open(f"/nonexistent/{KEY}/config.json")  # FileNotFoundError(filename=...)


def _validate() -> None:
	Limits.model_validate({"retries": KEY})  # pydantic's text repeats the input


def _refused() -> None:
	raise Refused({"error": {"message": f"invalid key {KEY}"}})


def _unauthorized() -> None:
	raise Unauthorized(httpx.Response(401, text=f"unknown key {KEY}"))


@pytest.mark.parametrize("raise_it", [_open_missing, _validate, _refused, _unauthorized])
async def test_a_cause_whose_text_is_not_its_arguments_shows_no_secret(raise_it: Any) -> None:
	"""An OSError's file name, pydantic's ``input_value``, a text built from an attribute: each
	cause in the chain is printed without the secret, and keeps its type (or a subclass of it).

	Only arguments and notes were masked: these three printed the key in the traceback."""

	def fail(request: Any) -> Any:
		raise_it()

	om = OpenMolt({"openai": {"api_key": KEY}}, entry_points=False)
	agent = om.create_agent(name="A", model=ScriptedModel([fail]))
	with pytest.raises(RunError) as raised:
		await agent.run("go")
	shown = "".join(traceback.format_exception(raised.value))
	assert "[redacted]" in shown and not leaks(shown, KEY), shown
	cause = raised.value.__cause__
	assert isinstance(cause, OSError | ValidationError | Refused | Unauthorized), type(cause)
	assert type(cause).__name__ in shown and not leaks(repr(cause) + str(cause), KEY)


async def test_a_cause_that_shows_no_secret_is_the_same_object() -> None:
	"""Only a cause that still shows a secret is replaced: the others are linked as raised."""
	raised = Unauthorized(httpx.Response(401, text="unknown key"))

	def fail(request: Any) -> Any:
		raise raised

	om = OpenMolt({"openai": {"api_key": KEY}}, entry_points=False)
	agent = om.create_agent(name="A", model=ScriptedModel([fail]))
	with pytest.raises(RunError) as caught:
		await agent.run("go")
	assert caught.value.__cause__ is raised and caught.value.__cause__.response.status_code == 401


def _grouped() -> None:
	try:
		_unauthorized()
	except Unauthorized as inner:
		raise ExceptionGroup("two calls failed", [inner, ValueError("the other one")]) from None


async def test_a_group_in_the_chain_whose_member_shows_a_secret_is_rebuilt() -> None:
	"""A task group's ExceptionGroup (concurrent calls) whose member prints the key from an
	object it keeps: the group is rebuilt with that member masked; the group's message, its
	other members and their types stay (its ``exceptions`` cannot be changed in place)."""

	def fail(request: Any) -> Any:
		_grouped()

	om = OpenMolt({"openai": {"api_key": KEY}}, entry_points=False)
	agent = om.create_agent(name="A", model=ScriptedModel([fail]))
	with pytest.raises(RunError) as raised:
		await agent.run("go")
	shown = "".join(traceback.format_exception(raised.value))
	assert "two calls failed" in shown and "the other one" in shown, shown
	assert not leaks(shown, KEY), shown
	group = raised.value.__cause__
	assert isinstance(group, ExceptionGroup)
	first, second = group.exceptions
	assert isinstance(first, Unauthorized) and isinstance(second, ValueError)


def _twice() -> None:
	try:
		_unauthorized()
	except Unauthorized as inner:
		raise Unauthorized(httpx.Response(401, text=f"retried: {KEY}")) from inner


async def test_a_cause_replaced_links_the_replaced_cause_of_its_own() -> None:
	"""Two causes in a row that each print the key from an object: the stand-in of the outer one
	links the stand-in of the inner one, never the original (innermost first)."""

	def fail(request: Any) -> Any:
		_twice()

	om = OpenMolt({"openai": {"api_key": KEY}}, entry_points=False)
	agent = om.create_agent(name="A", model=ScriptedModel([fail]))
	with pytest.raises(RunError) as raised:
		await agent.run("go")
	shown = "".join(traceback.format_exception(raised.value))
	assert "retried: [redacted]" in shown and "unknown key [redacted]" in shown, shown
	assert not leaks(shown, KEY), shown
