"""The settings of each built-in provider: what ``llm_providers[name]`` may hold.

```python
OpenMolt(llm_providers={
	"openai": {"api_key": "sk-...", "timeout": 120},
	"ollama": {"provider": "openai", "base_url": "http://localhost:11434/v1", "api_mode": "chat"},
})
```

Keys are accepted in snake_case (``base_url``) and in the spec's camelCase (``baseUrl``); an
unknown key is refused with the closest known one. ``provider`` names the plugin of a named
instance (``ollama`` above is an ``openai`` instance); OpenMolt removes it before the provider
reads its settings.

Every setting also has an environment variable, read when the setting is not given:
``OPENMOLT_<NAME>_API_KEY`` and ``OPENMOLT_<NAME>_BASE_URL``, where ``<NAME>`` is the instance's
name in upper case (``OPENMOLT_OPENAI_BASE_URL``, ``OPENMOLT_OLLAMA_API_KEY``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from pydantic import Field, SecretStr, ValidationError

from openmolt_core._support.optionmodels import Options
from openmolt_core.errors import ConfigurationError

__all__ = [
	"DEFAULT_TIMEOUT",
	"AnthropicSettings",
	"GeminiSettings",
	"OpenAISettings",
	"ProviderSettings",
	"parse_settings",
]

DEFAULT_TIMEOUT = 600.0
"""Seconds a model call may take before it is abandoned (``timeout``)."""


class ProviderSettings(Options):
	"""Settings every built-in provider takes.

	Each in snake_case or camelCase, through the alias generator every option model shares
	(`openmolt_core.options.Options`).
	"""

	api_key: SecretStr | None = Field(
		default=None,
		description="The API key (default: OPENMOLT_<NAME>_API_KEY). Optional when base_url is "
		"not the vendor's: a local server usually needs none.",
	)
	base_url: str | None = Field(
		default=None,
		description="The API's base URL (default: OPENMOLT_<NAME>_BASE_URL, else the vendor's).",
	)
	timeout: float | None = Field(
		default=DEFAULT_TIMEOUT,
		gt=0,
		description="Seconds one model call may take (None: the shared client's timeouts).",
	)
	max_retries: int = Field(
		default=3,
		ge=0,
		description="Retries of a call that may succeed later (429, 5xx, connection errors); "
		"when not given, the OpenMolt retry policy's attempts - 1 (3 by default).",
	)
	headers: dict[str, str] = Field(
		default_factory=dict, description="Extra headers sent with every call."
	)
	context_window: int | None = Field(
		default=None,
		gt=0,
		description="The model's context window in tokens, for compaction (default: the "
		"vendor's figure for the model; set it for a local model).",
	)


class OpenAISettings(ProviderSettings):
	"""``openai``: the Responses API, or any OpenAI-compatible Chat Completions server."""

	api_mode: Literal["responses", "chat"] | None = Field(
		default=None,
		description="'responses' (POST /responses) or 'chat' (POST /chat/completions). Default: "
		"'responses' at api.openai.com; elsewhere 'responses', falling back to 'chat' when the "
		"server has no /responses endpoint.",
	)
	organization: str | None = Field(
		default=None, description="Sent as OpenAI-Organization (api.openai.com)."
	)
	project: str | None = Field(
		default=None, description="Sent as OpenAI-Project (api.openai.com)."
	)


class AnthropicSettings(ProviderSettings):
	"""``anthropic``: the Messages API (beta features go in ``headers``, ``anthropic-beta``)."""


class GeminiSettings(ProviderSettings):
	"""``google``: the Gemini API (``generativelanguage.googleapis.com``)."""


S = TypeVar("S", bound=ProviderSettings)


def parse_settings(model: type[S], settings: Mapping[str, Any], *, name: str) -> S:
	"""Validate a provider's settings dict.

	Args:
		model: The provider's settings model.
		settings: The user's ``llm_providers[name]``.
		name: The instance's name, for messages.

	Raises:
		ConfigurationError: A key is unknown or a value is wrong; the message names it.
	"""
	try:
		return model.model_validate(dict(settings))
	except ValidationError as exc:
		known = sorted(
			{k for n, f in model.model_fields.items() for k in (n, f.alias) if k is not None}
		)
		problems = []
		for error in exc.errors():
			key = ".".join(str(p) for p in error["loc"])
			if error["type"] == "extra_forbidden":
				import difflib  # only for an error message

				close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
				listed = ", ".join(sorted(model.model_fields))  # each once, not in both spellings
				hint = f"; did you mean {close[0]!r}?" if close else f"; known: {listed}"
				problems.append(f"unknown setting {key!r}{hint}")
			else:
				problems.append(f"{key}: {error['msg']}")
		raise ConfigurationError(f"llm_providers[{name!r}]: " + "; ".join(problems)) from None
