"""A third-party provider plugin: answers every call by finishing with the input it was given."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from openmolt_core import ModelRequest, ModelResponse, Usage, hookimpl


class EchoProvider:
	"""Finishes at once with ``{"echo": <the run's input>}``."""

	name = "echo"

	def __init__(self, settings: Mapping[str, Any]) -> None:
		self.settings = dict(settings)

	async def generate(self, request: ModelRequest) -> ModelResponse:
		"""Echo the run input back as the output."""
		first = json.loads(request.messages[0].content)
		text = json.dumps({"commands": [{"type": "finish", "output": {"echo": first["input"]}}]})
		return ModelResponse(text=text, usage=Usage(input_tokens=1, output_tokens=1, calls=1))


@hookimpl
def register_providers(register: Callable[..., None]) -> None:
	"""Register the echo provider."""
	register(lambda settings, http: EchoProvider(settings), name="echo")
