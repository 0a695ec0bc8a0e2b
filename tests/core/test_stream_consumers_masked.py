"""A stream is masked once, where it is made, with every secret any surface masks: not per delta.

The reply's text is masked by the streaming capability as it streams (`StreamMask`: what may
start a secret is held until it is whole). A consumer that masked each delta again on its own
(a sub-agent's caller, the AG-UI endpoint, the server's responses) would turn a short secret that
starts a delta into ``[redacted]`` in the middle of a word, and could not join the halves of a
secret it knows and the stream's mask did not. These tests meet the sub-agent path the way
tests/core/test_stream_mask_families.py meets the mask: the streamed text, joined, is what
`mask` makes of the whole text.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import quote

import pytest

from openmolt import OpenMolt
from openmolt_core._support.masking import mask
from openmolt_core.testing import call_tool, finish
from openmolt_core.tools import ToolContext, tool
from tests.core.test_streaming import Streamer

pytestmark = pytest.mark.anyio

SIZES = [1, 2, 3, 5, 8]
LONG = "sk-live-7f3a9c2e11"
WIDE = "sk-Abc/def+gh\u00e9:jkl"  # non-ASCII (streamed as a JSON escape by the model)

SAYINGS = {
	"short, inside a word": ("umbre", "Take xumbre rest and umbrella, it rains."),
	"short, alone": ("umbre", "the pin is umbre, keep it; umbre."),
	"long": (LONG, f"the key is {LONG}, keep it"),
	"non-ASCII": (WIDE, f"the key is {WIDE} now"),
	"base64": (LONG, f"b64 {base64.b64encode(LONG.encode()).decode()} end"),
	"percent-encoded": (WIDE, f"see https://x.example/?k={quote(WIDE, safe='')} ok"),
}


async def _nested_text(secret: str, said: str, size: int, *, learned: bool = False) -> str:
	"""What a sub-agent of another instance streams to its caller's listeners, joined."""
	om = OpenMolt(entry_points=False)

	@tool(labels=[])
	def refresh(context: ToolContext) -> str:
		"""Refresh the token."""
		om.secrets.add(secret)  # a secret learned mid-run (an OAuth2 refresh)
		return "ok"

	first = [{"commands": [call_tool("local.refresh")]}] if learned else []
	helper = OpenMolt(entry_points=False).create_agent(
		name="helper",
		instructions="Helps.",
		model=Streamer([{"commands": [finish({"n": 1}, human_message=said)]}], size=size),
	)
	if not learned:
		om.secrets.add(secret)
	main = om.create_agent(
		name="main",
		model=Streamer(
			[
				*first,
				{"commands": [call_tool("local.helper", task="x")]},
				{"commands": [finish({"n": 2}, human_message="done")]},
			],
			size=size,
		),
		tools=[helper, refresh],
	)
	async with main.stream("go") as run:
		events = [e async for e in run]
		await run.result()
	await om.aclose()
	return "".join(
		e.text
		for e in events
		if e.name == "text:delta" and e.parent_run_id == run.run_id and e.field == "humanMessage"
	)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("case", list(SAYINGS))
async def test_a_sub_agents_deltas_reach_its_caller_masked_like_the_whole_text(
	case: str, size: int
) -> None:
	"""A caller's secret, in any spelling, split anywhere: its listeners read mask(whole)."""
	secret, said = SAYINGS[case]
	streamed = await _nested_text(secret, said, size)
	assert streamed == mask(said, frozenset({secret}))


@pytest.mark.parametrize("size", [1, 3])
async def test_a_secret_the_caller_learns_mid_run_is_held_in_its_sub_agents_deltas(
	size: int,
) -> None:
	"""A token the caller's instance learns before the sub-agent writes it never streams."""
	streamed = await _nested_text(LONG, f"the key is {LONG}, keep it", size, learned=True)
	assert streamed == "the key is [redacted], keep it"


@pytest.mark.parametrize("size", [1, 2, 5])
async def test_another_instances_secret_split_across_deltas_never_streams(size: int) -> None:
	"""A secret only another live instance knows (the server's responses mask it) is held too."""
	other = OpenMolt(entry_points=False)
	other.secrets.add(LONG)
	said = f"the key is {LONG}, keep it"
	agent = OpenMolt(entry_points=False).create_agent(
		name="solo",
		model=Streamer([{"commands": [finish({"n": 1}, human_message=said)]}], size=size),
	)
	async with agent.stream("go") as run:
		pieces = [e.text async for e in run if e.name == "text:delta" and e.field == "humanMessage"]
		await run.result()
	assert "".join(pieces) == "the key is [redacted], keep it"
	del other


@pytest.mark.parametrize("size", [1, 3, 64])
async def test_a_secret_set_in_the_environment_after_the_instance_never_streams(
	size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A key exported after the instance first read the environment is held and masked too."""
	om = OpenMolt(entry_points=False)
	om.secrets.values()  # the instance has read the environment
	late = "late-env-token-8c1f0a77"
	monkeypatch.setenv("ACME_LATE_TOKEN", late)  # what the server's responses mask now
	said = f"the token is {late}, keep it"
	agent = om.create_agent(
		name="solo",
		model=Streamer([{"commands": [finish({"n": 1}, human_message=said)]}], size=size),
	)
	async with agent.stream("go") as run:
		pieces = [e.text async for e in run if e.name == "text:delta" and e.field == "humanMessage"]
		await run.result()
	await om.aclose()
	assert "".join(pieces) == "the token is [redacted], keep it"


# a failed attempt's command:ready previews are marked cut, as its text is ---------------------


def _cut_ready(events: list[Any]) -> list[tuple[int, int, int]]:
	return [(e.step, e.attempt, e.index) for e in events if e.name == "command:ready" and e.cut]


@pytest.mark.parametrize("size", [2, 7])
async def test_a_failed_calls_ready_commands_are_marked_cut_before_the_fallback(size: int) -> None:
	"""Each command previewed ready by a call that then fails gets an empty ``cut`` preview."""
	reply = {
		"commands": [
			call_tool("local.look", q="a"),
			call_tool("local.look", q="b"),
			finish({"n": 1}, human_message="done"),
		]
	}
	text = json.dumps(reply)
	broken = Streamer([reply], size=size, cut=text.index('"finish"'))  # two calls whole
	agent = OpenMolt(entry_points=False).create_agent(
		name="S",
		model=[broken, Streamer([reply, {"commands": [finish({"n": 2})]}], size=size)],
		tools=[look],
	)
	async with agent.stream("go") as run:
		events = [e async for e in run]
		await run.result()
	assert _cut_ready(events) == [(1, 1, 0), (1, 1, 1)]
	names = [(e.name, getattr(e, "attempt", 0), getattr(e, "cut", False)) for e in events]
	first = names.index(("command:ready", 1, True))
	assert names[first + 1] == ("command:ready", 1, True)
	assert names.index(("model:fallback", 0, False)) > first + 1  # at once, before the fallback
	cut = [e for e in events if e.name == "command:ready" and e.cut]
	assert all(e.command == {} for e in cut)
	whole = [e for e in events if e.name == "command:ready" and not e.cut]
	assert [(e.attempt, e.index) for e in whole] == [(1, 0), (1, 1), (2, 0), (2, 1), (2, 2)]


async def test_a_call_that_completes_marks_no_ready_command_cut() -> None:
	"""A whole reply's previews carry no ``cut`` mark."""
	reply = {"commands": [call_tool("local.look", q="a")]}
	agent = OpenMolt(entry_points=False).create_agent(
		name="S", model=Streamer([reply, {"commands": [finish({"n": 2})]}]), tools=[look]
	)
	async with agent.stream("go") as run:
		events = [e async for e in run]
		await run.result()
	assert _cut_ready(events) == [] and any(e.name == "command:ready" for e in events)


@tool(labels=[])
def look(q: str) -> str:
	"""Look something up.

	Args:
		q: The query.
	"""
	return "found"


class _Exports(Streamer):
	"""Streams its reply; exports ``variable`` once the first piece is out (a provider that
	reads a fresh token into the environment while it streams)."""

	def __init__(self, replies: list[Any], variable: tuple[str, str], **options: Any) -> None:
		super().__init__(replies, **options)
		self.variable = variable

	async def stream(self, request: Any) -> Any:
		import os

		first = True
		async for chunk in super().stream(request):
			yield chunk
			if first:
				os.environ[self.variable[0]] = self.variable[1]
				first = False


@pytest.mark.parametrize("size", [1, 3, 64])
async def test_a_secret_exported_after_the_stream_began_never_streams(
	size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A key exported while the reply streams is held and masked from then on, as the whole
	text is masked (the server's responses read the environment as it is at each chunk)."""
	late = "mid-stream-token-5d2e9b41"
	monkeypatch.delenv("ACME_MIDSTREAM_TOKEN", raising=False)
	said = f"the token is {late}, keep it"
	om = OpenMolt(entry_points=False)
	model = _Exports(
		[{"commands": [finish({"n": 1}, human_message=said)]}],
		("ACME_MIDSTREAM_TOKEN", late),
		size=size,
	)
	agent = om.create_agent(name="solo", model=model)
	try:
		async with agent.stream("go") as run:
			pieces = [
				e.text async for e in run if e.name == "text:delta" and e.field == "humanMessage"
			]
			await run.result()
	finally:
		monkeypatch.delenv("ACME_MIDSTREAM_TOKEN", raising=False)
	await om.aclose()
	assert "".join(pieces) == "the token is [redacted], keep it"


# a ready command's preview hides what the text's preview hides ---------------------------------


@pytest.mark.parametrize("where", ["another instance", "the environment, later"])
async def test_a_ready_commands_preview_hides_every_secret_the_texts_preview_hides(
	where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""``command:ready`` previews the reply the text deltas preview: the same secrets are hidden.

	It was masked with the run's own redactor only, so a secret of another live instance, or
	one exported after the instance read the environment (both of which the server's responses
	and the text deltas mask), showed in the previewed call's input.
	"""
	om = OpenMolt(entry_points=False)
	om.secrets.values()  # the instance has read the environment
	other = OpenMolt(entry_points=False)
	if where == "another instance":
		secret = LONG
		other.secrets.add(secret)
	else:
		secret = "late-env-token-8c1f0a77"
		monkeypatch.setenv("ACME_LATE_TOKEN", secret)

	@tool(labels=[])
	def note(text: str) -> str:
		"""Note it."""
		return "ok"

	agent = om.create_agent(
		name="solo",
		model=Streamer(
			[
				{"commands": [call_tool("local.note", text=f"key {secret}")]},
				{"commands": [finish({"n": 1}, human_message="done")]},
			],
			size=3,
		),
		tools=[note],
	)
	async with agent.stream("go") as run:
		ready = [repr(e.command) async for e in run if e.name == "command:ready"]
		await run.result()
	await om.aclose()
	assert ready and all("[redacted]" in r and secret not in r for r in ready[:1]), ready
	del other
