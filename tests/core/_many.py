"""An agent with five integrations (about 80 tools), for the tool-search and offload tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from openmolt import OpenMolt

FIVE = ["gmail", "googleSheets", "notion", "slack", "github"]
"""Five integrations, over 80 tools."""

_GOOGLE = {
	"clientId": "client-id-123",
	"clientSecret": "client-secret-456",
	"refreshToken": "1//refresh-token-789",
	"accessToken": "ya29.test-access-token",
	"expiryDate": "2099-01-01T00:00:00Z",
}
CONFIG: dict[str, dict[str, Any]] = {
	"gmail": _GOOGLE,
	"googleSheets": _GOOGLE,
	"notion": {"apiKey": "secret_notion_token_123"},
	"slack": {"token": "xoxb-slack-token-123"},
	"github": {"apiKey": "ghp_github_token_123"},
}
"""Credentials for the five, as the instance's integration config."""


def slack_ok(request: httpx.Request) -> httpx.Response:
	"""Slack's answer to chat.postMessage (https://api.slack.com/methods/chat.postMessage)."""
	body = json.loads(request.content or b"{}")
	return httpx.Response(200, json={"ok": True, "channel": body.get("channel"), "ts": "1.2"})


def instance(
	handler: Callable[[httpx.Request], httpx.Response] | None = None, **options: Any
) -> OpenMolt:
	"""An OpenMolt instance with the five integrations configured and HTTP mocked."""

	def refuse(request: httpx.Request) -> httpx.Response:
		return httpx.Response(500, json={"error": f"unexpected request {request.url}"})

	http = httpx.AsyncClient(transport=httpx.MockTransport(handler or refuse))
	return OpenMolt(integrations=CONFIG, http_client=http, **options)
