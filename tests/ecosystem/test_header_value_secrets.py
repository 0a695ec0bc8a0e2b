"""A header's value is a secret in its parts too, wherever headers are configured.

The rule said "the value, and each of its words" (the token of ``Bearer <token>``): a ``Cookie``
(``theme=dark; sid=<session>``) gave only the whole line, and ``Basic <base64>`` only the base64,
so a service that echoes the session id alone, or a log that shows the decoded password, showed
them. Provider settings, MCP servers' headers and credential configs read one rule."""

from __future__ import annotations

import base64
from collections.abc import Callable
from collections.abc import Set as AbstractSet

import pytest

from openmolt import OpenMolt
from openmolt_core._support.masking import secret_values, settings_secrets
from openmolt_core.testing import ScriptedModel
from openmolt_mcp._config import parse_server, secrets_of
from tests._leaks import leaks

SESSION = "sess-0123456789abcdef"
PASSWORD = "S3cret-Passw0rd!"
BASIC = "Basic " + base64.b64encode(f"ada:{PASSWORD}".encode()).decode()
HEADERS = {"Cookie": f"theme=dark; sid={SESSION}", "Authorization": BASIC}


@pytest.mark.parametrize(
	"found",
	[
		lambda: settings_secrets({"headers": HEADERS}),
		lambda: secret_values({"headers": HEADERS}),
		lambda: secrets_of(
			parse_server("crm", {"url": "https://mcp.example/mcp", "headers": HEADERS})
		),
	],
	ids=["provider settings", "credential config", "MCP server"],
)
def test_a_cookie_value_and_a_basic_password_are_secrets(
	found: Callable[[], AbstractSet[str]],
) -> None:
	secrets = found()
	assert SESSION in secrets and PASSWORD in secrets, secrets
	assert "dark" not in secrets and "theme" not in secrets  # short values stay readable


def test_the_session_id_alone_is_masked_in_what_the_instance_masks() -> None:
	"""The provider's headers feed the instance's set: the id echoed alone is masked."""
	om = OpenMolt({"openai": {"headers": HEADERS}}, entry_points=False)
	redact = om.create_agent(name="A", model=ScriptedModel([]))._redactor
	shown = redact(f"unknown session {SESSION}; user ada:{PASSWORD} refused")
	assert not leaks(shown, SESSION) and not leaks(shown, PASSWORD), shown


def test_the_scheme_word_of_a_credential_is_no_secret() -> None:
	"""``Bearer`` and ``Basic`` stay readable (every text that says them was masked)."""
	found = settings_secrets({"headers": {"Authorization": "Bearer tok-0123456789", "X-A": BASIC}})
	assert "tok-0123456789" in found and "Bearer" not in found and "Basic" not in found


VERSIONS = {"Notion-Version": "2026-03-11", "anthropic-version": "2023-06-01"}


@pytest.mark.parametrize(
	"found",
	[
		lambda: settings_secrets({"headers": VERSIONS}),
		lambda: secret_values({"headers": VERSIONS}),
		lambda: secrets_of(
			parse_server("crm", {"url": "https://mcp.example/mcp", "headers": VERSIONS})
		),
	],
	ids=["provider settings", "credential config", "MCP server"],
)
def test_a_header_named_like_something_public_is_no_secret(
	found: Callable[[], AbstractSet[str]],
) -> None:
	"""A version header holds a date every reply may show (a page's due date, an issue's
	creation): taken for a secret, each such date read ``[redacted]``. A header is public by
	its name as a credential config's key is (an id, a region, a version, a date), unless the
	name hints at a secret."""
	assert found() == set()
	assert settings_secrets({"headers": {"X-Api-Key-Version": "2026-03-11"}}) == {"2026-03-11"}
