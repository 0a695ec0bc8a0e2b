"""What a scripted model read back of the tools it called, for the tests that look at labels."""

from __future__ import annotations

import json
from typing import Any

from openmolt_core.testing import ScriptedModel


def tool_results(model: ScriptedModel) -> list[dict[str, Any]]:
	"""Every tool result entry the model read, in order."""
	out: list[dict[str, Any]] = []
	for request in model.requests:
		last = request.messages[-1]
		try:
			turn = json.loads(last.content) if last.role == "user" else None
		except ValueError:
			continue
		if isinstance(turn, dict):
			out.extend(turn.get("results") or [])
	return out
