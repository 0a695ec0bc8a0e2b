"""Google Ads user identifiers are normalized as Google requires, then SHA-256 hashed."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from openmolt_core.errors import ToolError
from openmolt_integrations._ads_user_data import (
	customer_match_upload,
	job_external_id,
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


def _upload(status: str | None) -> list[tuple[str, dict[str, Any]]]:
	"""Upload two people where an earlier attempt of the call left a job in ``status``."""
	sent: list[tuple[str, dict[str, Any]]] = []
	job = "customers/1/offlineUserDataJobs/7"

	async def send(step: str, request: dict[str, Any]) -> Any:
		sent.append((step, request))
		if step == "find":
			found = {"offlineUserDataJob": {"resourceName": job, "status": status}}
			return {"results": [found]} if status else {}
		return {"resourceName": job} if step == "create" else {}

	async def main() -> Any:
		operations = [{"create": {"userIdentifiers": [{"hashedEmail": "a" * 64}]}}] * 2
		request = {"customerId": "1", "userList": "customers/1/userLists/5"}
		return await customer_match_upload(request, operations, send, "key-of-the-call")

	out = anyio.run(main)
	sent.append(("result", out))
	return sent


def test_the_job_id_comes_from_the_call_key_and_fits_an_int64() -> None:
	"""The same key gives the same external id; another key another; always below 2**63."""
	one, again, other = (job_external_id(k) for k in ("k-1", "k-1", "k-2"))
	assert one == again != other and all(0 <= int(v) < 2**63 for v in (one, other))


def test_a_call_made_again_goes_on_with_the_job_of_its_first_attempt() -> None:
	"""No job: created with the call's id. PENDING: filled and run, not created again. Already
	run: reported as it is, nothing sent but the look-up."""
	fresh = _upload(None)
	assert [step for step, _ in fresh] == ["find", "create", "add", "run", "result"]
	assert fresh[1][1]["externalId"] == job_external_id("key-of-the-call")
	assert fresh[0][1]["query"].endswith(f"= {job_external_id('key-of-the-call')}")
	pending = _upload("PENDING")
	assert [step for step, _ in pending] == ["find", "add", "run", "result"]
	ran = _upload("RUNNING")
	assert [step for step, _ in ran] == ["find", "result"]
	assert ran[-1][1] == {
		"job": "customers/1/offlineUserDataJobs/7",
		"contacts": 2,
		"status": "RUNNING",
		"earlierAttempt": True,
	}
