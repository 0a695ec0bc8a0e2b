"""A tab or line break inside a URL is no obstacle to a WHATWG parser, so its secrets show.

Browsers, Node's ``new URL`` and ``fetch`` take every ASCII tab, LF and CR out of a URL before
reading it (and the C0 controls and spaces around it): ``https://u:PASSWORD\\n@host`` logs in
with ``PASSWORD``, ``ht\\ttps://...`` is ``https://...``. The URL rule read the text as written:
a password or key a break was put in (or next to) was shown in the run store's events, the
viewer, spans, AG-UI, the logs and the errors that name a URL.
"""

from __future__ import annotations

import html
import json
import logging
import re
from collections.abc import Iterator

import pytest

from openmolt_core._support.masking import mask_url_logins, mask_urls, shown_url
from openmolt_core.secrets import url_secrets
from tests.core._logs import Keep, httpx_kept

PASSWORD = "Pw-7f3a9e21c4d8"
KEY = "k3y-0b6a0d1e2f3a"
HALF = len(PASSWORD) // 2

URLS = [
	f"https://u:{PASSWORD}\n@api.example/v1",
	f"https://u:{PASSWORD}\r\n@api.example/v1",
	f"https://u:{PASSWORD}\t@api.example/v1",
	f"https://u\t:{PASSWORD}@api.example/v1",
	f"https://u:{PASSWORD[:HALF]}\n{PASSWORD[HALF:]}@api.example/v1",
	f"https://u:{PASSWORD[:HALF]}\t{PASSWORD[HALF:]}@api.example/v1",
	f"https://u:{PASSWORD[:3]}\t{PASSWORD[3:HALF]}\n{PASSWORD[HALF:]}@api.example/v1",
	f"https:/\t/u:{PASSWORD}@api.example/v1",
	f"h\tttps://u:{PASSWORD}@api.example/v1",
	f"https\n://u:{PASSWORD}@api.example/v1",
	f"https://api.example/v1\n?api_key={KEY}",
	f"https://api.example/v1?api\n_key={KEY}",
	f"https://api.example/v1?api_key=\t{KEY}",
	f"https://api.example/v1?api_key={KEY[:HALF]}\t{KEY[HALF:]}",
	f"//u:{PASSWORD}\n@api.example/v1",
	f"https://u:{PASSWORD[:HALF]}\\u000a{PASSWORD[HALF:]}@api.example/v1",
]
IN_HTML = [  # text that shows a URL HTML-escaped (a page a tool read): its break too
	f"https://u:{PASSWORD[:HALF]}&#10;{PASSWORD[HALF:]}@api.example/v1",
	f"https://u:{PASSWORD[:HALF]}&#x9;{PASSWORD[HALF:]}@api.example/v1",
	f"https://u:{PASSWORD[:HALF]}&NewLine;{PASSWORD[HALF:]}@api.example/v1",
	f"https://u:{PASSWORD}&#13;&#10;@api.example/v1",
]


def _shows(text: str) -> bool:
	"""Whether text shows the password or the key, whole or with a break put in."""
	joined = re.sub(r"\\+(?:[tnr]|u000[9aAdD])", "", html.unescape(text))
	joined = joined.translate({ord(c): None for c in "\t\n\r"})
	return PASSWORD in joined or KEY in joined


@pytest.mark.parametrize("url", URLS)
def test_the_url_rule_reads_a_url_as_a_whatwg_parser_does(url: str) -> None:
	"""`url_secrets` finds the password or key, and a mask with what it found hides it."""
	found = url_secrets(url)
	assert found & {PASSWORD, KEY}
	assert not _shows(shown_url(url)), shown_url(url)


@pytest.mark.parametrize("url", URLS + IN_HTML)
def test_events_mask_a_url_with_breaks(url: str) -> None:
	"""`mask_urls` (events, viewer, spans, AG-UI) hides them in text, in data and in JSON."""
	for text in (url, f"called {url} twice", json.dumps({"url": url})):
		masked = mask_urls(text)
		assert not _shows(masked), masked
	assert not _shows(str(mask_urls({"input": {"url": url}})))


@pytest.fixture
def kept() -> Iterator[Keep]:
	with httpx_kept() as handler:
		yield handler


@pytest.mark.parametrize("url", URLS + IN_HTML)
def test_a_log_record_masks_a_url_with_breaks(kept: Keep, url: str) -> None:
	"""The log filter reads them too."""
	logging.getLogger("httpx").info("HTTP Request: GET %s", url)
	assert kept.messages and not any(_shows(m) for m in kept.messages), kept.messages


def test_lines_of_prose_around_a_url_stay_readable() -> None:
	"""Text whose lines hold a URL without a secret, and a mail address, keeps its words."""
	for text in (
		"see https://example.com/docs\nthen ask alice@example.com",
		"open https://example.com/a?q=weather\nNext line\tand a tab",
		"https://example.com\n@alice said hi",
	):
		assert mask_urls(text) == text


@pytest.mark.parametrize(
	("text", "secret", "kept"),
	[
		(
			"Open https://example.com/a?sig=abc\nThen reply to bob@example.com",
			"abc",
			"\nThen reply",
		),
		(
			"The link: https://files.example/x?X-Amz-Signature=0a1b2c3d4e\nbest regards",
			"0a1b2c3d4e",
			"\nbest regards",
		),
		(  # docs/guides/triggers.md: the viewer's link, then a code fence and a paragraph
			"run viewer: http://127.0.0.1:40123/?token=abc123def\n```\n\nSecrets come from the env.",
			"abc123def",
			"\n```\n\nSecrets come",
		),
		(  # the JSON of such a text: its break escaped
			json.dumps({"log": "GET https://example.com/a?sig=abc\nThen retried"}),
			"abc",
			"\\nThen retried",
		),
	],
)
def test_a_url_that_ends_its_line_leaves_the_next_line_s_words(
	text: str, secret: str, kept: str
) -> None:
	"""A line break after a URL's last secret ends the URL in text: the next line's first word
	is no part of it (masked, with the break, it was lost to the reader, and the break with it)."""
	masked = mask_urls(text)
	assert kept in masked, masked
	assert secret not in masked, masked


def test_a_url_that_ends_its_line_does_not_mask_a_word_of_the_text_elsewhere() -> None:
	"""docs/guides/accounts.md: a callback URL that ends a line before a list's next item read as
	the path token ``callback`.2.``, and its start (``callback``) was masked wherever it stood."""
	text = (
		"Register the callback URL\n`https://app.example.com/auth/callback`.\n"
		"2. Mail alice@example.com; the callback stores the token"
	)
	assert mask_urls(text) == text
	assert mask_url_logins(text) == text


def test_a_secret_broken_inside_a_url_that_goes_on_is_still_masked() -> None:
	"""What the URL has after the secret (``@host``, ``&next``) says the break is inside it."""
	for text in (
		f"see https://u:{PASSWORD[:HALF]}\n{PASSWORD[HALF:]}@api.example/v1\nThen more",
		f"see https://api.example/v1?api_key={KEY[:HALF]}\n{KEY[HALF:]}&page=2\nThen more",
	):
		masked = mask_urls(text)
		assert not _shows(masked) and masked.endswith("\nThen more"), masked
