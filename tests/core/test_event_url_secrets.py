"""What in-process listeners (``agent.on``) receive masks the secrets of the URLs it shows.

The run store, the viewer and telemetry mask a URL's password and its query values named like
secrets (``?api_key=``, ``access_token``, ``sig``) though no source knows them (`mask_urls`);
the event objects handed to ``agent.on`` showed them (``tool:response``, ``error``...). The
emitter masks every event it delivers, whatever its name (each name of the registry is built
here), so a new event cannot be forgotten; a person's streamed text (``text:delta``) keeps its
links working, as every surface that sends text to a person does: its login only is masked.
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from openmolt_core import OpenMolt, events
from openmolt_core._emitter import EVENT_NAMES, EventEmitter
from openmolt_core._history import RunRecord
from openmolt_core.decisions import ApprovalRequest
from openmolt_core.llm import Usage
from openmolt_core.result import RunResult, RunState
from openmolt_core.testing import ScriptedModel, call_tool, finish

PASSWORD = "Pw-7f3a9e21c4d8"
KEY = "k3y-5d1e0f7a9b2c"
SIG = "5d1e0f7a9b2c4e6f8a0b"
TOKEN = "at-9c8b7a6d5e4f3"
LOGIN = f"postgresql://app:{PASSWORD}@db.example/runs"
KEYED = f"https://api.example/v1/x?page=2&api_key={KEY}"
SIGNED = f"https://b.s3.example/k.pdf?X-Amz-Expires=600&sig={SIG}"
BEARER = f"https://api.example/cb?access_token={TOKEN}"
TEXT = f"see {LOGIN} and {KEYED} then {SIGNED} or {BEARER}"
HIDDEN = (PASSWORD, KEY, SIG, TOKEN)


def _classes() -> dict[str, type[events.Event]]:
	"""Every event class of the registry, by its name: the kernel's and the features'."""
	found: dict[str, type[events.Event]] = {}
	for attr in (*events.__all__, *events.FEATURE_EVENTS):
		cls = getattr(events, attr)
		if isinstance(cls, type) and issubclass(cls, events.Event) and cls is not events.Event:
			default = {f.name: f.default for f in dataclasses.fields(cls)}["name"]
			found[str(default)] = cls
	for name, (_, cls) in events.REGISTERED_EVENTS.items():
		found.setdefault(name, cls)
	for name in EVENT_NAMES - set(found):  # one class for several names (the schedule's)
		found[name] = found[f"{name.partition(':')[0]}:run"]
	return found


def _result() -> RunResult:
	return RunResult(
		{"link": KEYED},
		"success",
		TEXT,
		[{"name": f"fetch {BEARER}", "status": "done"}],
		1,
		Usage(),
		RunState(run_id="r", memory=TEXT),
	)


def _hints(cls: type[Any]) -> dict[str, Any]:
	"""A class's field types, its module's names and the few its annotations name lazily."""
	known = {"ApprovalRequest": ApprovalRequest, "RunRecord": RunRecord, "RunResult": RunResult}
	names = vars(sys.modules[cls.__module__]) | vars(typing) | known | {"Usage": Usage}
	out: dict[str, Any] = {}
	for f in dataclasses.fields(cls):
		try:
			out[f.name] = eval(f.type, names) if isinstance(f.type, str) else f.type
		except NameError:
			out[f.name] = Any
	return out


def _value(cls: type[Any], name: str, hint: Any) -> Any:
	"""A value of a field's type that shows every URL secret."""
	origin = typing.get_origin(hint) or hint
	if origin is typing.Literal:
		return typing.get_args(hint)[0]
	if hint is RunResult:
		return _result()
	if isinstance(hint, type) and dataclasses.is_dataclass(hint):
		return hint(  # an ApprovalRequest, a RunRecord: each of its fields filled alike
			**{
				f.name: _value(hint, f.name, _hints(hint)[f.name])
				for f in dataclasses.fields(hint)
				if f.init
				and f.default is dataclasses.MISSING
				and f.default_factory is dataclasses.MISSING
			}
		)
	if origin in (int, float):
		return 1
	if origin is bool:
		return False
	if origin is dict or (origin is typing.Union and dict in map(typing.get_origin, hint.__args__)):
		return {"url": TEXT, "nested": [TEXT]}
	if origin is list:
		return [{"url": TEXT}] if "dict" in str(hint) else [TEXT]
	if origin is tuple:
		return (TEXT,)
	if hint is Usage:
		return Usage()
	return TEXT  # str, Any, an optional text


def _build(name: str, cls: type[events.Event]) -> events.Event:
	hints = _hints(cls)
	values = {
		f.name: _value(cls, f.name, hints[f.name])
		for f in dataclasses.fields(cls)
		if f.init
		and f.name not in {"agent", "step", "name", "run_id", "seq", "parent_run_id", "replayed"}
	}
	return cls(agent="A", step=1, name=name, **values)


def _shows(event: Any) -> list[str]:
	shown = repr(event) + repr([getattr(event, f.name) for f in dataclasses.fields(event)])
	if isinstance(event, events.FinishEvent):
		shown += repr(event.result.state) + repr(event.output)
	return [secret for secret in HIDDEN if secret in shown]


def _every_class() -> list[tuple[str, type[events.Event]]]:
	found = _classes()
	assert EVENT_NAMES <= set(found), sorted(EVENT_NAMES - set(found))  # the registry, whole
	return sorted(found.items())


@pytest.mark.parametrize(("name", "cls"), _every_class(), ids=lambda v: str(v)[:30])
def test_every_registered_event_reaches_a_listener_with_its_url_secrets_masked(
	name: str, cls: type[events.Event]
) -> None:
	event = _build(name, cls)
	got: list[Any] = []
	emitter = EventEmitter(extra=frozenset({name}))
	emitter.on(name, got.append)
	anyio.run(emitter.deliver, event)
	assert got, name
	if name == "text:delta":  # a person's text: the login masked, the links kept
		assert PASSWORD not in got[0].text and KEYED in got[0].text, got[0].text
		return
	assert _shows(got[0]) == [], (name, got[0])


def test_a_finish_event_keeps_its_result_s_type_and_leaves_the_run_s_own_result_alone() -> None:
	result = _result()
	event = events.FinishEvent(agent="A", step=1, result=result)
	got: list[Any] = []
	emitter = EventEmitter()
	emitter.on("finish", got.append)
	anyio.run(emitter.deliver, event)
	assert isinstance(got[0].result, RunResult) and got[0].status == "success"
	assert KEY not in repr(got[0].output) and "[redacted]" in repr(got[0].output)
	assert result.output == {"link": KEYED} and result.state.memory == TEXT  # what run() returns


def test_an_event_without_url_secrets_is_delivered_as_it_is() -> None:
	plain = {"url": "https://api.example/search?q=weather+in+oslo&page=2"}
	event = events.ToolCallEvent(agent="A", step=1, tool="http.get", input=plain)
	got: list[Any] = []
	emitter = EventEmitter()
	emitter.on("tool:call", got.append)
	anyio.run(emitter.deliver, event)
	assert got[0].input == plain


@dataclass(slots=True, kw_only=True)
class _Found(events.Event):
	where: Any
	name: str = "acme:found"


def test_a_third_party_event_is_masked_too() -> None:
	event = _Found(agent="A", step=1, where={"u": TEXT})
	got: list[Any] = []
	emitter = EventEmitter(extra=frozenset({"acme:found"}))
	emitter.on("acme:found", got.append)
	anyio.run(emitter.deliver, event)
	assert not [s for s in HIDDEN if s in repr(got[0])], got[0]


@pytest.mark.anyio
async def test_a_run_s_listeners_see_no_url_secret_no_source_knows() -> None:
	def fetch(url: str) -> str:
		"""Fetch a URL."""
		if "fail" in url:
			raise RuntimeError(f"could not reach {url}")
		return f"moved to {SIGNED}; mirror {LOGIN}"

	model = ScriptedModel(
		[
			call_tool("local.fetch", url=KEYED),
			call_tool("local.fetch", url=f"{BEARER}&fail=1"),
			finish({"result": TEXT}, human_message=TEXT),
		]
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Fetcher", model=model, tools=[fetch])
	seen: list[Any] = []
	for name in sorted(EVENT_NAMES):
		agent.on(name, seen.append)
	result = await agent.run(f"fetch {KEYED}")
	names = {e.name for e in seen}
	assert {"tool:call", "tool:response", "error", "finish", "llmOutput"} <= names, names
	for event in seen:
		if event.name == "text:delta":  # a person's text: its links work, its logins masked
			assert PASSWORD not in event.text, event
			continue
		assert _shows(event) == [], event
	assert KEY in repr(result.state.messages)  # the model still reads what it needs
