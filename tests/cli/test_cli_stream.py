"""The agent's message on a terminal as the model writes it, and --no-stream."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator

import pytest

from openmolt import OpenMolt
from openmolt_core.cli import _run_parser
from openmolt_core.cli._progress import Progress
from openmolt_core.cli._stream import LiveText
from openmolt_core.cli._summary import summary
from openmolt_core.llm import ModelRequest, ModelResponse
from openmolt_core.streaming import StreamChunk, TextDelta
from openmolt_core.testing import call_tool, finish

pytestmark = pytest.mark.anyio


class Typist:
	"""Streams scripted replies two characters at a time."""

	def __init__(self, *replies: dict[str, object]) -> None:
		self.name = "typist"
		self.model = "t"
		self.texts = [json.dumps(r) for r in replies]

	async def generate(self, request: ModelRequest) -> ModelResponse:
		return ModelResponse(text=self.texts.pop(0))

	async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
		text = self.texts.pop(0)
		for i in range(0, len(text), 2):
			yield TextDelta(text[i : i + 2])
		yield ModelResponse(text=text)


async def test_the_message_is_written_as_it_streams_and_the_spinner_pauses() -> None:
	"""The human message reaches stdout in pieces; a sub-agent's does not; the spinner waits."""
	om = OpenMolt(entry_points=False)
	helper = om.create_agent(
		name="helper",
		instructions="Helps.",
		model=Typist({"commands": [finish({"ok": 1}, human_message="sub text")]}),
	)
	main = om.create_agent(
		name="Main",
		model=Typist(
			{"commands": [call_tool("local.helper", task="x")]},
			{"commands": [finish({"ok": 2}, human_message="Hello, Zoë!\nBye")]},
		),
		tools=[helper],
	)
	out, err = io.StringIO(), io.StringIO()
	progress = Progress("spinner", err)
	live = LiveText(out, progress)
	live.attach(main)
	progress.status("working")
	writes: list[str] = []
	out.write = lambda text: writes.append(text) or len(text)  # type: ignore[method-assign]
	result = await main.run("go")
	assert result.human_message == "Hello, Zoë!\nBye"
	assert "".join(writes) == "Hello, Zoë!\nBye\n"
	assert len(writes) > 3  # in pieces
	assert live.shown(result.human_message) and not live.shown("other")
	assert "\r\x1b[K" in err.getvalue()  # the spinner was cleared before the text


def test_a_streamed_message_is_not_repeated_in_the_summary() -> None:
	"""summary(message=False) leaves the message out."""
	from openmolt_core.llm import Usage
	from openmolt_core.result import RunResult, RunState

	result = RunResult(
		output=None,
		status="success",
		human_message="hi",
		plan=[],
		steps=1,
		usage=Usage(),
		state=RunState(),
	)
	assert "message:" in summary(result)
	assert "message:" not in summary(result, message=False)


def test_no_stream_flag() -> None:
	"""--no-stream is an option of the run command (off by default)."""
	parser = _run_parser("openmolt")
	assert parser.parse_args(["agent.json"]).no_stream is False
	assert parser.parse_args(["agent.json", "--no-stream"]).no_stream is True


def test_a_call_made_again_writes_its_message_on_a_line_of_its_own() -> None:
	"""The next attempt of a step (a retry) ends the cut text's line; the last message is its."""
	from openmolt_core.events import TextDeltaEvent

	out, err = io.StringIO(), io.StringIO()
	live = LiveText(out, Progress("spinner", err))

	def delta(text: str, attempt: int, step: int = 1) -> TextDeltaEvent:
		return TextDeltaEvent(
			agent="a", step=step, index=0, field="humanMessage", text=text, attempt=attempt
		)

	live._delta(delta("Hal", 1))
	live._delta(delta("lo", 1))
	live._delta(delta("Hello", 2))
	live._delta(delta(", Zoë", 2))
	live._end(delta("", 2))  # the reply was read (llmOutput)
	assert out.getvalue() == "Hallo\nHello, Zoë\n"
	assert live.shown("Hello, Zoë") and not live.shown("Hallo")


async def test_a_message_of_a_refused_reply_is_said_to_be_refused() -> None:
	"""A finish whose output does not match the schema runs nothing, though its message was
	already written: a line says so, and the run's final message is the one it ends with."""
	schema = {
		"type": "object",
		"properties": {"n": {"type": "integer"}},
		"required": ["n"],
		"additionalProperties": False,
	}
	agent = OpenMolt(entry_points=False).create_agent(
		name="Main",
		output_schema=schema,
		model=Typist(
			{"commands": [finish({"n": "one"}, human_message="Done!")]},
			{"commands": [finish({"n": 1}, human_message="Done, really.")]},
		),
	)
	out, err = io.StringIO(), io.StringIO()
	live = LiveText(out, Progress("plain", err))
	live.attach(agent)
	result = await agent.run("go")
	assert result.status == "success" and result.human_message == "Done, really."
	assert out.getvalue() == "Done!\nDone, really.\n"
	assert err.getvalue().count("came with a reply that was refused") == 1
	assert live.shown("Done, really.") and not live.shown("Done!")


async def test_verbose_lines_start_after_the_streamed_message_ends() -> None:
	"""With --verbose on a terminal, the model-reply line follows the streamed text on a line of
	its own, never glued to its end (stdout and stderr share the screen)."""
	from openmolt_core.cli._run import watch

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Main", model=Typist({"commands": [finish({"ok": 1}, human_message="done")]})
	)
	screen = io.StringIO()
	progress = Progress("plain", screen, verbose=True)
	watch(agent, progress, stream=True, out=screen)
	await agent.run("go")
	assert "done\nopenmolt: Main step 1" in screen.getvalue()
	assert "doneopenmolt" not in screen.getvalue()


async def test_a_message_cut_by_a_failed_call_is_said_to_be_cut() -> None:
	"""A call that fails mid-message ends the cut text's line with a line saying it was cut off,
	and the message the next model writes is the one the summary takes as shown."""
	from openmolt_core.errors import ProviderError

	class Breaks(Typist):
		async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
			text = self.texts.pop(0)
			yield TextDelta(text[: text.index("three") + 2])
			raise ProviderError("overloaded", provider="typist", model="t", retryable=True)

	said: dict[str, object] = {
		"commands": [finish({"n": 5}, human_message="Two and three make five.")]
	}
	agent = OpenMolt(entry_points=False).create_agent(
		name="Main", model=[Breaks(said), Typist(said)]
	)
	out, err = io.StringIO(), io.StringIO()
	live = LiveText(out, Progress("plain", err))
	live.attach(agent)
	result = await agent.run("go")
	assert result.human_message == "Two and three make five."
	cut, whole, end = out.getvalue().split("\n")  # (a tail that may start a secret is dropped)
	assert cut and whole.startswith(cut) and cut != whole
	assert whole == "Two and three make five." and end == ""
	assert err.getvalue().count("the message above was cut off") == 1
	assert live.shown(result.human_message)


def test_a_cut_mark_of_another_attempt_or_run_writes_nothing() -> None:
	"""A ``cut`` delta of a message not being written (a sub-agent's, an earlier attempt's)."""
	from openmolt_core.events import TextDeltaEvent

	out, err = io.StringIO(), io.StringIO()
	live = LiveText(out, Progress("plain", err))
	base = {"agent": "a", "step": 1, "index": 0, "field": "humanMessage"}
	live._delta(TextDeltaEvent(**base, text="Hi", attempt=2))
	live._delta(TextDeltaEvent(**base, text="", attempt=1, cut=True))
	sub = TextDeltaEvent(**base, text="", attempt=2, cut=True)
	sub.parent_run_id = "r"
	live._delta(sub)
	assert out.getvalue() == "Hi" and err.getvalue() == ""


async def test_a_message_cut_by_the_run_s_timeout_is_said_to_be_cut() -> None:
	"""The run's ``timeout`` stops a call mid-message: its line ends, a line says it was cut
	off, and the summary (which follows) starts on a line of its own."""

	class Slow(Typist):
		async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
			import anyio

			yield TextDelta('{"commands":[{"type":"finish","humanMessage":"Two and ')
			await anyio.sleep(30)
			yield TextDelta("three")  # pragma: no cover - the run timed out

	agent = OpenMolt(entry_points=False).create_agent(name="Main", model=Slow(), timeout=1)
	out, err = io.StringIO(), io.StringIO()
	live = LiveText(out, Progress("plain", err))
	live.attach(agent)
	result = await agent.run("go")
	assert result.status == "limit_reached"
	assert out.getvalue() == "Two and \n"
	assert err.getvalue().count("the message above was cut off") == 1
	assert not live.shown("Two and ")


BIDI_CONTROL = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""Unicode's Bidi_Control characters: each reorders the text shown around it."""


async def test_every_bidi_control_and_escape_in_streamed_text_is_written_escaped() -> None:
	"""A streamed message's bidi controls (the marks among them) and terminal escapes, even
	split across deltas, reach the terminal as visible escapes, never as characters it obeys."""
	said = "Approve \x1b]8;;https://evil.example\x07this\x1b]8;;\x07 " + BIDI_CONTROL + " ok"
	main = OpenMolt(entry_points=False).create_agent(
		name="Main", model=Typist({"commands": [finish({"ok": 1}, human_message=said)]})
	)
	out = io.StringIO()
	LiveText(out, Progress("spinner", io.StringIO())).attach(main)
	await main.run("go")
	written = out.getvalue()
	assert not any(c in written for c in BIDI_CONTROL + "\x1b\x07")
	assert "\\u061c\\u200e\\u200f\\u202a" in written and "\\u001b]8;;" in written
