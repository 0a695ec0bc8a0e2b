from __future__ import annotations

import importlib
from importlib import metadata
from types import ModuleType

import pytest

from openmolt import OpenMolt
from openmolt_core.integrations import HttpTool, Integration

IDS = ["airtable", "etsy", "github", "notion", "shopify", "stripe"]


def _module(iid: str) -> ModuleType:
	return importlib.import_module(f"openmolt_integrations.{iid}")


def _props(schema: dict) -> dict:
	return schema.get("properties", {})


@pytest.mark.parametrize("iid", IDS)
def test_module_validates_and_is_complete(iid: str) -> None:
	"""Each module exposes a valid Integration with version, docs, 5-40 HTTP tools and credentials."""
	integration = _module(iid).INTEGRATION
	again = Integration.model_validate(integration.model_dump(by_alias=True))
	assert again.id == iid
	assert integration.api_version
	assert "## Get a token" in integration.docs
	assert 5 <= len(integration.tools) <= 40  # a sanity bound, as for the messaging ones
	assert all(isinstance(t, HttpTool) for t in integration.tools)
	assert integration.credential_setup
	assert any(
		c.type == "oauth2" and c.auth_url and c.token_url for c in integration.credential_setup
	)


@pytest.mark.parametrize("iid", IDS)
def test_every_tool_has_known_scopes(iid: str) -> None:
	"""Every tool lists at least one scope, and every scope it lists is defined and used."""
	integration = _module(iid).INTEGRATION
	used = set()
	for tool in integration.tools:
		assert tool.scopes, f"{iid}.{tool.handle} has no scopes"
		assert set(tool.scopes) <= set(integration.scopes)
		used |= set(tool.scopes)
	assert used == set(integration.scopes), f"{iid}: unused scopes {set(integration.scopes) - used}"


@pytest.mark.parametrize("iid", IDS)
def test_every_input_is_described_and_used(iid: str, shape) -> None:
	"""Every input property has a description, required inputs exist, and templates use only inputs."""
	for tool in _module(iid).INTEGRATION.tools:
		schema = tool.input_schema
		props = _props(schema)
		for name, prop in props.items():
			assert prop.get("description"), f"{iid}.{tool.handle}.{name} has no description"
		assert set(schema.get("required", [])) <= set(props)
		used = shape(tool)["inputs"]
		assert used <= set(props), f"{iid}.{tool.handle} renders unknown inputs {used - set(props)}"
		unused = set(props) - used
		assert not unused, f"{iid}.{tool.handle} never sends inputs {unused}"
		assert tool.description and len(tool.description) > 20


@pytest.mark.parametrize("iid", IDS)
def test_module_all_is_sorted_and_complete(iid: str) -> None:
	"""``__all__`` is sorted and names every public module-level name the module defines."""
	module = _module(iid)
	public = {
		n
		for n, v in vars(module).items()
		if not n.startswith("_")
		and n != "annotations"
		and not isinstance(v, ModuleType)
		and (not callable(v) or isinstance(v, Integration) or v.__module__ == module.__name__)
	}
	assert module.__all__ == sorted(module.__all__)
	assert set(module.__all__) == public


@pytest.mark.parametrize("iid", IDS)
def test_entry_point_resolves_to_the_module(iid: str) -> None:
	"""The openmolt.integrations entry point loads the module, and OpenMolt finds the integration by id."""
	(ep,) = [e for e in metadata.entry_points(group="openmolt.integrations") if e.name == iid]
	assert ep.load() is _module(iid)
	om = OpenMolt(entry_points=True)
	assert om.plugins.integration(iid).name == _module(iid).INTEGRATION.name


@pytest.mark.parametrize("iid", IDS)
def test_explicit_plugin_registers_under_its_id(iid: str) -> None:
	"""Passing the module as a plugin registers the integration under its own id."""
	om = OpenMolt(plugins=[_module(iid)], entry_points=False)
	assert om.plugins.integration(iid).tools == _module(iid).INTEGRATION.tools


def test_batch_limits_of_airtable() -> None:
	"""Airtable write tools accept at most 10 records per call."""
	from openmolt_integrations import airtable

	for handle in ("createRecords", "updateRecords", "upsertRecords", "deleteRecords"):
		(tool,) = [t for t in airtable.TOOLS if t.handle == handle]
		assert tool.input_schema["properties"]["records"]["maxItems"] == 10


def test_every_stripe_post_takes_an_idempotency_key() -> None:
	"""Each Stripe POST maps an optional idempotency_key input to the Idempotency-Key header."""
	from openmolt_integrations import stripe

	assert stripe.INTEGRATION.api_setup.idempotency_header == "Idempotency-Key"
	# stripe-python's _api_encode writes every list with indices ("expand[0]"), as the
	# built-in form-data encoder does (Stripe registers no encoder of its own).
	import anyio

	from openmolt_core.integrations._encode import encode_body

	assert "form-data" not in stripe.INTEGRATION.encoders
	encoded = anyio.run(encode_body, "form-data", {"expand": ["a", "b"]}, {}, None)
	assert encoded.content == b"expand%5B0%5D=a&expand%5B1%5D=b"
	posts = [t for t in stripe.TOOLS if t.method == "POST"]
	assert len(posts) >= 10
	for tool in posts:
		assert tool.headers == {"Idempotency-Key": "{{ input.idempotency_key }}"}
		assert "idempotency_key" in tool.input_schema["properties"]
		assert "idempotency_key" not in tool.input_schema.get("required", [])


def test_shopify_mutations_surface_user_errors() -> None:
	"""Every Shopify mutation selects its user errors and tells the model to check them."""
	from openmolt_integrations import shopify

	for tool in shopify.TOOLS:
		query = tool.body["query"]
		if query.startswith("mutation"):
			assert "serErrors { field message" in query, tool.handle
			assert "userErrors" in tool.description, tool.handle
			assert tool.output_schema is not None
		assert "{{" not in query or tool.handle == "graphql", "GraphQL must not look like Liquid"
