"""A test-only provider that speaks a minimal OpenAI-Responses-shaped protocol over real HTTP.

The CLI tests point it at a fake model server on 127.0.0.1. Settings: ``api_key`` (or
``OPENMOLT_FAKEAI_API_KEY``) and ``base_url`` (or ``OPENMOLT_FAKEAI_BASE_URL``), the URL that
``/responses`` is appended to.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from openmolt_core import ModelRequest, ModelResponse, Usage, hookimpl
from openmolt_core.errors import ConfigurationError, ProviderError


class FakeAIProvider:
	"""POSTs ``{model, instructions, input}`` to ``<base_url>/responses`` with a bearer key."""

	name = "fakeai"

	def __init__(self, settings: Mapping[str, Any], http: Callable[[], httpx.AsyncClient]) -> None:
		self.api_key = settings.get("api_key") or os.environ.get("OPENMOLT_FAKEAI_API_KEY")
		if not self.api_key:
			raise ConfigurationError("no API key for fakeai: set OPENMOLT_FAKEAI_API_KEY")
		self.base_url = str(
			settings.get("base_url") or os.environ.get("OPENMOLT_FAKEAI_BASE_URL") or ""
		).rstrip("/")
		if not self.base_url:
			raise ConfigurationError("no base URL for fakeai: set OPENMOLT_FAKEAI_BASE_URL")
		self._http = http

	async def generate(self, request: ModelRequest) -> ModelResponse:
		"""Send the conversation and read the text of the reply's ``output_text`` parts."""
		body = {
			"model": request.model,
			"instructions": request.system,
			"input": [{"role": m.role, "content": m.content} for m in request.messages],
		}
		try:
			response = await self._http().post(
				f"{self.base_url}/responses",
				json=body,
				headers={"Authorization": f"Bearer {self.api_key}"},
				timeout=30,
			)
		except httpx.HTTPError as exc:
			raise ProviderError(f"cannot reach {self.base_url}: {exc}", provider="fakeai") from exc
		if response.status_code >= 400:
			raise ProviderError(
				f"HTTP {response.status_code}: {response.text[:200]}",
				provider="fakeai",
				model=request.model,
				status_code=response.status_code,
			)
		data = response.json()
		text = "".join(
			part["text"]
			for item in data.get("output", [])
			if item.get("type") == "message"
			for part in item.get("content", [])
			if part.get("type") == "output_text"
		)
		usage = data.get("usage") or {}
		return ModelResponse(
			text=text,
			usage=Usage(
				input_tokens=usage.get("input_tokens", 0),
				output_tokens=usage.get("output_tokens", 0),
				calls=1,
			),
			raw=data,
		)


@hookimpl
def register_providers(register: Callable[..., None]) -> None:
	"""Register the fakeai provider."""
	register(FakeAIProvider, name="fakeai")
