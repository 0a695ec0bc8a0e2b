"""A capability whose built-in tool (``openmolt.post``) sends: the tests of how the approval
rules and the taint policy treat a capability's own machinery share it."""

from __future__ import annotations

from typing import Any

from openmolt_core.hooks import Capability
from openmolt_core.tools import tool


class Postbox(Capability):
	"""A capability whose built-in tool (``openmolt.post``) sends.

	Args:
		labels: The labels the tool declares (None: it declares none).
	"""

	__slots__ = ("labels", "sent")
	name = "postbox"

	def __init__(self, labels: list[str] | None = None) -> None:
		self.sent: list[str] = []
		self.labels = labels

	def builtin_tools(self, agent: Any) -> list[Any]:
		"""The sending tool, as one of the run's machinery."""

		def post(text: str) -> str:
			"""Post a text."""
			self.sent.append(text)
			return "posted"

		if self.labels is None:
			return [tool(name="post")(post)]
		return [tool(name="post", labels=self.labels)(post)]
