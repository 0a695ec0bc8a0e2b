"""Approval defaults on the real integrations: "every write scope of stripe and github"."""

from openmolt import OpenMolt
from openmolt_core.policy import is_read_scope, writes
from openmolt_core.testing import ScriptedModel
from openmolt_core.tools import FunctionTool


def gated(om: OpenMolt, integrations: list[str], **options: object) -> dict[str, str | None]:
	agent = om.create_agent(name="A", model=ScriptedModel([]), integrations=integrations, **options)
	return {h: t.approval for h, t in agent._tools.items()}


def test_every_write_of_stripe_and_github_waits_and_their_reads_do_not() -> None:
	"""Instance defaults ['stripe:writes', 'github:writes']: creates, updates, payments, merges."""
	om = OpenMolt(
		requires_approval=["stripe:writes", "github:writes"],
		integrations={"stripe": {"apiKey": "sk_test_x"}, "github": {"token": "ghp_x"}},
	)
	rules = gated(om, ["stripe", "github", "slack"])
	waiting = {h for h, rule in rules.items() if rule}
	assert {
		"stripe.createRefund",
		"stripe.createPaymentIntent",
		"stripe.cancelSubscription",
		"stripe.createCustomer",
		"github.mergePull",
		"github.putFile",
		"github.dispatchWorkflow",
		"github.createIssueComment",
	} <= waiting
	assert (
		not {
			"stripe.listCustomers",
			"stripe.search",
			"stripe.retrieve",
			"github.getContent",
			"github.search",
			"github.listWorkflowRuns",
		}
		& waiting
	)
	assert not any(h.startswith("slack.") for h in waiting)  # not named by the defaults
	assert rules["stripe.createRefund"] == "stripe:writes"
	for handle in waiting:
		assert handle.split(".")[0] in ("stripe", "github")


def test_an_agent_adds_a_scope_and_exempts_a_tool() -> None:
	"""An agent's rules add to the instance's: slack's write scope, minus reactions."""
	om = OpenMolt(
		requires_approval=["stripe:refunds"], integrations={"stripe": {"apiKey": "sk_test_x"}}
	)
	rules = gated(om, ["stripe", "slack"], requires_approval=["slack:write", "!slack.addReaction"])
	assert rules["stripe.createRefund"] == "stripe:refunds"
	assert rules["stripe.createCustomer"] is None
	assert rules["slack.postMessage"] == "slack:write"
	assert rules["slack.addReaction"] is None
	assert rules["slack.listUsers"] is None


def test_reads_are_told_by_method_or_by_read_scopes() -> None:
	"""A POST search in a read scope only reads; a Python tool without scopes may write."""
	om = OpenMolt(integrations={"notion": {"apiKey": "secret_x"}, "dropbox": {"accessToken": "x"}})
	agent = om.create_agent(name="A", model=ScriptedModel([]), integrations=["notion", "dropbox"])
	assert not writes(agent._tools["notion.search"].tool)  # POST, scope read
	assert not writes(agent._tools["dropbox.listFolder"].tool)
	assert writes(agent._tools["notion.createPage"].tool)
	plain = FunctionTool(handle="x", description="", function=lambda i, c: i)
	assert writes(plain)
	assert not writes(
		FunctionTool(handle="y", description="", function=lambda i, c: i, scopes=["read"])
	)
	for name in ("read", "shopRead", "read:user", "read_orders", "guilds.members.read"):
		assert is_read_scope(name), name
	for name in ("write", "thread", "readwrite", "read_write", "refunds", "files", "spread"):
		assert not is_read_scope(name), name


def test_a_method_that_changes_things_writes_whatever_its_scope_is_called() -> None:
	"""An imported DELETE, PUT or PATCH whose document names only a read scope still writes.

	The scope's name is the document's word (``security: [{oauth: ["read:items"]}]`` on
	``DELETE /items/{id}``); the method is what the request does (RFC 9110: only GET, HEAD,
	OPTIONS and TRACE are safe), so ``*:writes`` asks for it, and the importer puts it in the
	scope ``write`` too.
	"""
	from openmolt_core.integrations.openapi import from_openapi

	ok = {"200": {"description": "ok"}}
	item = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]
	flows = {"clientCredentials": {"tokenUrl": "https://93.184.216.34/token", "scopes": {}}}
	flows["clientCredentials"]["scopes"] = {"read:items": "Read items"}
	read = [{"oauth": ["read:items"]}]
	document = {
		"openapi": "3.0.3",
		"info": {"title": "Catalog", "version": "1"},
		"servers": [{"url": "https://93.184.216.34/v1"}],
		"components": {"securitySchemes": {"oauth": {"type": "oauth2", "flows": flows}}},
		"paths": {
			"/items/{id}": {
				method: {"operationId": f"{method}Item", "security": read, "parameters": item,
					"responses": ok}
				for method in ("get", "delete", "put", "patch")
			}
		},
	}  # fmt: skip
	tools = {t.handle: t for t in from_openapi(document, id="catalog").tools}
	assert {h: writes(t) for h, t in tools.items()} == {
		"getItem": False,
		"deleteItem": True,
		"putItem": True,
		"patchItem": True,
	}
	# The importer puts each of them in `write` too: a grant of `read:items` alone lacks it.
	assert [t.scopes for t in tools.values()] == [["read:items"]] + [["read:items", "write"]] * 3


def _payments(security: list[dict[str, list[str]]]) -> dict[str, object]:
	"""A document whose every operation names only ``security`` (read scopes, or none)."""
	ok = {"200": {"description": "ok"}}
	flows = {"clientCredentials": {"tokenUrl": "https://93.184.216.34/token", "scopes": {}}}
	flows["clientCredentials"]["scopes"] = {"read:payments": "Read payments", "read": "Read"}
	one = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]
	return {
		"openapi": "3.0.3",
		"info": {"title": "Payments", "version": "1"},
		"servers": [{"url": "https://93.184.216.34/v1"}],
		"components": {"securitySchemes": {"oauth": {"type": "oauth2", "flows": flows}}},
		"paths": {
			"/transfers": {
				method: {"operationId": f"{method}Transfers", "security": security,
					"responses": ok}
				for method in ("get", "head", "options", "post")
			},
			"/transfers/{id}": {
				method: {"operationId": f"{method}Transfer", "security": security,
					"parameters": one, "responses": ok}
				for method in ("delete", "put", "patch")
			},
		},
	}  # fmt: skip


_CHANGES = {"postTransfers", "deleteTransfer", "putTransfer", "patchTransfer"}


def test_an_imported_post_under_read_scopes_writes_and_needs_more_than_a_read_grant() -> None:
	"""An imported ``POST /transfers`` under ``read:payments`` is a write, as DELETE, PUT, PATCH.

	``*:writes`` holds it, and an agent granted only the read scopes does not get it; GET, HEAD
	and OPTIONS stay reads. The scopes an operation names are the document's word; what the method does is the
	request's. The importer decides it, so the exported module and JSON say the same.
	"""
	import json

	from openmolt_core.integrations.model import Integration
	from openmolt_core.integrations.openapi import from_openapi, to_json, to_module

	for security in ([{"oauth": ["read:payments"]}], [{"oauth": ["read", "read:payments"]}]):
		imported = from_openapi(_payments(security), id="pay")
		namespace: dict[str, object] = {}
		exec(compile(to_module(imported), "pay.py", "exec"), namespace)
		exported = Integration.model_validate(json.loads(to_json(imported)))
		assert namespace["INTEGRATION"] == imported and exported == imported
		for integration in (imported, exported):
			tools = {t.handle: t for t in integration.tools}
			assert {h for h, t in tools.items() if writes(t)} == _CHANGES, security
			om = OpenMolt(requires_approval="*:writes", integrations={"pay": {"token": "t"}})
			om.register_integration("pay", integration)
			held = gated(om, ["pay"])
			assert {h for h, rule in held.items() if rule} == {f"pay.{h}" for h in _CHANGES}
			reader = om.create_agent(
				name="R",
				model=ScriptedModel([]),
				integrations=[{"integration": "pay", "scopes": ["read", "read:payments"]}],
			)
			allowed = {h.removeprefix("pay.") for h, t in reader._tools.items() if t.allowed}
			assert allowed == set(tools) - _CHANGES, security


def test_an_imported_operation_without_scopes_writes_unless_its_method_reads() -> None:
	"""With no scope named, the method alone says it: OPTIONS reads as GET and HEAD do.

	They are RFC 9110's safe methods; the reads name no scope (no OAuth scope asked), and the
	changes only ``write``, which no grant of the document's read scopes holds.
	"""
	from openmolt_core.integrations.openapi import from_openapi

	tools = from_openapi(_payments([]), id="pay").tools
	assert {t.handle for t in tools if writes(t)} == _CHANGES
	assert {t.handle: t.scopes for t in tools} == {
		t.handle: ["write"] if t.handle in _CHANGES else [] for t in tools
	}


def test_an_imported_change_that_names_no_scope_is_not_granted_by_a_read_grant() -> None:
	"""``security: []`` on ``POST /transfers`` of a document that defines OAuth scopes.

	An agent granted only the read scopes got it: a tool that names no scope was granted by
	any grant, and the importer put only operations that name read scopes in ``write``. A
	grant is a list of what the agent may do; an operation that changes something and says
	nothing about scopes is not in a list of reads. Its reads stay granted, it still needs no
	OAuth scope of the service (``write`` is never asked), and an agent granted everything (no
	``scopes``) or ``write`` keeps it.
	"""
	from openmolt_core.integrations.openapi import from_openapi

	mixed = _payments([{"oauth": ["read:payments"]}])
	for operation in mixed["paths"]["/transfers"].values():  # type: ignore[index]
		operation["security"] = []  # the list operation and the change, open
	integration = from_openapi(mixed, id="pay")
	tools = {t.handle: t for t in integration.tools}
	assert tools["postTransfers"].scopes == ["write"]
	assert tools["getTransfers"].scopes == []
	assert "write" in integration.scopes
	om = OpenMolt(integrations={"pay": {"token": "t"}})
	om.register_integration("pay", integration)
	made: list[str] = []

	def allowed(scopes: list[str] | None) -> set[str]:
		entry: dict[str, object] = {"integration": "pay"}
		if scopes is not None:
			entry["scopes"] = scopes
		name = f"A{len(made)}"
		made.append(name)
		agent = om.create_agent(name=name, model=ScriptedModel([]), integrations=[entry])
		return {h.removeprefix("pay.") for h, t in agent._tools.items() if t.allowed}

	reads = allowed(["read", "read:payments"])
	assert "postTransfers" not in reads and {"getTransfers", "headTransfers"} <= reads
	assert "postTransfers" in allowed(None)
	assert "postTransfers" in allowed(["read", "read:payments", "write"])
