"""Google Ads user identifiers are normalized as Google requires, then SHA-256 hashed."""

from __future__ import annotations

import pytest

from openmolt_core.errors import ToolError
from openmolt_integrations._ads_user_data import (
	normalize_email,
	normalize_phone,
	sha256_hex,
	user_identifiers,
)


def test_sha256_is_the_lowercase_hex_digest() -> None:
	"""The digest of 'abc' is the FIPS 180-2 test vector, in lowercase hex."""
	assert sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


@pytest.mark.parametrize(
	("raw", "normalized"),
	[
		("  Ana@Example.COM ", "ana@example.com"),
		("Ana.Silva@Gmail.com", "anasilva@gmail.com"),
		("a.b.c@googlemail.com", "abc@googlemail.com"),
		("a.b@gmail.co", "a.b@gmail.co"),
		("a.b@sub.gmail.com", "a.b@sub.gmail.com"),
	],
)
def test_emails_are_trimmed_lowercased_and_gmail_dots_dropped(raw: str, normalized: str) -> None:
	"""Only gmail.com and googlemail.com lose the dots of the local part."""
	assert normalize_email(raw) == normalized


@pytest.mark.parametrize(
	("raw", "normalized"),
	[("+1 (415) 555-0123", "+14155550123"), ("+44.20.7946.0958", "+442079460958")],
)
def test_phone_numbers_become_e164(raw: str, normalized: str) -> None:
	"""Spaces, dashes, dots and parentheses go; the + country code stays."""
	assert normalize_phone(raw, "phoneNumber") == normalized


@pytest.mark.parametrize("raw", ["4155550123", "+0 415 555", "+1 415 555 0123 ext 9", "+12"])
def test_a_phone_without_country_code_or_with_letters_is_refused(raw: str) -> None:
	"""No guessing of a country: the error names the field and shows the E.164 form."""
	with pytest.raises(ToolError, match=r"contacts\[0\]\.phoneNumber: .*E\.164.*'\+14155550123'"):
		user_identifiers({"phoneNumber": raw}, "contacts[0]")


def test_identifiers_hash_names_and_keep_country_and_postal_code_plain() -> None:
	"""Each kind given becomes one identifier; hashed digests are passed lowercased."""
	ids = user_identifiers(
		{
			"hashedEmail": "AB" * 32,
			"phoneNumber": "+351 912 345 678",
			"firstName": "  ANA ",
			"lastName": "Silva",
			"countryCode": "pt",
			"postalCode": " 1000-001 ",
		},
		"c",
	)
	assert ids == [
		{"hashedEmail": "ab" * 32},
		{"hashedPhoneNumber": sha256_hex("+351912345678")},
		{
			"addressInfo": {
				"hashedFirstName": sha256_hex("ana"),
				"hashedLastName": sha256_hex("silva"),
				"countryCode": "PT",
				"postalCode": "1000-001",
			}
		},
	]


def test_a_malformed_digest_is_refused() -> None:
	"""A hashed field that is not 64 hex characters fails, naming it."""
	with pytest.raises(ToolError, match=r"c\.hashedPhoneNumber: give the 64-character"):
		user_identifiers({"hashedPhoneNumber": "+14155550123"}, "c")
