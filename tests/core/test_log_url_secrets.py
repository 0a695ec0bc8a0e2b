"""A URL a log record shows carries its secrets masked, though no source knows them.

A key the model read in its instructions and put in ``httpRequest``'s URL (``?api_key=``), a
signed link a tool returned (``?sig=``), a password in a URL's userinfo: the run keeps them as
the model wrote them (it needs them for its next call), but the HTTP client's request line,
``HTTP Request: GET https://...?api_key=... "HTTP/1.1 200 OK"``, is a log, and a log shows no
secret. A URL in a record (its message or an argument: httpx passes its ``URL``) has its
password and its query values named like secrets (`url_secrets`, ``hinted_only``) masked; a
search's words stay readable.
"""

from __future__ import annotations

import logging

import httpx
import pytest

from openmolt_core import secrets

KEY = "k3y-7f3a9e21c4d8b6a0"


class Keep(logging.Handler):
	"""Keeps the formatted messages."""

	def __init__(self) -> None:
		super().__init__()
		self.messages: list[str] = []

	def emit(self, record: logging.LogRecord) -> None:
		self.messages.append(record.getMessage())


@pytest.fixture
def kept() -> object:
	secrets.install_log_redaction()
	handler = Keep()
	log = logging.getLogger("httpx")
	log.addHandler(handler)
	level = log.level
	log.setLevel(logging.INFO)
	try:
		yield handler
	finally:
		log.removeHandler(handler)
		log.setLevel(level)


@pytest.mark.parametrize(
	"url",
	[
		f"https://api.example/v1/x?api_key={KEY}",
		f"https://api.example/v1/x?page=2&token={KEY}",
		f"https://bucket.example/file.pdf?X-Amz-Signature={KEY}&X-Amz-Expires=300",
		f"https://user:{KEY}@api.example/v1",
	],
)
def test_the_request_line_of_a_url_with_a_secret_is_masked(kept: Keep, url: str) -> None:
	log = logging.getLogger("httpx")
	log.info('HTTP Request: %s %s "%s %d %s"', "GET", httpx.URL(url), "HTTP/1.1", 200, "OK")
	log.info("calling %s", url)
	log.info(f"calling {url} now")
	assert len(kept.messages) == 3
	for message in kept.messages:
		assert KEY not in message, message
		assert "[redacted]" in message
		assert "api.example" in message or "bucket.example" in message


@pytest.mark.parametrize(
	"url",
	[
		"https://api.example/v1/items?page=2&limit=50",
		"https://api.example/search?q=weather+in+oslo&lang=en",
		"https://api.example/v1/items",
	],
)
def test_a_url_without_secrets_is_left_as_it_is(kept: Keep, url: str) -> None:
	"""Paging, a search's words, a plain address: a log a person reads stays readable."""
	log = logging.getLogger("httpx")
	log.info('HTTP Request: %s %s "%s %d %s"', "GET", httpx.URL(url), "HTTP/1.1", 200, "OK")
	assert kept.messages == [f'HTTP Request: GET {url} "HTTP/1.1 200 OK"']
