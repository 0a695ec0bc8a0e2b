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
		self.out.write(printable(event.text))
		self.out.flush()

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
		self.out.write("\n")
		self.out.flush()
		self.last = "".join(self._text)
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
