"""The command's argument parser: a mistyped option says what was probably meant, in one line.

argparse (before Python 3.14) answers ``openmolt FILE --dryrun`` with the whole usage, ten lines
of it, and no hint; here it is ``no such option '--dryrun'; did you mean '--dry-run'?``. Its help
wraps at spaces only: argparse cuts a word longer than the line, and a word at its hyphens, so an
address in a help text (``https://gi`` / ``thub.com/...``) could be neither clicked nor copied.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from typing import Any, NoReturn

from openmolt_core.cli._said import reads_as_name, said

__all__ = ["CommandParser", "count", "port"]

_UNKNOWN = "unrecognized arguments: "
_REQUIRED = "the following arguments are required: "
_NUMBER = re.compile(r"^-\d+(\.\d*)?$")
_CHOICE = re.compile(r"argument ([^:]+): invalid choice: '([^']*)' \(choose from (.*)\)$")


def count(text: str) -> int:
	"""``-n``'s value (``type=count``): a whole number of at least 1.

	``openmolt logs -n 0`` said "no runs recorded yet" of a store full of them, and ``-n -3``
	listed every run; every ``-n`` of the command now refuses both as it parses.

	Args:
		text: What was written after the option.

	Raises:
		argparse.ArgumentTypeError: ``text`` is not a whole number, or is less than 1.
	"""
	try:
		number = int(text)
	except ValueError:
		raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
	if number < 1:
		raise argparse.ArgumentTypeError(f"give at least 1, not {number}")
	return number


def port(text: str) -> int:
	"""An option's TCP port (``type=port``): 0 to 65535, 0 for any free one.

	``--port 99999`` is then said as a usage error naming the option, not an `OverflowError`
	from the socket (or, inside a server's task group, an "unhandled errors in a TaskGroup").

	Args:
		text: What was written after the option.

	Raises:
		argparse.ArgumentTypeError: ``text`` is not a whole number from 0 to 65535.
	"""
	try:
		number = int(text)
	except ValueError:
		number = -1
	if not 0 <= number <= 65535:
		raise argparse.ArgumentTypeError(f"{text!r} is not a port; give 1-65535, or 0 for any")
	return number


class _WholeWords(argparse.HelpFormatter):
	"""Wraps help at spaces only: an address or an option stays whole on its line."""

	def _split_lines(self, text: str, width: int) -> list[str]:
		text = self._whitespace_matcher.sub(" ", text).strip()
		return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)

	def _fill_text(self, text: str, width: int, indent: str) -> str:
		text = self._whitespace_matcher.sub(" ", text).strip()
		return textwrap.fill(
			text,
			width,
			initial_indent=indent,
			subsequent_indent=indent,
			break_long_words=False,
			break_on_hyphens=False,
		)


class _RawDescription(_WholeWords, argparse.RawDescriptionHelpFormatter):
	"""`argparse.RawDescriptionHelpFormatter`, its options' help wrapped as `_WholeWords`."""


class CommandParser(argparse.ArgumentParser):
	"""An `argparse.ArgumentParser` whose unknown options get a "did you mean".

	Its help wraps at spaces only (argparse's default and raw-description formatters are replaced
	by ones that do; another formatter is kept as given).

	Args:
		help_command: The command that lists the options (default: ``PROG --help``).
		**kwargs: What `argparse.ArgumentParser` takes.
	"""

	def __init__(self, *args: Any, help_command: str | None = None, **kwargs: Any) -> None:
		formatter = kwargs.get("formatter_class", argparse.HelpFormatter)
		kwargs["formatter_class"] = {
			argparse.HelpFormatter: _WholeWords,
			argparse.RawDescriptionHelpFormatter: _RawDescription,
		}.get(formatter, formatter)
		super().__init__(*args, **kwargs)
		self.help_command = help_command or f"{self.prog} --help"
		"""The command that lists the options, for the hint."""

	def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
		"""As argparse's, remembering the arguments: an unknown option is named before a missing one."""
		self._given = list(sys.argv[1:] if args is None else args)
		return super().parse_known_args(args, namespace)

	def error(self, message: str) -> NoReturn:
		"""Name the first unknown option, or a wrong choice, and the nearest right one.

		``openmolt eval --min-scroe 0.5`` names ``--min-scroe`` (argparse would say the dataset
		is missing first). Other errors are said as argparse says them.
		"""
		choice = _CHOICE.search(message)
		if choice is not None:
			self._wrong_choice(choice[1], choice[2], choice[3])
		if message.startswith(_REQUIRED):
			unknown = [w for w in getattr(self, "_given", ()) if self._unknown_option(w)]
			if unknown:
				message = _UNKNOWN + " ".join(unknown)
		if message.startswith(_UNKNOWN):
			chosen = self._chosen_subcommand()
			if chosen is not None:  # its options, its help: not the parent's (-h only)
				chosen.error(message)
		options = [w for w in message.removeprefix(_UNKNOWN).split() if w.startswith("-")]
		if message.startswith(_UNKNOWN) and not options:  # words left over: an unquoted prompt
			words = message.removeprefix(_UNKNOWN)
			given = (
				"--input '...' gives a run's input; "
				if "--input" in self._option_string_actions
				else ""
			)
			# A leftover word may be a value typed where none goes (`keys set openai x sk-...`).
			shown = (
				repr(words)
				if all(map(reads_as_name, words.split()))
				else "words (not repeated: one reads as a value, not a name)"
			)
			self.exit(
				2,
				f"{self.prog}: unexpected {shown}: {given}put words that go together in quotes "
				f'("...") (`{self.help_command}` lists the arguments)\n',
			)
		if message.startswith(_REQUIRED):  # what is missing: the usage shows what goes where
			self.print_usage(sys.stderr)
			missing = self._missing(message.removeprefix(_REQUIRED).split(", "))
			self.exit(2, f"{self.prog}: {missing} (`{self.help_command}` lists the arguments)\n")
		if not message.startswith(_UNKNOWN) or not options:  # one line, as every other error
			self.exit(2, f"{self.prog}: {message} (`{self.help_command}` lists the arguments)\n")
		from openmolt_core._support.suggest import typo_of

		word = options[0].split("=", 1)[0]
		known = [o for o in self._option_string_actions if o not in ("-h", "--help")]
		close = typo_of(word, known)
		hint = f"; did you mean {close!r}?" if close else ""
		self.exit(
			2, f"{self.prog}: no such option {word!r}{hint} (`{self.help_command}` lists them)\n"
		)

	def _chosen_subcommand(self) -> argparse.ArgumentParser | None:
		"""The subcommand's parser the arguments chose (``prune`` of ``sessions prune``), if any.

		argparse hands the words a subcommand does not know back to its parent, which knows fewer
		options still: the subcommand names them, with its own options for the guess.
		"""
		for action in self._actions:
			if isinstance(action, argparse._SubParsersAction) and action.choices:
				for word in getattr(self, "_given", ()):
					if not word.startswith("-"):
						found = action.choices.get(word)
						return found if isinstance(found, CommandParser) else None
		return None

	def _missing(self, names: list[str]) -> str:
		"""What argparse found missing, in the command's words.

		``say what to do: set, remove, list or path`` for a subcommand (argparse would name its
		``dest``), else ``missing file``.
		"""
		for action in self._actions:
			if isinstance(action, argparse._SubParsersAction) and action.choices:
				if argparse._get_action_name(action) in names:
					words = list(action.choices)
					listed = (
						", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]
					)
					return f"say what to do: {listed}"
		return f"missing {', '.join(names)}"

	def _unknown_option(self, word: str) -> bool:
		"""Whether ``word`` is an option this parser does not know (nor abbreviates)."""
		name = word.split("=", 1)[0]
		if not name.startswith("-") or name == "-" or name == "--" or _NUMBER.match(name):
			return False
		if not name.startswith("--"):
			return name[:2] not in self._option_string_actions
		return not any(o.startswith(name) for o in self._option_string_actions)

	def _wrong_choice(self, argument: str, word: str, listed: str) -> NoReturn:
		from openmolt_core._support.suggest import typo_of

		choices = [c.strip().strip("'") for c in listed.split(",")]
		close = typo_of(word, choices, cutoff=0.5)
		hint = f"; did you mean {close!r}?" if close else ""
		for action in self._actions:  # `list|show|prune`, a metavar: said by its dest (action)
			if action.dest and action.metavar == argument and not action.option_strings:
				argument = action.dest
		what = f"{argument}: no such choice" if argument.startswith("-") else f"no such {argument}"
		self.exit(2, f"{self.prog}: {what} {said(word)}{hint} (choose from {', '.join(choices)})\n")
