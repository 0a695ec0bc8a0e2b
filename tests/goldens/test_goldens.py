"""The goldens: what each agent of the matrix sends, saves and journals stays byte-identical.

The recording runs in a child interpreter, in the environment ``record.py`` pins (it says why).
When a change is meant to alter a golden, rewrite the files with
``uv run --group test python -m tests.goldens.record`` and review their diff.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ._matrix import SCENARIOS
from ._recorder import PROVIDERS, Randoms, normalize
from .record import HERE, differences, environment

ROOT = Path(__file__).parents[2]


def test_the_goldens_match_fresh_recordings() -> None:
	"""Every scenario, recorded afresh on every provider, equals its file byte for byte."""
	done = subprocess.run(
		[sys.executable, "-m", "tests.goldens.record", "--check"],
		cwd=ROOT,
		env=environment(),
		capture_output=True,
		text=True,
		timeout=300,
		check=False,
	)
	assert done.returncode == 0, (
		f"{done.stdout}\n{done.stderr[-4000:]}\nIf the change is meant, record again: "
		"uv run --group test python -m tests.goldens.record"
	)


def test_each_scenario_has_one_golden_file_and_no_file_is_stale() -> None:
	"""The files in tests/goldens/ are exactly the scenarios of the matrix."""
	names = [s.name for s in SCENARIOS]
	assert len(names) == len(set(names))
	assert sorted(p.stem for p in HERE.glob("*.json")) == sorted(names)


def test_a_golden_holds_every_part_for_every_provider() -> None:
	"""Fingerprint, saved states, step keys, events and requests, on the four providers."""
	for scenario in SCENARIOS:
		golden = json.loads((HERE / f"{scenario.name}.json").read_text(encoding="utf-8"))
		assert golden["scenario"] == scenario.name
		for provider in PROVIDERS:
			part = golden[provider.name]
			assert sorted(part) == ["events", "fingerprint", "phases", "requests", "step_keys"]
			assert len(part["fingerprint"]) == 64
			assert len(part["phases"]) == len(scenario.phases)
			assert part["requests"] and all(len(r["sha256"]) == 64 for r in part["requests"])
			assert part["step_keys"][0] == "start"
			# Numbers are unique in a run; after a resume they need not follow emission order.
			seqs = [(run, seq) for _, seq, run in part["events"]]
			assert len(seqs) == len(set(seqs)), f"{scenario.name}/{provider.name}: event numbers"


def test_the_check_names_where_a_recording_differs() -> None:
	"""A changed, missing or added value is reported with its path."""
	expected = {"a": {"keys": ["start", "model:1"], "x": 1}, "gone": 2}
	actual = {"a": {"keys": ["start", "model:2"], "x": 1}, "new": 3}
	assert list(differences(expected, actual)) == [
		"a.keys[1]: expected 'model:1', recorded 'model:2'",
		"gone: missing",
		"new: new",
	]
	assert list(differences([1, 2], [1])) == ["<root>: 2 items expected, 1 recorded"]


def test_random_values_are_numbered_in_the_order_they_appear() -> None:
	"""Stored file ids become placeholders by order of appearance; approval ids by name."""
	randoms = Randoms()
	randoms.scan('{"stored": "openmolt-file:AZr6HBoh5p95KiuF"}')
	randoms.scan('["openmolt-file:lEGXRhGS8eoSCyoQ", "openmolt-file:AZr6HBoh5p95KiuF"]')
	randoms.add("3f2a9c", "<approval-id>")
	text = normalize(
		'{"a": "openmolt-file:lEGXRhGS8eoSCyoQ", "b": "openmolt-file:AZr6HBoh5p95KiuF", '
		'"id": "3f2a9c"}',
		randoms,
	)
	assert text == (
		'{"a": "openmolt-file:<file-2>", "b": "openmolt-file:<file-1>", "id": "<approval-id>"}'
	)


def test_the_recording_port_is_a_durability_port() -> None:
	"""The recorder journals through the same port protocol a durable engine implements."""
	from openmolt_core.durability import RunPort

	from ._recorder import RecordingPort

	assert isinstance(RecordingPort(), RunPort)
