"""An output's raw preview reads as the loop reads it: the nulls of properties left out are gone.

Under OpenAI's strict mode every property is required, so an optional one the model leaves out
comes as ``null``, and `FittedSchema.restore` removes it before the loop validates the reply. The
``text:delta`` pieces of an output that is not a string are its JSON source, so they showed
``"zip": null`` while the run's output had no ``zip``: the pieces no longer added up to the final
value. `ReplyDecoder` now restores them as they stream (`RawRestorer`).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from openmolt_core._support.schemafit import (
	ArrayRepair,
	Decode,
	Match,
	ObjectRepair,
	RefRepair,
	UnionRepair,
)
from openmolt_core.capabilities._rawrestore import RawRestorer
from openmolt_core.capabilities._replydecoder import ReplyDecoder, TextPiece

ITEM = ObjectRepair((("v", True, None),))
NODE = RefRepair()
NODE.target = ObjectRepair((("note", True, None), ("child", True, NODE)))
REPAIR = ObjectRepair(
	(
		("zip", True, None),
		("tags", True, ArrayRepair(ITEM)),
		("where", False, ObjectRepair((("floor", True, None),))),
		(
			"either",
			True,
			UnionRepair(
				(
					(Match(frozenset({"string"})), None),
					(
						Match(frozenset({"object"}), frozenset({"a"})),
						ObjectRepair((("b", True, None),)),
					),
				)
			),
		),
		("tree", True, NODE),
		("text", False, Decode()),
	)
)

VALUES: list[dict[str, Any]] = [
	{"zip": None, "city": "Oslo"},
	{"city": "Oslo", "zip": None},
	{"zip": None},
	{"zip": "0150", "city": 'Oslo \\ "q" \u00e9'},
	{"tags": [{"k": "a", "v": None}, {"k": "b", "v": 2}, {"v": None}], "zip": None},
	{"tags": [], "where": {"floor": None, "room": [1, None, {"floor": None}]}},
	{"where": None, "zip": None, "n": -1.5e3, "ok": True, "no": False, "none": None},
	{"either": {"a": 1, "b": None}, "zip": None},
	{"either": 'a "string" with } and ]'},
	{"either": None},
	{"tree": {"note": None, "child": {"note": "x", "child": {"note": None, "child": None}}}},
	{"text": json.dumps({"k": [1, None]}), "zip": None},
	{"text": "not json", "z": {"zip": None}},
]


def _restored(value: Any) -> Any:
	out = copy.deepcopy(value)
	return REPAIR(out)


def _source(value: Any) -> str:
	return json.dumps({"commands": [{"type": "finish", "output": value}]}, indent=1)


def _pieces(text: str, size: int, repair: Any = (False, REPAIR)) -> list[TextPiece]:
	decoder = ReplyDecoder(output_repair=repair)
	out: list[TextPiece] = []
	for i in range(0, len(text), size):
		out.extend(p for p in decoder.feed(text[i : i + size]) if isinstance(p, TextPiece))
	return [p for p in out if p.field == "output"]


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("size", [1, 2, 5, 13, 10_000])
def test_the_raw_pieces_add_up_to_the_restored_output(value: dict[str, Any], size: int) -> None:
	"""Whatever the chunking, the pieces are the JSON of the value `restore` makes."""
	pieces = _pieces(_source(value), size)
	assert pieces and all(p.raw for p in pieces)
	joined = "".join(p.text for p in pieces)
	assert json.loads(joined) == _restored(value), joined


def test_the_pieces_stream_before_the_output_is_whole() -> None:
	"""A long string in the output comes in pieces as it arrives, not once it is whole."""
	text = _source({"zip": None, "note": "x" * 200, "city": "Oslo"})
	decoder = ReplyDecoder(output_repair=(False, REPAIR))
	start = text.index('"note"')
	early = decoder.feed(text[: start + 100])
	shown = "".join(p.text for p in early if isinstance(p, TextPiece))
	assert shown.startswith('{"note":"xxx') and "zip" not in shown


def test_a_null_output_its_property_drops_is_not_previewed() -> None:
	"""An optional output sent as null: no piece (the finish has no output)."""
	assert _pieces(_source(None), 3, (True, None)) == []
	assert "".join(p.text for p in _pieces(_source(None), 3, (False, None))) == "null"


def test_without_a_repair_the_source_streams_as_it_came() -> None:
	"""No repair: the pieces are the source itself, whitespace and nulls included."""
	text = _source({"zip": None})
	pieces = _pieces(text, 4, None)
	assert "".join(p.text for p in pieces) == '{\n    "zip": null\n   }'


def test_a_restorer_reads_what_follows_the_value_as_nothing() -> None:
	"""Once the value closed, the rest is not its."""
	restorer = RawRestorer(False, REPAIR)
	assert restorer.feed('{"zip": null, "a": 1}') == '{"a":1}'
	assert restorer.feed(', "b": 2}') == ""
