"""An output sent as JSON text (a fitted schema's ``output_encoded``) previews as the output itself.

Under strict structured output, an agent without an output schema has the model write its
``finish.output`` as JSON text (any JSON value has no other strict form). `ReplyDecoder` reported
that string's content as the output's text, so the deltas of ``"Paris"`` were ``'"Paris"'`` (the
JSON source, quotes and all, marked as a decoded string) while the run's output was ``'Paris'``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from openmolt_core.capabilities._replydecoder import ReplyDecoder, TextPiece

VALUES: list[Any] = [
	"Paris",
	'say "hi"\n\ttab \\ slash',
	"caf\u00e9 \U0001f600",
	"",
	{"city": "Oslo", "codes": [1, 2.5, None, True], "note": 'a "q"'},
	[1, "two"],
	42,
	-1.5e3,
	None,
	False,
]


def _pieces(text: str, size: int) -> list[TextPiece]:
	decoder = ReplyDecoder(encoded_output=True)
	out: list[TextPiece] = []
	for i in range(0, len(text), size):
		out.extend(p for p in decoder.feed(text[i : i + size]) if isinstance(p, TextPiece))
	return [p for p in out if p.field == "output"]


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_the_pieces_of_an_encoded_output_add_up_to_the_output(value: Any, size: int) -> None:
	"""A string output comes decoded, any other as its JSON source, whatever the chunking."""
	command = {"type": "finish", "status": "success", "output": json.dumps(value)}
	text = json.dumps({"commands": [command]})
	pieces = _pieces(text, size)
	joined = "".join(p.text for p in pieces)
	assert all(p.index == 0 for p in pieces)
	if isinstance(value, str):
		assert joined == value and not any(p.raw for p in pieces)
	else:
		assert json.loads(joined) == value and all(p.raw for p in pieces)


def test_without_the_flag_the_text_is_the_output() -> None:
	"""An output that is a string of its own (no encoding) streams as that string."""
	command = {"type": "finish", "status": "success", "output": '"quoted"'}
	decoder = ReplyDecoder()
	pieces = decoder.feed(json.dumps({"commands": [command]}))
	assert "".join(p.text for p in pieces if isinstance(p, TextPiece)) == '"quoted"'


def test_an_encoded_output_that_is_no_json_reports_no_more() -> None:
	"""Text that is no JSON stops the output's preview (the parser says what is wrong)."""
	command = {"type": "finish", "status": "success", "output": "{not json"}
	pieces = _pieces(json.dumps({"commands": [command]}), 3)
	assert "".join(p.text for p in pieces) in ("", "{")
