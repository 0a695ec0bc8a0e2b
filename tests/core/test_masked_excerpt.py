"""A text shown in part is masked whole before it is cut: a secret across the cut leaves no prefix.

Cut first, a secret that straddles the cut survives as its own start, which no redactor can match
later (it is no longer the secret). Every place that shows the start of an error body or a
service's reason masks through `masked_excerpt`.
"""

from __future__ import annotations

import base64
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core._approve import REASON_CHARS
from openmolt_core.approvals import ApprovalDecision, ApprovalRequest
from openmolt_core.errors import ConfigurationError, ToolError
from openmolt_core.integrations import ApiSetup, HttpTool, Integration
from openmolt_core.integrations._decode import MAX_DETAIL_CHARS, trimmed_details
from openmolt_core.integrations._openapi_urls import check_url
from openmolt_core.integrations.http import execute_http_tool
from openmolt_core.integrations.oauth import code_from_redirect
from openmolt_core.secrets import MASK, SecretSet, masked_excerpt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio

SECRET = "STRADDLINGsecret-0123456789abcdefXYZ"


def _no_prefix(text: str, secret: str = SECRET) -> bool:
	"""Whether no spelling's first 8 characters show (what a cut leaves of a secret)."""
	b64 = base64.b64encode(secret.encode()).decode()
	return secret[:8] not in text and b64[:8] not in text


def test_masked_excerpt_masks_then_cuts() -> None:
	"""A secret across the limit is masked whole; the text is then cut, ``more`` appended."""
	text = "a" * 95 + SECRET + "b" * 50
	shown = masked_excerpt(text, 100, {SECRET}, more="…")
	assert shown == "a" * 95 + MASK[:5] + "…" and _no_prefix(shown)
	assert masked_excerpt("short", 100, {SECRET}, more="…") == "short"
	spelled = "a" * 95 + base64.b64encode(SECRET.encode()).decode()
	assert _no_prefix(masked_excerpt(spelled, 100, {SECRET}))


def test_masked_excerpt_knows_the_live_secret_sets() -> None:
	"""A secret an instance's set holds is masked without being passed."""
	known = SecretSet()
	known.add(SECRET)
	assert _no_prefix(masked_excerpt("x" * 90 + SECRET, 100))
	del known


def test_a_long_error_body_is_masked_before_it_is_trimmed() -> None:
	"""``trimmed_details`` of a body with a secret across its cut shows no prefix of it."""
	body = "E" * (MAX_DETAIL_CHARS - 10) + SECRET + "E" * 100
	details = trimmed_details(httpx.Response(400, text=body), body.encode(), {SECRET})
	assert isinstance(details, str) and "trimmed" in details and _no_prefix(details)


async def test_an_http_tool_error_body_shows_no_prefix_of_the_config_secret() -> None:
	"""An HTTP tool's error echoing its API key across the cut: the key's start never shows."""
	body = "E" * (MAX_DETAIL_CHARS - 10) + SECRET + "E" * 100
	client = httpx.AsyncClient(
		transport=httpx.MockTransport(lambda r: httpx.Response(400, text=body))
	)
	context = ToolContext(
		agent="a",
		integration="svc",
		config={"apiKey": SECRET},
		http=lambda: client,
		redact=frozenset({SECRET}),
	)
	tool = HttpTool(handle="t", description="d", endpoint="/x")
	svc = Integration(
		id="svc", name="Svc", api_setup=ApiSetup(base_url="https://api.example.com"), tools=[tool]
	)
	with pytest.raises(ToolError) as info:
		await execute_http_tool(tool, svc, {}, context)
	assert _no_prefix(f"{info.value} {info.value.details!r}")


def test_an_oauth_refusal_reason_is_masked_before_it_is_cut() -> None:
	"""The service's ``error_description`` is masked whole, then cut to 200 characters."""
	known = SecretSet()
	known.add(SECRET)
	answer = f"https://app/cb?error=denied&error_description={'r' * 190}{SECRET}&state=s"
	with pytest.raises(ConfigurationError) as info:
		code_from_redirect(answer, "s")
	assert "refused" in str(info.value) and _no_prefix(str(info.value))
	del known


def test_a_url_with_a_password_is_shown_masked() -> None:
	"""An imported document's URL with a password: the error never shows the password."""
	url = f"https://user:{SECRET}@api.example.com/v1"
	with pytest.raises(ConfigurationError) as info:
		check_url(url, "servers/0/url", ())
	assert "user name or password" in str(info.value) and _no_prefix(str(info.value))


async def test_an_approval_reason_is_masked_before_it_is_cut() -> None:
	"""The model's reason for a gated call, cut for the approver, shows no prefix of a secret."""
	seen: list[ApprovalRequest] = []

	def approve(request: ApprovalRequest) -> ApprovalDecision:
		seen.append(request)
		return request.approve()

	def refund(customer: str) -> dict[str, Any]:
		"""Refund a customer.

		Args:
			customer: The customer id.
		"""
		return {"refunded": customer}

	reason = "r" * (REASON_CHARS - 10) + SECRET
	call = {**call_tool("local.refund", customer="cus_1"), "reason": reason}
	model = ScriptedModel([call, finish("done")])
	om = OpenMolt(entry_points=False)
	om.secrets.add(SECRET)
	agent = om.create_agent(
		name="Pay",
		model=model,
		tools=[refund],
		requires_approval=["local.refund"],
		on_approval_request=approve,
	)
	result = await agent.run("refund")
	assert result.status == "success"
	[request] = seen
	assert request.reason.startswith("rrr") and _no_prefix(request.reason)
