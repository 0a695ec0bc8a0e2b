"""The incremental decoder of a reply's commands (openmolt_core._replystream)."""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from openmolt_core._replystream import CommandDone, ReplyDecoder, ReplyPiece, TextPiece
from openmolt_core.commands import ENDS_REPLY

# Text with what makes decoding hard: quotes, backslashes, control characters (escaped by
# json.dumps), characters outside the BMP (a surrogate pair with ensure_ascii) and accents.
_TEXT = st.text(
	alphabet=st.one_of(
		st.sampled_from(['"', "\\", "\n", "\t", "\x01", "/", "é", "😀", "𝄞", "{", "}", "[", "]"]),
		st.characters(codec="utf-8", exclude_categories=("Cs",)),
	),
	max_size=40,
)
_JSON = st.recursive(
	st.none() | st.booleans() | st.integers() | _TEXT,
	lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
	max_leaves=8,
)
_COMMAND = st.one_of(
	st.builds(
		lambda t, i: {"type": "callTool", "tool": t, "input": i},
		_TEXT,
		st.dictionaries(_TEXT, _JSON, max_size=3),
	),
	st.builds(
		lambda o, m: {"type": "finish", "status": "success", "output": o, "humanMessage": m},
		_JSON,
		_TEXT,
	),
	st.builds(lambda m: {"type": "requestHumanInput", "message": m}, _TEXT),
	st.builds(lambda p: {"type": "updatePlan", "plan": [{"name": p}]}, _TEXT),
)
_STREAMED = {"finish": ("humanMessage", "output"), "requestHumanInput": ("message",)}


def _until_end(commands: list[dict[str, Any]]) -> list[dict[str, Any]]:
	"""The commands up to the first that ends the reply (those after it never run)."""
	for index, command in enumerate(commands):
		if command["type"] in _STREAMED:
			return commands[: index + 1]
	return commands


def _reply(commands: list[dict[str, Any]], ascii_only: bool, indent: int | None) -> str:
	return json.dumps({"commands": commands}, ensure_ascii=ascii_only, indent=indent)


def _split(text: str, cuts: list[int]) -> list[str]:
	points = sorted({c % (len(text) + 1) for c in cuts})
	bounds = [0, *points, len(text)]
	return [text[a:b] for a, b in itertools.pairwise(bounds)]


def _feed(chunks: list[str]) -> list[tuple[int, ReplyPiece]]:
	"""Every piece with the number of characters fed when it was reported."""
	decoder = ReplyDecoder()
	seen: list[tuple[int, ReplyPiece]] = []
	fed = 0
	for chunk in chunks:
		fed += len(chunk)
		seen += [(fed, piece) for piece in decoder.feed(chunk)]
	return seen


def _texts(pieces: list[tuple[int, ReplyPiece]]) -> dict[tuple[int, str], str]:
	out: dict[tuple[int, str], str] = {}
	for _, piece in pieces:
		if isinstance(piece, TextPiece):
			out[piece.index, piece.field] = out.get((piece.index, piece.field), "") + piece.text
	return out


@settings(max_examples=300, deadline=None)
@given(
	st.lists(_COMMAND, min_size=1, max_size=4),
	st.booleans(),
	st.sampled_from([None, 0, 2]),
	st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
)
def test_any_split_gives_the_final_strings(
	commands: list[dict[str, Any]], ascii_only: bool, indent: int | None, cuts: list[int]
) -> None:
	"""For any split of a valid reply, the pieces of each field concatenate to its final value."""
	text = _reply(commands, ascii_only, indent)
	pieces = _feed(_split(text, cuts))
	texts = _texts(pieces)
	raw = {k for _, p in pieces if isinstance(p, TextPiece) and p.raw for k in [(p.index, p.field)]}
	expected: dict[tuple[int, str], Any] = {}
	for index, command in enumerate(_until_end(commands)):
		for name in _STREAMED.get(command["type"], ()):
			expected[index, name] = command[name]
	for key, value in expected.items():
		if key in raw:
			assert json.loads(texts[key]) == value
		elif value != "":
			assert texts[key] == value
		else:
			assert key not in texts
	assert set(texts) <= set(expected)
	done = [p for _, p in pieces if isinstance(p, CommandDone)]
	assert [(d.index, d.command) for d in done] == list(enumerate(_until_end(commands)))


@settings(max_examples=200, deadline=None)
@given(
	st.lists(_COMMAND, min_size=1, max_size=3),
	st.booleans(),
	st.lists(st.integers(min_value=0, max_value=10_000), max_size=8),
)
def test_nothing_is_reported_before_it_arrived(
	commands: list[dict[str, Any]], ascii_only: bool, cuts: list[int]
) -> None:
	"""A command is done only once its closing brace came, and text is a prefix at every point."""
	text = _reply(commands, ascii_only, None)
	# Character by character, the earliest moment each command can be known to be complete.
	earliest = {p.index: fed for fed, p in _feed(list(text)) if isinstance(p, CommandDone)}
	for index, fed in earliest.items():
		assert text[fed - 1] == "}"
		assert json.loads(text[:fed] + "]}")["commands"][index] == commands[index]
	chunks = _split(text, cuts)
	for fed, piece in _feed(chunks):
		if isinstance(piece, CommandDone):
			assert fed >= earliest[piece.index]
	# Cut anywhere: the text so far is a prefix of the final value, and no cut command is done.
	for end in sorted({c % (len(text) + 1) for c in cuts}):
		pieces = _feed(_split(text[:end], cuts))
		for (index, name), got in _texts(pieces).items():
			final = commands[index][name]
			if isinstance(final, str):
				assert final.startswith(got)
			else:
				assert json.dumps(final, ensure_ascii=ascii_only).startswith(got) or got
		for _, piece in pieces:
			if isinstance(piece, CommandDone):
				assert earliest[piece.index] <= end


def test_escapes_cut_in_the_middle_wait_for_their_end() -> None:
	"""A chunk ending inside an escape or between the halves of a surrogate pair holds them back."""
	text = '{"commands":[{"type":"finish","status":"success","humanMessage":"a\\u00e9\\ud83d\\ude00\\n"}]}'
	start = text.index("a\\u")
	decoder = ReplyDecoder()
	assert decoder.feed(text[: start + 4]) == [TextPiece(0, "humanMessage", "a")]  # a\u0
	assert decoder.feed(text[start + 4 : start + 7]) == [TextPiece(0, "humanMessage", "é")]
	high = text.index("\\ud83d")
	assert decoder.feed(text[start + 7 : high + 6]) == []  # the high half alone is no character
	assert decoder.feed(text[high + 6 : high + 9]) == []  # \ud
	assert decoder.feed(text[high + 9 : high + 12]) == [TextPiece(0, "humanMessage", "😀")]
	assert decoder.feed(text[high + 12 : high + 13]) == []  # a lone backslash
	rest = decoder.feed(text[high + 13 :])
	assert rest[0] == TextPiece(0, "humanMessage", "\n")
	assert isinstance(rest[1], CommandDone)


def test_other_shapes_and_prose() -> None:
	"""A single command, a bare list, a fence, prose and a think block before the JSON."""
	one = ReplyDecoder().feed('{"type":"finish","status":"success","humanMessage":"hi"}')
	assert one[0] == TextPiece(0, "humanMessage", "hi")
	assert isinstance(one[1], CommandDone) and one[1].index == 0
	bare = ReplyDecoder().feed('[{"type":"wait","seconds":1},{"type":"wait","seconds":2}]')
	assert [p.index for p in bare if isinstance(p, CommandDone)] == [0, 1]
	fenced = '<think>maybe {x}</think>Sure:\n```json\n{"commands":[{"type":"requestHumanInput","message":"ok?"}]}\n```'
	pieces = ReplyDecoder().feed(fenced)
	assert pieces[0] == TextPiece(0, "message", "ok?")
	assert isinstance(pieces[1], CommandDone)


def test_no_json_stops_reporting() -> None:
	"""At the first character that is no JSON, the decoder stops; a string output is decoded."""
	decoder = ReplyDecoder()
	good = '{"commands":[{"type":"finish","output":"dé'
	assert decoder.feed(good) == [TextPiece(0, "output", "dé")]
	assert decoder.feed('\\x"}]}') == []
	assert decoder.feed('{"type":"finish","humanMessage":"more"}') == []
	other = ReplyDecoder().feed('{"commands":[{"type":"updateMemory","data":"x","message":"y"}]}')
	assert [type(p) for p in other] == [CommandDone]


def test_a_lone_surrogate_escape_is_reported_as_a_replacement_character() -> None:
	"""A lone ``\\ud800`` (a reply the parser refuses) never reaches a preview: it cannot be encoded."""
	lone = '{"commands":[{"type":"finish","humanMessage":"a\\ud800b\\udc00","output":"\\udbff"}]}'
	for size in (1, 3, len(lone)):
		decoder = ReplyDecoder()
		pieces = [p for i in range(0, len(lone), size) for p in decoder.feed(lone[i : i + size])]
		texts = _texts([(0, p) for p in pieces])
		assert texts == {(0, "humanMessage"): "a\ufffdb\ufffd", (0, "output"): "\ufffd"}
		done = [p for p in pieces if isinstance(p, CommandDone)]
		assert json.dumps(done[0].command, ensure_ascii=False).encode()  # encodable as UTF-8


def test_nothing_after_a_command_that_ends_the_reply_is_reported() -> None:
	"""After a finish or a question (ENDS_REPLY), the commands that never run are not previewed."""
	assert {c.example["type"] for c in ENDS_REPLY} == set(_STREAMED)  # the decoder's own list
	for end in (
		'{"type":"finish","humanMessage":"a"}',
		'{"type":"requestHumanInput","message":"a"}',
	):
		text = f'{{"commands":[{end},{{"type":"finish","humanMessage":"b"}},{{"type":"wait"}}]}}'
		pieces = _feed(list(text))
		assert _texts(pieces) == {(0, "humanMessage" if "finish" in end else "message"): "a"}
		assert [p.index for _, p in pieces if isinstance(p, CommandDone)] == [0]


def test_brackets_inside_an_open_think_block_are_read_in_linear_time() -> None:
	"""A stream that opens a think block and sends brackets costs time in its length, not squared."""
	import time

	decoder = ReplyDecoder()
	text = "<think>" + "{[" * 200_000
	start = time.process_time()
	pieces = [p for i in range(0, len(text), 64) for p in decoder.feed(text[i : i + 64])]
	# 0.3 s here; re-reading the prefix took minutes; CPU time: another process's load does not stretch it
	assert time.process_time() - start < 5
	assert pieces == []
	pieces = decoder.feed('</think>{"type": "finish", "output": 1}')
	assert any(isinstance(p, CommandDone) for p in pieces)
