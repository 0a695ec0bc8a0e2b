"""What ``openmolt WORD`` meant when WORD is neither a command nor a file: one line, one guess.

``openmolt tols`` is "no such command 'tols'; did you mean 'tools'?", ``openmolt agnet`` beside
agent.json is "did you mean 'agent.json'?", and a run option given without a file
(``openmolt --json``) says that it needs one. Every guess comes
from `openmolt_core._support.suggest.typo_of`, which counts a swap of two letters as one typo
(``iu`` is ``ui``, ``hlep`` is ``help``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

__all__ = [
	"AGENT_FILE_SUFFIXES",
	"MAX_AGENT_FILE_BYTES",
	"file_like",
	"near_file",
	"no_such_file",
	"not_a_file",
]

AGENT_FILE_SUFFIXES = (".json", ".py")
"""What an agent file's name ends with."""

MAX_AGENT_FILE_BYTES = 16 << 20
"""The largest agent file read, JSON or Python (a large one is a few kilobytes); a larger file,
or one that is not a regular file (a folder, a device, a named pipe), is refused before it is
read."""

_BARE = {"version": "--version", "help": "help"}
"""Words a user types bare that the command spells otherwise (``openmolt version``)."""


def file_like(name: str) -> bool:
	"""Whether ``openmolt NAME`` names an agent file rather than a command."""
	return os.path.exists(name) or name.endswith(AGENT_FILE_SUFFIXES) or os.sep in name


def near_file(name: str) -> str | None:
	"""An agent file beside ``name`` whose name it mistypes (None when there is none).

	``agnet.json``, ``agent.jsn``, ``Agent.json``, ``agnet`` and ``agent.py`` all give
	``agent.json`` when that file is there (and ``agent.py`` is not).

	Args:
		name: The path the user gave, which does not exist.
	"""
	from openmolt_core._support.suggest import typo_of  # only for a file that is not there

	folder, base = os.path.split(name)
	try:
		entries = sorted(
			e
			for e in os.listdir(folder or ".")
			if e.endswith(AGENT_FILE_SUFFIXES) and not e.startswith(".")
		)
	except OSError:
		return None
	if not base or base in entries:
		return None
	close = typo_of(base, entries, cutoff=0.75)
	if close is None:  # the name without (or with another) suffix: `agnet`, `agent.py`
		stem = os.path.splitext(base)[0] if base.endswith(AGENT_FILE_SUFFIXES) else base
		stems = {os.path.splitext(e)[0]: e for e in reversed(entries)}
		near = typo_of(stem, stems, cutoff=0.75) if stem else None
		close = stems[near] if near is not None else None
	return os.path.join(folder, close) if close else None


def no_such_file(name: str, what: str = "file") -> str:
	"""The message for an agent file that is not there, with the one it mistypes when close.

	Args:
		name: The path as given.
		what: What was expected there (``file or folder`` for ``openmolt serve`` and ``worker``).
	"""
	near = near_file(name)
	hint = f"; did you mean {near!r}?" if near else ""
	return f"{name}: no such {what}{hint}"


def not_a_file(
	name: str, args: Sequence[str], commands: Iterable[str], run_options: Iterable[str]
) -> str | None:
	"""Why ``openmolt NAME ...`` is neither a command nor a file to run (None: run it).

	Args:
		name: The first argument.
		args: All the arguments.
		commands: The commands (the core's, OpenMolt's plugins', and the installed ones).
		run_options: The run's options (``--json``, ``-m``...): given without a file, the
			message says a run needs one.
	"""
	from openmolt_core._support.suggest import typo_of  # only for a word that went wrong

	run_options = set(run_options)
	if name.startswith("-"):
		if any(not a.startswith("-") for a in args[1:]):
			return None  # options before the file: `openmolt -v agent.json`
		if name in ("-v", "--verbose"):
			return (
				f"{name} is a run's --verbose and needs an agent file (`openmolt FILE {name}`); "
				"the version is `openmolt --version`"
			)
		option = name.split("=", 1)[0]
		if option in ("-m", "--model"):
			return (
				f'{option} needs a model and a prompt: openmolt {option} openai:gpt-5-mini "..." '
				"(`openmolt models` lists the models)"
			)
		if option in run_options:  # `openmolt --json`: an option of a run, given no file
			return (
				f"{option} is a run's option and needs an agent file (`openmolt FILE {option}`) "
				f'or a prompt (`openmolt -m MODEL "..." {option}`)'
			)
		close = typo_of(option, [*run_options, "--version", "--help"])
		hint = f"; did you mean {close!r}?" if close else ""
		return f"no such option {option!r}{hint} (`openmolt --help` lists the commands)"
	if file_like(name):
		return None  # a file, or meant as one: the run says what is wrong with it
	commands = list(dict.fromkeys(commands))
	files = [f"{name}{suffix}" for suffix in AGENT_FILE_SUFFIXES if os.path.isfile(name + suffix)]
	close = files[0] if files else typo_of(name, [*commands, *_BARE])
	close = _BARE.get(close, close) if close else near_file(name)
	hint = f"; did you mean {close!r}?" if close else ""
	if close in (*commands, "help"):  # a command mistyped: said as one (`openmolt tols`)
		return f"no such command {name!r}{hint} (`openmolt --help` lists the commands)"
	return (
		f"no such command or file {name!r}{hint} (`openmolt --help` lists the commands; "
		"an agent file ends in .json or .py)"
	)
