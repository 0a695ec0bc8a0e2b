r"""Text from outside (a model, a tool, a server) made safe to print on a terminal.

A terminal obeys the control characters in what it prints: an escape sequence can clear or
rewrite lines, move the cursor, set the window's title, write the clipboard (OSC 52) or make a
link say one address and open another (OSC 8). The words the command prints are often not
ours: the model's question and its call's reason (which a prompt injection in any tool result
can steer), a provider's or a tool's error, a service's sign-in code. Printed as written, a
reason could erase itself and leave a harmless one in its place above "Approve? [y]es". Every
place the command prints such text passes it through `printable`, which writes each control
character (but a newline and a tab) as its escape, visibly: ``\u001b]8;;...``. The escape is
JSON's too, so JSON printed through it means the same.
"""

from __future__ import annotations

import io
import re
from typing import IO, cast

__all__ = ["Printable", "excerpt", "printable", "printing"]

_CONTROL = re.compile(
	r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
"""The characters a terminal obeys or that reorder a line: C0 and C1 controls but a newline and
a tab, DEL, the line and paragraph separators, and every bidirectional control (Unicode's
Bidi_Control: the embeddings, overrides and isolates, and the marks ALM, LRM and RLM)."""


def printable(text: str) -> str:
	r"""``text`` with each character a terminal would obey written as its escape (``\u001b``).

	Args:
		text: Text from outside: a model's words, an error a service sent, a stored run's text.
	"""
	if _CONTROL.search(text) is None:  # almost always: nothing to copy
		return text
	return _CONTROL.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


_NEWLINES = re.compile(r"\r\n?|\n")


def excerpt(
	text: str,
	*,
	lines: int = 20,
	width: int = 300,
	total: int = 2_000,
	indent: str = "  ",
	whole: str = "",
) -> str:
	r"""A long text from outside (a run's error) as a few readable lines for a terminal.

	Masked whole first (a secret cut in two would escape the mask), with what the command knows
	(`openmolt_core._support.masking.mask_known`), then each character a terminal obeys escaped
	(`printable`); lines after the first are indented, blank ones at the ends dropped. At most
	``lines`` lines of at most ``width`` characters each and ``total`` in all are kept; a text
	of one line may fill all of ``total`` (the terminal wraps it: an error the command wrote
	keeps its hint and link whole). A text cut says how much was left out, and where the whole
	is (``whole``).

	Args:
		text: The text.
		lines: The most lines shown.
		width: The most characters of one line of a text of several (a longer one ends with
			``…``).
		total: The most characters shown in all.
		indent: What the lines after the first begin with.
		whole: What the note of a cut text ends with (``--json prints it whole``).

	Returns:
		The lines, joined with newlines (no newline at the end).
	"""
	from openmolt_core._support.masking import mask_known

	split = _NEWLINES.split(mask_known(text).strip())
	if len(split) == 1:
		width = total
	shown: list[str] = []
	size = 0
	cut = False
	for n, line in enumerate(split):
		if n == lines or size >= total:
			cut = True
			break
		room = min(width, max(total - size, 1))
		line = printable(line.rstrip())
		if len(line) > room:
			line, cut = line[: room - 1] + "…", True
		shown.append(line if n == 0 else indent + line)
		size += len(line)
	if cut:
		left = len(split) - len(shown)
		more = f"{left:,} more lines" if left > 1 else "1 more line" if left else "cut"
		note = f"… ({more}, {len(text):,} characters in all"
		shown.append(f"{indent}{note}; {whole})" if whole else f"{indent}{note})")
	return "\n".join(shown)


class Printable(io.TextIOBase):
	"""A text stream that writes everything it is given through `printable`.

	For the listings whose every line may hold words from outside (an OpenAPI document's or an
	MCP server's tool descriptions, a plugin's): ``openmolt tools``, ``plugins``, ``--dry-run``.

	Args:
		stream: Where the text goes (``sys.stdout``).
	"""

	def __init__(self, stream: IO[str]) -> None:
		super().__init__()
		self.stream = stream

	def write(self, text: str) -> int:
		"""Write ``text`` with each character a terminal would obey escaped."""
		return self.stream.write(printable(text))

	def flush(self) -> None:
		"""Flush the stream."""
		self.stream.flush()

	def isatty(self) -> bool:
		"""Whether the stream is a terminal."""
		return self.stream.isatty()

	def fileno(self) -> int:
		"""The stream's file descriptor."""
		return self.stream.fileno()


def printing(stream: IO[str]) -> IO[str]:
	"""``stream`` as `Printable` writes to it, typed as the stream the listings take."""
	return cast("IO[str]", Printable(stream))
