"""Run observers hear every run: start, redacted events, how it ends; they never break a run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import pytest

from openmolt import OpenMolt, RunError
from openmolt_core.durability import ForwardingPort, RunPort
from openmolt_core.events import Event
from openmolt_core.observe import ObservedRun, RunObserver, RunOutcome, event_data
from openmolt_core.testing import ScriptedModel, call_tool, finish, mock_http
from openmolt_weather import weather

pytestmark = pytest.mark.anyio

SECRET = "wx-secret-123"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


class Recorder(RunObserver):
	def __init__(self) -> None:
		self.seen: list[tuple[str, Any]] = []
		self.keys: list[str] = []

	async def started(self, run: ObservedRun) -> None:
		self.seen.append(("started", (run.agent_name, run.model, run.input, run.resumed)))

	async def event(self, run: ObservedRun, event: Event) -> None:
		self.seen.append((event.name, event_data(event, run.redact)))

	async def ended(self, run: ObservedRun, outcome: RunOutcome) -> None:
		self.seen.append(("ended", (outcome.status, outcome.error)))

	def wrap_port(self, run: ObservedRun, port: RunPort) -> RunPort:
		recorder = self

		class Keys(ForwardingPort):
			async def step(self, key: str, fn: Callable[[], Awaitable[Any]], **codec: Any) -> Any:
				recorder.keys.append(key)
				return await self.port.step(key, fn, **codec)

		return Keys(port)


def weather_api(request: httpx.Request) -> httpx.Response:
	# The API echoes the key it was sent: observers must never see it.
	return httpx.Response(200, json={"summary": "rain", "echo": request.headers["X-Api-Key"]})


def _om(*observers: RunObserver) -> OpenMolt:
	om = OpenMolt(
		entry_points=False,
		http_client=mock_http(weather_api),
		integrations={"weather": {"apiKey": SECRET}},
		observers=observers,
	)
	om.register_integration("weather", weather.WEATHER)
	return om


async def test_an_observer_hears_the_start_each_event_and_the_end_in_order() -> None:
	"""Start (with input and model), every event with secrets masked, then the outcome."""
	recorder = Recorder()
	heard: list[str] = []
	model = ScriptedModel([call_tool("weather.getForecast", city="Oslo"), finish(result="Wet.")])
	agent = _om(recorder).create_agent(name="Umbrella", model=model, integrations=["weather"])
	agent.on("tool:response", lambda event: heard.append(str(event.response)))
	result = await agent.run("Oslo?")
	assert result.status == "success"
	names = [name for name, _ in recorder.seen]
	assert names == [
		"started",
		"llmOutput",
		"commandsQueued",
		"tool:call",
		"tool:response",
		"llmOutput",
		"commandsQueued",
		"finish",
		"ended",
	]
	assert recorder.seen[0][1] == ("Umbrella", "scripted", "Oslo?", False)
	response = dict(recorder.seen)["tool:response"]
	assert response["response"] == {"summary": "rain", "echo": "[redacted]"}
	assert SECRET not in repr(recorder.seen)
	assert "raw" not in dict(recorder.seen)["llmOutput"]  # the provider's payload stays out
	assert recorder.seen[-1] == ("ended", ("success", None))
	assert heard and SECRET not in heard[0]  # the agent's own handlers still hear the event
	assert recorder.keys == ["model:1", "tool:1:0:weather.getForecast", "model:2"]


async def test_a_failing_observer_never_breaks_the_run(caplog: pytest.LogCaptureFixture) -> None:
	"""Every method raises: the run still succeeds, and the failures are logged."""

	class Broken(RunObserver):
		async def started(self, run: ObservedRun) -> None:
			raise RuntimeError("started")

		async def event(self, run: ObservedRun, event: Event) -> None:
			raise RuntimeError("event")

		async def ended(self, run: ObservedRun, outcome: RunOutcome) -> None:
			raise RuntimeError("ended")

		def wrap_port(self, run: ObservedRun, port: RunPort) -> RunPort:
			raise RuntimeError("wrap_port")

	recorder = Recorder()
	agent = _om(Broken(), recorder).create_agent(name="A", model=ScriptedModel([finish(ok=1)]))
	result = await agent.run("go")
	assert result.output == {"ok": 1}
	assert [n for n, _ in recorder.seen][-1] == "ended"
	assert "run observer" in caplog.text


async def test_a_cancelled_run_is_reported_as_cancelled() -> None:
	"""Cancelling the run's scope still tells the observers (shielded) how it ended."""
	recorder = Recorder()
	started = anyio.Event()

	async def hang() -> str:
		"""Never returns."""
		started.set()
		await anyio.sleep_forever()
		return ""

	model = ScriptedModel([call_tool("local.hang")])
	agent = _om(recorder).create_agent(name="A", model=model, tools=[hang])
	async with anyio.create_task_group() as tg:
		tg.start_soon(agent.run, "go")
		await started.wait()
		tg.cancel_scope.cancel()
	assert recorder.seen[-1] == ("ended", ("cancelled", None))


async def test_a_provider_failure_is_reported_with_its_redacted_message() -> None:
	"""A run that raises RunError ends as ``error`` with the error's (redacted) text."""
	recorder = Recorder()

	def fail(request: Any) -> str:
		raise RuntimeError(f"upstream refused key {SECRET}")

	agent = _om(recorder).create_agent(
		name="A", model=ScriptedModel([fail]), integrations=["weather"]
	)
	with pytest.raises(RunError):
		await agent.run("go")
	status, error = recorder.seen[-1][1]
	assert status == "error"
	assert "upstream refused" in error and SECRET not in error


async def test_observers_appended_later_hear_the_next_run() -> None:
	"""``om.observers`` is a plain list; an instance starts with none."""
	om = _om()
	assert om.observers == [] and om.run_store is None
	agent = om.create_agent(name="A", model=ScriptedModel([finish(ok=1), finish(ok=2)]))
	await agent.run("one")
	recorder = Recorder()
	om.observers.append(recorder)
	await agent.run("two")
	assert recorder.seen[0] == ("started", ("A", "scripted", "two", False))


def test_an_observers_own_port_keeps_the_journal_of_the_port_it_wraps() -> None:
	"""A wrapper of an observer's own hides neither the journal nor the optional members."""
	from openmolt_core import durability
	from openmolt_core.durability import LocalPort, journaled
	from openmolt_core.observe import completed_port

	class Journaled(LocalPort):
		async def call_started(self, key: str) -> bool:
			return False

	class Own:  # RunPort's members only (none needed here)
		pass

	inner = Journaled()
	own: Any = Own()
	completed = completed_port(own, inner)
	assert completed is not own and completed.port is own
	assert journaled(completed) and journaled(ForwardingPort(completed))
	assert not journaled(completed_port(own, LocalPort()))  # nothing to complete: itself
	assert not journaled(ForwardingPort(LocalPort()))
	assert journaled(ForwardingPort(ForwardingPort(inner)))
	assert durability.completed_port is completed_port  # its old home re-exports it


def test_what_an_event_name_stands_for_is_read_from_the_one_registry() -> None:
	"""The loop's names, a registered capability's, and the old path give the same answers."""
	from openmolt_core import events, observe
	from openmolt_core.events import Event, register_events

	class Counted(Event):
		"""A thing was counted.

		More words that the reader does not show.
		"""

	assert events.describe_event is observe.describe_event
	assert events.EventInfo is observe.EventInfo
	assert observe.describe_event("obs-reg:counted") is None
	register_events("obs-reg", {"obs-reg:counted": Counted})
	register_events("other", {"obs-reg:counted": Event})  # the first capability names it
	info = observe.describe_event("obs-reg:counted")
	assert info == observe.EventInfo("obs-reg:counted", "obs-reg", "A thing was counted.")
	finish = observe.describe_event("finish")
	assert finish is not None and finish.by == "" and finish.about


def test_what_a_parked_run_waits_for_keeps_its_old_path() -> None:
	"""`waiting_for` lives with the readers of runs; its old home gives the same function."""
	from openmolt_core import observe, result

	assert result.waiting_for is observe.waiting_for
	assert (
		observe.waiting_for({"kind": "human_input", "message": "Which?"}) == "an answer to: Which?"
	)
	assert observe.waiting_for(None) is None
