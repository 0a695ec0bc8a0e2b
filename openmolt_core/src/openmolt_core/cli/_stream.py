"""The agent's message on the terminal as the model writes it (``openmolt run``; ``--no-stream``).

Only the run the command started is shown (a sub-agent's text is not), and only its
``humanMessage``: the commands and the output come with the summary once the run ends. The
spinner on stderr pauses while a message is written, so the two never share a line. A message
whose call failed midway (``cut``), or whose reply was refused, is said to be so on stderr.
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Any

from openmolt_core.cli._terminal import printable

if TYPE_CHECKING:
	from openmolt_core.cli._progress import Progress

__all__ = ["LiveText"]

_MOST_HELD = 4096
"""The longest last word held back for its URL to end."""
_URL_SIGNS = frozenset(":/\\@%&")
"""A word holding one of these may be a URL whose login has not ended (``postgresql://app:Pw``)."""


class LiveText:
	"""Writes the human message of an agent's own run while it streams.

	Args:
		out: Where the text goes (stdout, a terminal).
		progress: The spinner to pause while text is written.
	"""

	def __init__(self, out: IO[str], progress: Progress) -> None:
		self.out = out
		self.progress = progress
		self._text: list[str] | None = None  # the message being written, if one is
		self._writing: tuple[int, int] = (0, 0)  # its step and attempt (a retry writes anew)
		self.last = ""
		"""The last message written in full."""
		self._last_step = 0  # the step of the last message written
		self._written = 0  # how much of the message is on the terminal (the rest may be a URL)

	def attach(self, agent: Any) -> None:
		"""Listen to the agent's streaming text (which makes its runs stream)."""
		agent.on("text:delta", self._delta)
		agent.on("llmOutput", self._end)
		agent.on("model:fallback", self._end)
		agent.on("error", self._refused)
		agent.on("finish", self._stopped)

	def shown(self, message: str) -> bool:
		"""Whether ``message`` (the result's) was written already, so a summary can skip it."""
		return bool(message) and message == self.last

	def _delta(self, event: Any) -> None:
		if event.parent_run_id or event.field != "humanMessage":
			return
		writing = (event.step, event.attempt)
		if getattr(event, "cut", False):  # the call writing it failed: the text is no reply
			if self._text is not None and writing == self._writing:
				self._end(event)
				self.last = ""  # not the run's message: the summary shows the one it ends with
				self.progress.line("the message above was cut off: the model's call failed")
			return
		if self._text is not None and writing != self._writing:
			self._end(event)  # the call was made again: its message starts on a line of its own
		self._writing = writing
		if self._text is None:
			self.progress.pause()
			self._text = []
		self._text.append(event.text)
		self._write(held=True)

	def _write(self, *, held: bool) -> None:
		"""Write the message so far, a URL's login masked (`mask_url_logins`).

		Held: its last word waits for the next space while it may be a URL whose login has not
		ended (a ``:``, a slash, ``@``, ``%`` or ``&`` in it; at most `_MOST_HELD` characters),
		as a chat's live message holds it: a password cut in two is no URL's yet, and no mask
		would find it. The piece written is masked with the start of its word already written
		(a scheme, ``postgresql``, written before its ``://`` came).
		"""
		from openmolt_core._support.masking import mask_url_logins

		text = "".join(self._text or ())
		upto = len(text)
		last = text.rfind(" ") + 1
		if held and len(text) - last <= _MOST_HELD and not _URL_SIGNS.isdisjoint(text[last:]):
			upto = last
		if upto <= self._written:
			return
		start = min(text.rfind(" ", 0, self._written) + 1, self._written)
		masked = mask_url_logins(text[start:upto])
		begun = text[start : self._written]
		self.out.write(printable(masked[len(begun) :] if masked.startswith(begun) else masked))
		self.out.flush()
		self._written = upto

	def _stopped(self, event: Any) -> None:
		# The run ended while a message was being written: its call was stopped (the run's
		# timeout, a budget), so the reply was never read.
		if self._text is not None and not event.parent_run_id:
			self._end(event)
			self.last = ""
			self.progress.line("the message above was cut off: the run ended before its reply")

	def _end(self, event: Any) -> None:
		if self._text is None or event.parent_run_id:
			return
		self._write(held=False)  # nothing more joins its last word
		self.out.write("\n")
		self.out.flush()
		from openmolt_core._support.masking import mask_url_logins

		self.last = mask_url_logins("".join(self._text))  # as the summary's message reads
		self._written = 0
		self._last_step = self._writing[0]
		self._text = None
		self.progress.resume()

	def _refused(self, event: Any) -> None:
		# A reply is checked once it is whole: one that is refused (a finish whose output does
		# not match the schema) ran nothing, though its message was already on the screen.
		if event.parent_run_id or getattr(event, "kind", "") != "invalid_reply":
			return
		if self.last and event.step == self._last_step:
			self.progress.line(
				"the message above came with a reply that was refused (invalid); the agent is "
				"asked again"
			)
			self.last = ""  # not the run's message: the summary shows the one it ends with
