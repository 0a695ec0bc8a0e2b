"""A key written into an integration's own definition is a secret of every call of its tools.

An imported OpenAPI document's server URL (``https://api.example/v1?api_key=...``, which
``openmolt import-openapi`` writes as the ``ApiSetup.base_url``), or a header or query parameter
given as a literal instead of a ``{{ config.* }}`` template: the tools send it, a service may echo
it (an error page that repeats the URL), and the HTTP stack logs the URL. Only the config's
secrets were masked, so such a key reached the model, the run's state and the logs."""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.integrations import ApiSetup, HttpTool, Integration
from openmolt_core.testing import ScriptedModel, call_tool, finish
from tests._leaks import leaks

pytestmark = pytest.mark.anyio

IN_URL = "UrlKey-0123456789abcdef"
IN_HEADER = "HdrKey-0123456789abcdef"
IN_QUERY = "QryKey-0123456789abcdef"


def _echo(request: httpx.Request) -> httpx.Response:
	"""A service whose error page repeats what it was sent."""
	return httpx.Response(
		401, text=f"refused {request.url} with key {request.headers.get('x-api-key')}"
	)


async def test_literal_keys_of_the_api_setup_never_show(caplog: pytest.LogCaptureFixture) -> None:
	caplog.set_level(logging.DEBUG)
	pets = Integration(
		id="pets",
		name="Pets",
		description="Pets.",
		api_setup=ApiSetup(
			base_url=f"https://api.example.com/v1?api_key={IN_URL}",
			headers={"X-Api-Key": IN_HEADER, "Accept": "application/json"},
			query_params={"access_token": IN_QUERY, "page": "1"},
		),
		tools=[HttpTool(handle="listPets", description="GET /pets", endpoint="/pets")],
		labels={"listPets": ["untrusted"]},
	)
	http = httpx.AsyncClient(transport=httpx.MockTransport(_echo))
	model = ScriptedModel([call_tool("pets.listPets"), finish("done")])
	async with OpenMolt(entry_points=False, http_client=http) as om:
		om.register_integration("pets", pets)
		agent = om.create_agent(name="A", model=model, integrations=["pets"])
		result = await agent.run("List the pets.")
	await http.aclose()
	sent = "\n".join(map(repr, model.requests))
	assert "refused" in sent  # the service's words reached the model
	state = json.dumps(result.state.to_dict(), default=str)
	for key in (IN_URL, IN_HEADER, IN_QUERY):
		assert not leaks(sent, key), (key, sent[-400:])
		assert not leaks(state, key), key
		assert not leaks(caplog.text, key), key


def test_a_template_is_no_key() -> None:
	"""``Bearer {{ config.token }}`` is filled from the config (whose secrets are masked): none of
	its words, ``Bearer`` or ``config.token``, is taken for a secret."""
	from openmolt_core.integrations.binding import written_secrets

	spec = Integration(
		id="t",
		name="T",
		description="T.",
		api_setup=ApiSetup(
			base_url="https://{{ config.shop }}.example.com/v1?key={{ config.apiKey }}",
			headers={"Authorization": "Bearer {{ config.token }}"},
			query_params={"api_key": "{{ config.apiKey }}"},
		),
		tools=[HttpTool(handle="x", description="x", endpoint="/x")],
	)
	assert written_secrets(spec) == frozenset()


def test_no_built_in_integration_writes_a_key_into_its_setup() -> None:
	"""The built-in integrations template every key from the config: what their ``api_setup``
	writes (GitHub's, Notion's and Stripe's API version headers) is public. Taken for keys,
	every date equal to the version (a Notion page due 2026-03-11) read ``[redacted]``."""
	import importlib
	import pkgutil

	import openmolt_integrations
	from openmolt_core.integrations.binding import written_secrets

	found = {}
	for module in pkgutil.iter_modules(openmolt_integrations.__path__):
		if not module.name.startswith("_"):
			spec = importlib.import_module(f"openmolt_integrations.{module.name}").INTEGRATION
			if written := written_secrets(spec):
				found[module.name] = sorted(written)
	assert found == {}


async def test_a_date_equal_to_the_api_version_reaches_the_model() -> None:
	"""A reply that holds the version header's value as a date is read as it is."""

	def pages(request: httpx.Request) -> httpx.Response:
		return httpx.Response(200, json={"due": "2026-03-11", "v": request.headers["x-version"]})

	notes = Integration(
		id="notes",
		name="Notes",
		description="Notes.",
		api_setup=ApiSetup(base_url="https://api.example.com", headers={"X-Version": "2026-03-11"}),
		tools=[HttpTool(handle="getNote", description="GET /note", endpoint="/note")],
		labels={"getNote": []},
	)
	http = httpx.AsyncClient(transport=httpx.MockTransport(pages))
	model = ScriptedModel([call_tool("notes.getNote"), finish("done")])
	async with OpenMolt(entry_points=False, http_client=http) as om:
		om.register_integration("notes", notes)
		agent = om.create_agent(name="A", model=model, integrations=["notes"])
		await agent.run("Read the note.")
	await http.aclose()
	assert '"due":"2026-03-11"' in model.requests[-1].messages[-1].content
