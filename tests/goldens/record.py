"""Record the goldens: ``uv run --group test python -m tests.goldens.record [--check] [name ...]``.

Without ``--check`` it rewrites ``tests/goldens/<name>.json`` (every scenario, or the named ones):
run it from the repository root after a change that is MEANT to change what agents send, save or
journal, and review the diff before committing it. With ``--check`` it writes nothing, compares
fresh recordings with the files, prints where they differ and exits 1 on any difference
(``test_goldens.py`` runs it so).

It always runs in `environment` (it restarts itself to get it): without the ``OPENMOLT_*``
variables a developer may have set (``OPENMOLT_OPENAI_BASE_URL`` would change every URL), and with
``PYTHONHASHSEED=0``, so a recording is reproducible whatever the developer's shell says. The bytes
no longer depend on the seed (the fitted reply schema sorts what it took from sets, and
``tests/core/test_structured.py`` fits in processes with other seeds); the recordings were checked
with seeds 0, 1, 7 and 12345 on 2026-12-03.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).parent
HASH_SEED = "0"
"""The hash seed every recording runs with (see the module docstring)."""


def golden_path(name: str) -> Path:
	"""The file of one scenario's golden."""
	return HERE / f"{name}.json"


def differences(expected: Any, actual: Any, path: str = "") -> Iterator[str]:
	"""Where two JSON values differ, as paths (``anthropic.requests[1].body.system``)."""
	if isinstance(expected, dict) and isinstance(actual, dict):
		for key in sorted(expected.keys() | actual.keys()):
			where = f"{path}.{key}" if path else key
			if key not in actual:
				yield f"{where}: missing"
			elif key not in expected:
				yield f"{where}: new"
			else:
				yield from differences(expected[key], actual[key], where)
	elif isinstance(expected, list) and isinstance(actual, list):
		if len(expected) != len(actual):
			yield f"{path or '<root>'}: {len(expected)} items expected, {len(actual)} recorded"
		for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
			yield from differences(e, a, f"{path}[{i}]")
	elif expected != actual:
		yield f"{path or '<root>'}: expected {_short(expected)}, recorded {_short(actual)}"


def _short(value: Any) -> str:
	text = repr(value)
	return text if len(text) <= 160 else text[:157] + "..."


def environment() -> dict[str, str]:
	"""The environment recordings run in (see the module docstring)."""
	env = {k: v for k, v in os.environ.items() if not k.startswith("OPENMOLT_")}
	env["PYTHONHASHSEED"] = HASH_SEED
	return env


async def main(args: list[str]) -> int:
	"""Record the named scenarios (all when none is named); write or check their files."""
	from ._matrix import SCENARIOS
	from ._recorder import dumps, record

	check = "--check" in args
	names = [a for a in args if a != "--check"]
	known = [s.name for s in SCENARIOS]
	unknown = sorted(set(names) - set(known))
	if unknown:
		print(f"unknown scenario(s) {unknown}; use some of: {known}", file=sys.stderr)
		return 2
	failed = 0
	for scenario in SCENARIOS:
		if names and scenario.name not in names:
			continue
		with tempfile.TemporaryDirectory(prefix="goldens-") as tmp:
			golden = await record(scenario, Path(tmp))
		path = golden_path(scenario.name)
		if not check:
			path.write_text(dumps(golden), encoding="utf-8")
			print(f"wrote {path}")
			continue
		if not path.is_file():
			print(f"{scenario.name}: no golden file {path}; record it (see {__name__})")
			failed += 1
			continue
		text = path.read_text(encoding="utf-8")
		if text == dumps(golden):
			continue
		failed += 1
		found = list(differences(json.loads(text), golden))
		print(f"{scenario.name}: differs from {path.name} ({len(found)} places)")
		for line in found[:25] or ["the same JSON, written differently (record it again)"]:
			print(f"  {line}")
	return 1 if failed else 0


def run(args: list[str]) -> int:
	"""Run `main` in `environment`, restarting the interpreter if needed."""
	env = environment()
	if env != dict(os.environ):
		os.execve(sys.executable, [sys.executable, "-m", "tests.goldens.record", *args], env)
	return anyio.run(main, args)


if __name__ == "__main__":
	sys.exit(run(sys.argv[1:]))
