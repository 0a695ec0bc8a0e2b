"""An HTML page in place of the API's answer (a proxy's, a gateway's) is named as one, with the fix.

No API here answers with HTML: their errors are JSON (OpenAI's and Anthropic's ``{"error":
...}``, Google's ``google.rpc.Status``). A page comes from something in between: a load
balancer's 502, a corporate proxy's sign-in page, a wrong ``base_url``. Its markup was quoted
as the provider's message (500 characters of it), a 400's page was blamed on model_config, and a
page sent with 200 to a streaming request was read as a stream cut off ("try again", retried).
"""

from __future__ import annotations

import httpx
import pytest

from openmolt_core.errors import ProviderError
from tests._scaling import FACTOR, assert_linear, cpu_async
from tests.providers._replies import MODELS, make_request, provider

pytestmark = pytest.mark.anyio

VENDORS = ["openai", "chat", "anthropic", "google"]

PAGE = (
	"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title>"
	"<style>body{font-family:sans-serif}</style></head><body><center><h1>502 Bad Gateway</h1>"
	"</center><hr><center>nginx</center>" + "<!-- padding -->" * 60 + "</body></html>"
)
SIGN_IN = (
	"<html><head><title>Sign in &amp; continue - Corp Proxy</title></head>"
	"<body><form>...</form></body></html>"
)
HTML = {"content-type": "text/html; charset=utf-8"}


def _provider(vendor: str, answer: httpx.Response):
	p = provider(vendor, lambda request: answer)
	p.max_retries = 0
	return p


async def _generate_fails(vendor: str, answer: httpx.Response) -> ProviderError:
	with pytest.raises(ProviderError) as caught:
		await _provider(vendor, answer).generate(make_request(MODELS[vendor]))
	return caught.value


@pytest.mark.parametrize("vendor", VENDORS)
async def test_a_gateway_page_is_named_by_its_title(vendor) -> None:
	"""A 502 page: its title, no markup, still retried as a 502."""
	error = await _generate_fails(vendor, httpx.Response(502, text=PAGE, headers=HTML))
	message = str(error)
	assert "502 Bad Gateway" in message and "HTML page" in message
	assert "<" not in message and "padding" not in message
	assert error.retryable and error.status_code == 502


@pytest.mark.parametrize("vendor", VENDORS)
async def test_a_rejecting_page_names_the_base_url_not_model_config(vendor) -> None:
	"""A 400 page (a proxy's): the fix is the base_url or the proxy, not the model's settings."""
	error = await _generate_fails(vendor, httpx.Response(400, text=SIGN_IN, headers=HTML))
	message = str(error)
	assert "Sign in & continue - Corp Proxy" in message
	assert "base_url" in message and "proxy" in message and "model_config" not in message
	assert not error.retryable


async def test_a_page_without_its_content_type_is_known_by_its_markup() -> None:
	"""A page sent as ``text/plain`` (or with no type) is still a page."""
	answer = httpx.Response(503, text=PAGE, headers={"content-type": "text/plain"})
	message = str(await _generate_fails("anthropic", answer))
	assert "502 Bad Gateway" in message and "<" not in message


@pytest.mark.parametrize("vendor", VENDORS)
async def test_a_page_sent_for_a_stream_is_not_a_cut_off_stream(vendor) -> None:
	"""A 200 page to a streaming request: named, with the fix, and not retried as a cut-off."""
	p = _provider(vendor, httpx.Response(200, text=SIGN_IN, headers=HTML))
	if vendor == "openai":
		p.may_fall_back = False  # OpenAI's own URL: streams from the first call
	with pytest.raises(ProviderError) as caught:
		async for _ in p.stream(make_request(MODELS[vendor])):
			pass
	message = str(caught.value)
	assert "Corp Proxy" in message and "base_url" in message
	assert "ended before" not in message and not caught.value.retryable


async def test_a_page_sent_with_200_to_a_whole_request_is_named() -> None:
	"""A 200 page to a request without streaming names the page, as the stream does."""
	error = await _generate_fails("google", httpx.Response(200, text=SIGN_IN, headers=HTML))
	assert "Corp Proxy" in str(error) and "base_url" in str(error)


async def test_a_page_of_unclosed_tags_is_read_at_once() -> None:
	"""A hostile page (thousands of unclosed <h1>): its title is looked for in linear time, the run is not held.

	12 ms of CPU at 50,000 tags; the unbounded search took 6.4 s, growing with the square."""
	costs = []
	for tags in (50_000 // FACTOR, 50_000):
		page = "<html>" + "<h1>x" * tags
		answer = httpx.Response(400, text=page, headers=HTML)
		cost, error = await cpu_async(lambda answer=answer: _generate_fails("chat", answer))
		costs.append(cost)
		assert "untitled" in str(error)
	assert_linear(*costs, "looking for the page's title")
