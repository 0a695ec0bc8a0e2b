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


def results_at(model: ScriptedModel, request: int) -> list[dict[str, Any]]:
	"""The tool results the model read in its request number ``request`` (its last message)."""
	found: list[dict[str, Any]] = json.loads(model.requests[request].messages[-1].content)[
		"results"
	]
	return found
