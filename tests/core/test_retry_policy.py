"""One retry policy, set on OpenMolt, shared by the HTTP tools and the built-in providers."""

from __future__ import annotations

import email.utils
import time
from typing import Any

import httpx
import pytest

from openmolt_core import OpenMolt, RetryPolicy
from openmolt_core.errors import ConfigurationError
from openmolt_core.integrations import ApiSetup, HttpTool, Integration
from openmolt_core.retry import DEFAULT_RETRY, retry_after, retry_policy
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio


def test_retry_after_reads_every_hint_the_services_send() -> None:
	"""retry-after-ms, Retry-After in seconds or as a date, and the rate-limit reset headers."""
	assert retry_after({"retry-after-ms": "1500"}) == 1.5
	assert retry_after({"retry-after": "7"}) == 7.0
	later = email.utils.formatdate(time.time() + 100, usegmt=True)
	assert 95 <= (retry_after({"retry-after": later}) or 0) <= 101
	assert retry_after({"x-ratelimit-reset": "12"}) == 12.0
	epoch = str(int(time.time()) + 40)
	assert 38 <= (retry_after({"x-rate-limit-reset": epoch}) or 0) <= 41
	assert retry_after({"retry-after": "soon"}) is None
	assert retry_after({}) is None


def test_backoff_doubles_within_its_caps_and_a_hint_wins() -> None:
	"""delay: backoff doubling up to max_backoff; a service's hint capped at max_wait."""
	policy = RetryPolicy(backoff=1.0, max_backoff=3.0, max_wait=10.0)
	assert [policy.delay(n) for n in (1, 2, 3, 4)] == [1.0, 2.0, 3.0, 3.0]
	assert policy.delay(1, hint=4.0) == 4.0
	assert policy.delay(1, hint=50.0) == 10.0
	jittery = RetryPolicy(backoff=1.0, jitter=0.5)
	assert all(1.0 <= jittery.delay(1) <= 1.5 for _ in range(20))


def test_retry_policy_from_a_dict_in_either_spelling() -> None:
	"""A dict of fields works in camelCase and snake_case; unknown keys and bad values fail."""
	assert retry_policy(None) is DEFAULT_RETRY
	assert retry_policy({"attempts": 2, "maxWait": 5}) == RetryPolicy(attempts=2, max_wait=5)
	assert retry_policy({"max_total": 9}).max_total == 9
	with pytest.raises(ConfigurationError, match=r"unknown key\(s\) \['tries'\]"):
		retry_policy({"tries": 3})
	with pytest.raises(ConfigurationError, match="attempts must be at least 1"):
		retry_policy({"attempts": 0})
	with pytest.raises(ConfigurationError, match="must not be negative"):
		RetryPolicy(max_wait=-1)


async def test_openmolt_retry_reaches_the_http_tools() -> None:
	"""OpenMolt(retry=...) governs how a tool's 503 is retried: attempts and waits."""
	calls: list[httpx.Request] = []
	slept: list[float] = []

	def handler(request: httpx.Request) -> httpx.Response:
		calls.append(request)
		return httpx.Response(503, json={"message": "busy"})

	async def sleep(seconds: float) -> None:
		slept.append(seconds)

	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	om = OpenMolt(
		entry_points=False,
		http_client=client,
		retry={"attempts": 3, "backoff": 0.25, "sleep": sleep},
	)
	om.register_integration(
		"svc",
		Integration(
			name="Svc",
			api_setup=ApiSetup(base_url="https://api.example.com"),
			tools=[HttpTool(handle="get", description="Get.", endpoint="/x")],
		),
	)
	model = ScriptedModel([call_tool("svc.get"), finish(result="done")])
	agent = om.create_agent(name="A", model=model, integrations=["svc"])
	await agent.run("go")
	assert len(calls) == 3
	assert slept == [0.25, 0.5]
	await om.aclose()


async def test_openmolt_retry_reaches_the_built_in_providers() -> None:
	"""A provider built by OpenMolt uses the instance's policy; max_retries still wins."""
	pytest.importorskip("openmolt_providers")
	policy = RetryPolicy(attempts=2, max_wait=5.0)
	om = OpenMolt(llm_providers={"openai": {"api_key": "sk-test-000000"}}, retry=policy)
	provider: Any = om.provider("openai")
	assert provider.retry == policy and provider.max_retries == 1
	om2 = OpenMolt(
		llm_providers={"openai": {"api_key": "sk-test-000000", "max_retries": 5}}, retry=policy
	)
	assert om2.provider("openai").max_retries == 5  # type: ignore[attr-defined]
	await om.aclose()
	await om2.aclose()


@pytest.mark.parametrize(
	"headers",
	[
		{"retry-after": "nan"},
		{"retry-after": "NaN"},
		{"retry-after": "inf"},
		{"retry-after": "-Infinity"},
		{"retry-after": "1e999"},
		{"retry-after-ms": "nan"},
		{"retry-after-ms": "inf"},
		{"x-ratelimit-reset": "nan"},
		{"ratelimit-reset": "inf"},
	],
)
def test_a_hint_that_is_no_finite_number_is_no_hint(headers: dict[str, str]) -> None:
	"""``float`` reads 'nan' and 'inf': no wait at all (anyio refused to sleep NaN seconds)."""
	assert retry_after(headers) is None


def test_a_delay_is_a_finite_number_whatever_the_hint() -> None:
	"""A hint that is no finite number is ignored: the backoff applies."""
	policy = RetryPolicy(backoff=1.0, jitter=0.0)
	assert policy.delay(1, hint=float("nan")) == 1.0
	assert policy.delay(2, hint=float("inf")) == 2.0
