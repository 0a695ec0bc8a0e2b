"""``openmolt eval DATASET AGENT_FILE``: score an agent on a dataset, for CI (registered with the command).

```
openmolt eval evals/support.json agent.json [--min-score 0.9] [--concurrency 4]
                                            [--json report.json] [--compare old.json]
```

Prints the report as a table on stdout (or the JSON report with ``--json -``) and exits 0 when
the score reaches ``--min-score``, 1 when it does not, 2 on a usage or configuration error.
The ``openmolt.commands`` entry point ``evals`` names this module (``register_commands``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from openmolt_core import hookimpl
from openmolt_core.agentfile import CommandParser

if TYPE_CHECKING:
	from openmolt_core.plugins import CommandRegistrar
	from openmolt_evals import Dataset

__all__ = ["main", "register_commands"]


def _parser() -> argparse.ArgumentParser:
	parser = CommandParser(prog="openmolt eval", description="Score an agent on a dataset.")
	parser.add_argument("dataset", help="the dataset: a JSON file of cases")
	parser.add_argument("file", help="the agent file: agent.json or agent.py")
	parser.add_argument(
		"--min-score", type=float, default=None, help="exit 1 below this score (0 to 1)"
	)
	parser.add_argument("--concurrency", type=int, default=4, help="runs at once (default 4)")
	parser.add_argument(
		"--json", metavar="PATH", help="also write the JSON report here ('-': stdout only)"
	)
	parser.add_argument("--compare", metavar="PATH", help="an earlier JSON report to compare with")
	parser.add_argument("--env-file", help="the .env file to read (default: ./.env if present)")
	return parser


async def _main(ns: argparse.Namespace) -> int:
	from openmolt_core.agentfile import check_ready, load
	from openmolt_evals import Dataset, evaluate

	dataset = Dataset.load(ns.dataset)
	before = _earlier(ns.compare) if ns.compare else None  # a bad file fails before any run
	if ns.json and ns.json != "-":
		_check_output(ns.json, {"dataset": ns.dataset, "agent file": ns.file})
	# The judges' models get their keys from the agent's sources (the key store too), and a
	# missing key, the agent's or a judge's, fails before the first case runs.
	loaded = load(ns.file, env_file=ns.env_file, verbose=False, models=_judge_models(dataset))
	check_ready(loaded, strict=True)
	async with loaded.om:
		report = await evaluate(loaded.agent, dataset, concurrency=ns.concurrency)
	data = report.to_dict()
	await _write(ns, report.table(), data, before)
	if ns.min_score is not None and report.score < ns.min_score:
		sys.stderr.write(
			f"openmolt: score {report.score:.2f} is below --min-score {ns.min_score:g}\n"
		)
		return 1
	return 0


def _judge_models(dataset: Dataset) -> list[str]:
	"""The ``"provider:model"`` ids of the dataset's judges, each once, in order."""
	from openmolt_evals.evaluators import LLMJudge

	every = [*(dataset.evaluators or ()), *(e for c in dataset.cases for e in c.evaluators)]
	return list(
		dict.fromkeys(
			e.model for e in every if isinstance(e, LLMJudge) and isinstance(e.model, str)
		)
	)


def _check_output(path: str, inputs: dict[str, str]) -> None:
	"""Refuse, before any case runs, a ``--json`` path the report cannot take.

	The dataset and the agent file are refused: the report would overwrite them.

	Raises:
		ConfigurationError: Its folder is missing or not writable, it is a folder, or it is one of
			``inputs`` (named by what it is).
	"""
	import os

	from openmolt_core.errors import ConfigurationError

	target = Path(path)
	if not target.parent.is_dir():
		raise ConfigurationError(f"--json {path!r}: its folder does not exist")
	if target.is_dir():
		raise ConfigurationError(f"--json {path!r}: is a folder; give the report file's path")
	if not os.access(target.parent, os.W_OK | os.X_OK):
		raise ConfigurationError(f"--json {path!r}: its folder is not writable")
	for what, given in inputs.items():
		try:
			same = target.exists() and target.samefile(given)
		except OSError:
			same = False
		if same:
			raise ConfigurationError(
				f"--json {path!r}: is the {what}; the report would replace it, give another path"
			)


def _write_report(path: str, text: str) -> None:
	"""Write the report whole (a temporary file renamed over the path), readable by its owner only.

	It holds what the runs said; a link at the path is replaced, not written through.

	Raises:
		ConfigurationError: The file cannot be written (the disk is full, the folder changed).
	"""
	import os
	import tempfile

	from openmolt_core.errors import ConfigurationError

	target = Path(path)
	fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)  # 0600
	try:
		with os.fdopen(fd, "w", encoding="utf-8") as out:
			out.write(text)
		os.replace(temporary, target)
	except OSError as exc:
		Path(temporary).unlink(missing_ok=True)
		raise ConfigurationError(
			f"--json {path!r}: cannot be written: {exc.strerror or exc}"
		) from None


def _earlier(path: str) -> dict[str, Any]:
	"""The ``--compare`` report, read and checked before any case runs.

	Raises:
		ConfigurationError: The file cannot be read or is not a JSON report; the message names
			the field.
	"""
	from openmolt_evals import _read_json, check_report

	name = f"--compare {path!r}"
	return check_report(_read_json(Path(path), name), name)


async def _write(
	ns: argparse.Namespace, table: str, data: dict[str, object], before: dict[str, Any] | None
) -> None:
	await anyio.to_thread.run_sync(_write_sync, ns, table, data, before)


def _write_sync(
	ns: argparse.Namespace, table: str, data: dict[str, object], before: dict[str, Any] | None
) -> None:
	from openmolt_core.agentfile import printable
	from openmolt_evals import compare

	# The table and the report hold the model's outputs: a terminal must not obey them.
	if ns.json == "-":
		sys.stdout.write(printable(json.dumps(data, indent=2, default=str)) + "\n")
	else:
		sys.stdout.write(printable(table) + "\n")
		if ns.json:
			_write_report(ns.json, json.dumps(data, indent=2, default=str) + "\n")
	if before is not None:
		sys.stderr.write(printable(compare(before, data)) + "\n")


def main(args: list[str]) -> int:
	"""Run ``openmolt eval`` with the arguments after its name; returns the exit code."""
	ns = _parser().parse_args(args)
	if ns.min_score is not None and not 0 <= ns.min_score <= 1:
		_parser().error("--min-score is a score from 0 to 1")
	if ns.concurrency < 1:
		_parser().error("--concurrency is how many runs at once: 1 or more")
	return anyio.run(_main, ns)


@hookimpl
def register_commands(register: CommandRegistrar) -> None:
	"""Register ``openmolt eval``."""
	register(
		"eval",
		lambda args: main(args),
		summary="score an agent file's agent on a dataset (--min-score for CI)",
	)
