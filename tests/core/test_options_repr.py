"""The repr and str of option models never show a secret, in any spelling.

pydantic's default repr printed a webhook's secret, a bot's tokens, an agent file's API keys,
MCP headers and durability URL, and a provider's extra headers. The shared `Options` base masks
its secrets (`masked_repr_args`: the core's rule for settings); every option model derives from it.
"""

from __future__ import annotations

import base64
import importlib
from typing import Any
from urllib.parse import quote

import pytest

from openmolt_core._support.masking import SECRET_HINTS
from openmolt_core.cli._agentfile import AgentFile
from openmolt_core.options import Options
from openmolt_core.triggers import Triggers
from openmolt_providers.settings import ProviderSettings

S = "SECRETvalueABCDEF123456"


def _spellings(secret: str) -> list[str]:
	data = secret.encode()
	return [
		secret,
		quote(secret, safe=""),
		base64.b64encode(data).decode(),
		base64.urlsafe_b64encode(data).decode().rstrip("="),
		data.hex(),
	]


def _clean(model: Any) -> None:
	for show in (repr, str):
		text = show(model)
		for spelling in _spellings(S):
			assert spelling not in text, (type(model).__name__, show.__name__, text[:300])


def test_triggers_show_no_secret() -> None:
	"""A webhook's secret, A2A and AG-UI tokens, Telegram's and Slack's tokens are masked."""
	triggers = Triggers.model_validate(
		{
			"webhook": {"scheme": "hmac", "secret": S},
			"a2a": {"token": S},
			"agui": {"token": S},
			"channels": [
				{"type": "telegram", "token": S, "secretToken": S, "allowEveryone": True},
				{"type": "slack", "botToken": S, "signingSecret": S, "allowEveryone": True},
			],
		}
	)
	_clean(triggers)
	assert triggers.webhook is not None and triggers.webhook.secret == S  # the value is kept
	for part in (triggers.webhook, triggers.a2a, triggers.agui, *triggers.channels):
		_clean(part)


def test_an_agent_file_shows_no_secret() -> None:
	"""An agent file's provider key, MCP headers and durability URL's password are masked."""
	spec = AgentFile.model_validate(
		{
			"name": "X",
			"model": "openai:gpt-5-mini",
			"llmProviders": {"openai": {"apiKey": S}},
			"mcpServers": {
				"gh": {"url": "https://h/mcp", "headers": {"Authorization": f"Bearer {S}"}}
			},
			"durability": f"postgresql://app:{S}@db/x",
		}
	)
	_clean(spec)
	assert "openai:gpt-5-mini" in repr(spec)  # what is not secret stays readable


def test_provider_settings_show_no_header_value() -> None:
	"""A provider's extra headers are masked; its key was already a SecretStr."""
	settings = ProviderSettings(
		api_key="sk-hidden-ok-1234", headers={"X-Proxy-Auth": S, "Accept": "application/json"}
	)
	_clean(settings)
	assert "application/json" in repr(settings)


def _subclasses(cls: type) -> list[type]:
	out = []
	for sub in cls.__subclasses__():
		out += [sub, *_subclasses(sub)]
	return out


_MODULES = [
	"openmolt_core.triggers",
	"openmolt_core.cli._agentfile",
	"openmolt_core.agentconfig",
	"openmolt_core.integrations.config",
	"openmolt_providers.settings",
	"openmolt_providers.openai",
	"openmolt_providers.anthropic",
	"openmolt_providers.gemini",
]


def _secret_fields() -> list[tuple[type, str]]:
	for name in _MODULES:
		importlib.import_module(name)
	found = []
	for cls in _subclasses(Options):
		for field in cls.model_fields:
			if any(hint in field.lower() for hint in SECRET_HINTS):
				found.append((cls, field))
	return found


@pytest.mark.parametrize(
	("cls", "field"), _secret_fields(), ids=lambda v: getattr(v, "__name__", str(v))
)
def test_every_options_field_named_like_a_secret_is_masked(cls: type, field: str) -> None:
	"""Every `Options` model's field named like a secret, holding one, is masked in repr and str."""
	_clean(cls.model_construct(**{field: S}))


def test_the_walk_finds_the_models_with_secrets() -> None:
	"""The walk above covers the trigger and provider models (it would pass on nothing else)."""
	found = {(cls.__name__, field) for cls, field in _secret_fields()}
	assert {("WebhookTrigger", "secret"), ("TelegramChannel", "token")} <= found
	assert ("SlackChannel", "signing_secret") in found and ("ProviderSettings", "api_key") in found
