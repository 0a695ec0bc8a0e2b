"""Every spelling of a URL is read by the one URL rule (`url_secrets`) and every masker using it.

A scheme-relative URL (``//user:PASSWORD@host``, which an OpenAPI document or an HTML page may
write), an uppercase scheme, a percent-encoded password, an IPv6 host, and a URL inside
JSON-escaped text (``https:\\/\\/``, Go's ``\\u0026`` for ``&``), HTML-escaped text or a
percent-encoded query value (a ``redirect_uri``): each gives the same secrets as the plain URL,
and the event and log maskers (`mask_urls`, the log filter) hide them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from openmolt_core._support.masking import mask_urls, shown_url
from openmolt_core.integrations._openapi_urls import shown
from openmolt_core.secrets import url_secrets
from tests.core._logs import Keep, httpx_kept

PASSWORD = "Pw-7f3a9e21c4d8"
KEY = "k3y-0b6a0d1e2f3a"


@pytest.mark.parametrize(
	("url", "expected"),
	[
		(f"//user:{PASSWORD}@api.example/v1", {PASSWORD}),
		(f"//api.example/v1?api_key={KEY}", {KEY}),
		(f"HTTPS://user:{PASSWORD}@api.example/v1?API_KEY={KEY}", {PASSWORD, KEY}),
		(f"https://user:{PASSWORD}@[2001:db8::1]:8443/v1?sig={KEY}", {PASSWORD, KEY}),
		(f"https:\\/\\/user:{PASSWORD}@api.example\\/v1", {PASSWORD}),
		(f"https://api.example/v1?page=2\\u0026api_key={KEY}", {KEY}),
	],
)
def test_the_url_rule_reads_every_spelling(url: str, expected: set[str]) -> None:
	"""Scheme-relative, uppercase, IPv6 and JSON-escaped URLs give their secrets."""
	assert url_secrets(url) >= expected
	assert url_secrets(url, hinted_only=True) >= expected


def test_a_scheme_relative_url_is_shown_without_its_password() -> None:
	"""`shown_url` cuts the password of ``//user:PASSWORD@host`` as of ``https://``."""
	text = shown_url(f"//user:{PASSWORD}@db.example/runs")
	assert PASSWORD not in text
	assert text == "//user@db.example/runs"


def test_the_openapi_error_url_reads_scheme_relative_urls_through_the_one_rule() -> None:
	"""No local workaround: `shown` masks what `url_secrets` finds."""
	assert PASSWORD not in shown(f"//u:{PASSWORD}@api.example/?token={KEY}")
	assert KEY not in shown(f"//u:{PASSWORD}@api.example/?token={KEY}")


TEXTS = [
	f"fetched //user:{PASSWORD}@api.example/v1 fine",
	f"fetched HTTPS://user:{PASSWORD}@api.example/v1 fine",
	f'{{"next": "https:\\/\\/user:{PASSWORD}@api.example\\/v1"}}',
	f'{{"next": "https://api.example/items?page=2\\u0026api_key={KEY}"}}',
	f'{{"next": "https:\\/\\/api.example\\/items?page=2\\u0026api_key={KEY}"}}',
	f"<a href='https:&#x2F;&#x2F;user:{PASSWORD}@api.example/v1'>next</a>",
	f"https://app.example/login?next=https%3A%2F%2Fapi.example%2Fv1%3Fapi_key%3D{KEY}",
	f"https://app.example/login?next=https%3A%2F%2Fuser%3A{PASSWORD}%40api.example%2Fv1",
	f"see <https://user:{PASSWORD}@[::1]:8080/v1>",
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_event_masker_hides_a_url_s_secrets_in_every_spelling(text: str) -> None:
	"""`mask_urls` (the run store's events, the viewer, spans) finds the URL in each."""
	masked = mask_urls(text)
	assert PASSWORD not in masked and KEY not in masked, masked
	assert "[redacted]" in masked
	assert mask_urls({"result": [text]}) == {"result": [masked]}


@pytest.fixture
def kept() -> Iterator[Keep]:
	with httpx_kept() as handler:
		yield handler


@pytest.mark.parametrize("text", TEXTS)
def test_a_log_record_hides_a_url_s_secrets_in_every_spelling(kept: Keep, text: str) -> None:
	"""The log filter reads the URLs of a record's message and arguments the same way."""
	logging.getLogger("httpx").info("HTTP Request: GET %s", text)
	logging.getLogger("httpx").info(f"body: {text}")
	assert kept.messages and all(PASSWORD not in m and KEY not in m for m in kept.messages), (
		kept.messages
	)


def test_plain_text_with_slashes_stays_as_it_is() -> None:
	"""A comment, a path or a search URL has nothing to mask."""
	for text in (
		"// a comment about user@example.com",
		"see //files/x and https://api.example/v1?page=2&q=weather",
		'{"path": "a\\/b", "n": 1}',
	):
		assert mask_urls(text) == text


@pytest.mark.parametrize(
	"text",
	[
		f"jdbc:postgresql://app:{PASSWORD}@db.internal:5432/app",
		f"-Dhttps.proxy=http://app:{PASSWORD}@proxy.internal:8080",
		f" <https://app:{PASSWORD}@api.example/v1>",
		f"--endpoint=https://api.example/v1?api_key={PASSWORD}",
	],
)
def test_a_url_inside_a_value_gives_its_secrets(text: str) -> None:
	"""A JDBC URL, a JVM option, a bracketed URL: the URL in the value is read, wherever it
	starts, and so in the environment (`environment_secrets`, `named_secrets`)."""
	from openmolt_core._support.masking import environment_secrets, named_secrets

	assert PASSWORD in url_secrets(text)
	assert PASSWORD in environment_secrets({"JAVA_OPTS": text})
	assert PASSWORD in named_secrets({"SERVICE_URL": text})


def test_a_log_record_hides_a_url_s_secrets_in_any_argument_and_its_traceback(
	kept: Keep,
) -> None:
	"""A URL in an argument that is no string (a list, an exception: httpx's error names the
	URL it failed for), in a message that is an object, in a nested mapping and in the
	traceback of ``exc_info``: its password and secret-named query values are masked."""
	import httpx

	log = logging.getLogger("httpx")
	formatter = logging.Formatter("%(message)s")
	url = f"https://user:{PASSWORD}@api.example/v1?api_key={KEY}"
	failed = httpx.Response(401, request=httpx.Request("GET", url))
	try:
		failed.raise_for_status()
	except httpx.HTTPStatusError as exc:
		error = exc
	texts: list[str] = []

	class Formatted(logging.Handler):
		def emit(self, record: logging.LogRecord) -> None:
			texts.append(formatter.format(record))

	handler = Formatted()
	log.addHandler(handler)
	try:
		log.info("list %s", [url])
		log.warning("failed: %s", error)
		log.warning(error)
		log.info("map %(u)s", {"u": {"url": url}})
		try:
			raise error
		except httpx.HTTPStatusError:
			log.exception("the call failed")
	finally:
		log.removeHandler(handler)
	assert len(texts) == 5
	assert "Traceback" in texts[-1]
	shown = "\n".join([*texts, *kept.messages])
	assert PASSWORD not in shown and KEY not in shown, shown


def test_a_path_with_a_double_slash_is_no_url() -> None:
	"""``a//b@c`` is a path, not a scheme-relative URL: its words stay readable."""
	text = "the path a//team@corp?x=1 and the team"
	assert mask_urls(text) == text
