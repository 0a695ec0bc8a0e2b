"""A web URL with other slashes than ``//`` is a URL to a WHATWG parser, and its secrets show.

Browsers, Node's ``new URL`` and every WHATWG-conforming client read the slashes after a web
scheme (``http``, ``https``, ``ws``, ``wss``, ``ftp``) loosely: none, one, three, or
backslashes, ``https:user:PASSWORD@host`` is ``https://user:PASSWORD@host/``. A model that wrote
such a URL in a tool call (or an operator in a setting) had its password and key shown in the
run store's events, the viewer, spans, AG-UI and the logs: the one URL rule read only ``//``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from openmolt_core._support.masking import mask_urls
from openmolt_core.secrets import url_secrets
from tests.core._logs import Keep, httpx_kept

PASSWORD = "Pw-7f3a9e21c4d8"
KEY = "k3y-0b6a0d1e2f3a"

URLS = [
	f"https:user:{PASSWORD}@api.example/v1",
	f"https:/user:{PASSWORD}@api.example/v1",
	f"https:///user:{PASSWORD}@api.example/v1",
	f"https:\\\\user:{PASSWORD}@api.example/v1",
	f"https:/\\user:{PASSWORD}@api.example/v1",
	f"HTTP:\\user:{PASSWORD}@[::1]:8080/v1",
	f"wss:/user:{PASSWORD}@api.example/socket",
	f"https:api.example/v1?api_key={KEY}",
	f"ftp:/user:{PASSWORD}@files.example/",
]


@pytest.mark.parametrize("url", URLS)
def test_the_url_rule_reads_loose_slashes(url: str) -> None:
	"""`url_secrets` finds the password or key as in the ``//`` spelling."""
	assert url_secrets(url) & {PASSWORD, KEY}


@pytest.mark.parametrize("url", URLS)
def test_events_mask_a_loose_url(url: str) -> None:
	"""`mask_urls` (events, viewer, spans, AG-UI) hides them in text and in data."""
	for text in (url, f"called {url} twice", f'{{"url": "{url}"}}'):
		masked = mask_urls(text)
		assert PASSWORD not in masked and KEY not in masked, masked
	assert PASSWORD not in str(mask_urls({"input": {"url": url}}))


@pytest.fixture
def kept() -> Iterator[Keep]:
	with httpx_kept() as handler:
		yield handler


@pytest.mark.parametrize("url", URLS)
def test_a_log_record_masks_a_loose_url(kept: Keep, url: str) -> None:
	"""The log filter reads them too."""
	logging.getLogger("httpx").info("HTTP Request: GET %s", url)
	assert kept.messages and all(PASSWORD not in m and KEY not in m for m in kept.messages)


def test_words_after_a_scheme_name_stay_readable() -> None:
	"""Prose naming a scheme, and a mail address, keep their words."""
	for text in (
		"use https: it is safer, ask user@example.com",
		"http:// is plain",
		"mailto:a@b.c",
	):
		assert mask_urls(text) == text


def test_text_whose_lower_case_is_longer_is_read_too() -> None:
	"""``İ`` lowers to two characters: the scheme is still found where it is."""
	url = f"İİİ https:/user:{PASSWORD}@api.example/v1"
	assert PASSWORD not in mask_urls(url)
