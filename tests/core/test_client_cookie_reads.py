"""A client that stores no cookie does not read the cookies of each response.

httpx reads every response's ``Set-Cookie`` headers (`httpx.Cookies.extract_cookies`: a urllib
request rebuilt from the httpx one, the headers copied into an email message, the jar asked):
about 60 µs of CPU a response, more than building a model request's body. The instance's client
and one an application gives it keep no cookie a response sets
(`openmolt_core.integrations._client`), so that work bought nothing at every model call.
"""

from __future__ import annotations

import http.cookiejar
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.integrations._client import keep_no_cookies, new_client

pytestmark = pytest.mark.anyio


def _setting(request: httpx.Request) -> httpx.Response:
	return httpx.Response(200, json={}, headers={"set-cookie": "session=abc; Path=/"})


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
	"""Every time a jar is asked to read a response's cookies."""
	seen: list[Any] = []
	original = http.cookiejar.CookieJar.extract_cookies

	def extract_cookies(self: http.cookiejar.CookieJar, response: Any, request: Any) -> None:
		seen.append(response)
		original(self, response, request)

	monkeypatch.setattr(http.cookiejar.CookieJar, "extract_cookies", extract_cookies)
	return seen


def _mocked(client: httpx.AsyncClient) -> httpx.AsyncClient:
	client._transport = httpx.MockTransport(_setting)  # the instance's pools, without a socket
	return client


async def test_the_instance_s_client_reads_no_response_s_cookies(reads: list[Any]) -> None:
	async with _mocked(new_client()) as client:
		await client.get("https://api.example/login")
		await client.get("https://api.example/next")
		assert not client.cookies
	assert reads == []


async def test_a_given_client_reads_none_and_still_sends_its_own(reads: list[Any]) -> None:
	"""`keep_no_cookies`: the application's cookies go out; none a response sets is read."""
	sent: list[str | None] = []

	def api(request: httpx.Request) -> httpx.Response:
		sent.append(request.headers.get("cookie"))
		return _setting(request)

	async with httpx.AsyncClient(transport=httpx.MockTransport(api)) as client:
		client.cookies.set("region", "eu", domain="api.example")
		keep_no_cookies(client)
		await client.get("https://api.example/login")
		await client.get("https://api.example/next")
	assert sent == ["region=eu", "region=eu"]
	assert reads == []


async def test_a_policy_the_application_sets_later_stores_again(reads: list[Any]) -> None:
	"""Replacing the jar's policy (to keep cookies after all) is obeyed: the responses are read."""
	async with httpx.AsyncClient(transport=httpx.MockTransport(_setting)) as client:
		keep_no_cookies(client)
		client.cookies.jar.set_policy(http.cookiejar.DefaultCookiePolicy())
		await client.get("https://api.example/login")
		assert client.cookies.get("session") == "abc"
	assert len(reads) == 1


async def test_an_instance_given_a_client_reads_none_at_a_model_call(reads: list[Any]) -> None:
	"""The path of every model call: ``OpenMolt(http_client=...)`` applies it to the client."""
	client = httpx.AsyncClient(transport=httpx.MockTransport(_setting))
	async with OpenMolt(entry_points=False, http_client=client):
		await client.get("https://api.example/login")
	await client.aclose()
	assert reads == []
