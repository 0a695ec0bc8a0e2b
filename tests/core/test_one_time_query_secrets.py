"""A query value that is a one-time credential is masked in logs, printed errors and events.

An OAuth redirect's ``?code=`` (traded for tokens), an ``otp``, a ``pin``, a signed callback's
``hmac`` (Shopify's): none is named like a secret (`SECRET_HINTS`), so a log's request line, an
error printed about the callback and a run's story showed them. A key that is one of them, or
holds ``otp`` or ``hmac`` as a word, or names a code that proves who one is (``verification_code``,
``device_code``...), is a secret's now; an ordinary field that ends in ``code``
(``country_code``, ``zip_code``, ``error_code``) stays readable. ``state`` is no credential: a
consent link a person is sent must keep it (and its value is signed).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from openmolt_core._support.masking import mask_printed, mask_urls, url_secrets, urls_secrets
from tests.core._logs import Keep, httpx_kept

VALUE = "Q7f3a9e21c4d"
SHORT = "482913"

ONE_TIME = [
	"code",
	"Code",
	"otp",
	"totp",
	"otp_code",
	"pin",
	"hmac",
	"x-shopify-hmac",
	"verification_code",
	"verificationCode",
	"confirmation_code",
	"device_code",
	"reset_code",
	"mfa_code",
	"security_code",
	"one_time_code",
]
ORDINARY = [
	"country_code",
	"zip_code",
	"postal_code",
	"error_code",
	"status_code",
	"currency_code",
	"language_code",
	"area_code",
	"codec",
	"barcode",
	"state",
	"pinned",
	"spinner",
	"shop",
]


def _url(name: str, value: str = VALUE) -> str:
	return f"https://app.example/auth/callback?{name}={value}&shop=acme.example"


@pytest.fixture
def kept() -> Iterator[Keep]:
	with httpx_kept() as handler:
		yield handler


@pytest.mark.parametrize("name", ONE_TIME)
@pytest.mark.parametrize("value", [VALUE, SHORT])
def test_a_one_time_credential_in_a_query_is_a_secret(name: str, value: str) -> None:
	url = _url(name, value)
	assert value in url_secrets(url, hinted_only=True)
	assert value in urls_secrets(f"redirected to {url}")


@pytest.mark.parametrize("name", ONE_TIME)
def test_a_one_time_credential_is_masked_in_a_log_a_printed_error_and_an_event(
	kept: Keep, name: str
) -> None:
	url = _url(name)
	logging.getLogger("httpx").info('HTTP Request: GET %s "HTTP/1.1 200 OK"', url)
	printed = mask_printed(f"RuntimeError: the callback {url} failed")
	event = mask_urls({"url": url})
	for shown in (kept.messages[-1], printed, event["url"]):
		assert VALUE not in shown and "[redacted]" in shown, shown
		assert "shop=acme.example" in shown


@pytest.mark.parametrize("name", ORDINARY)
def test_an_ordinary_field_stays_readable(kept: Keep, name: str) -> None:
	url = _url(name)
	assert VALUE not in url_secrets(url, hinted_only=True)
	logging.getLogger("httpx").info('HTTP Request: GET %s "HTTP/1.1 200 OK"', url)
	assert kept.messages[-1].count(VALUE) == 1
	assert mask_printed(f"failed at {url}") == f"failed at {url}"
	assert mask_urls(url) == url
