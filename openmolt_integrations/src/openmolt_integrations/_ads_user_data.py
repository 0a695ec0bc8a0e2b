"""Google Ads user identifiers: normalized, then hashed with SHA-256, as Google requires.

Offline click conversions (enhanced conversions for leads) and Customer Match lists identify
people by email, phone number and name with address. Google accepts these only as SHA-256 hex
digests of the *normalized* value, and matches nothing when the normalization differs, so it is
done here and never left to the model:

- email: surrounding whitespace removed, lowercased; for ``gmail.com`` and ``googlemail.com``
  the dots before the ``@`` removed (Google's own examples do the same);
- phone number: E.164 (``+`` country code and number, digits only: ``+14155550123``); spaces,
  dashes, dots and parentheses are dropped, and a number without its ``+`` country code is
  refused rather than guessed;
- first and last name: surrounding whitespace removed, lowercased;
- country code (ISO 3166-1 alpha-2, uppercased) and postal code (trimmed) are sent as they are:
  Google wants them unhashed.

A value already hashed (64 hex characters) may be given as ``hashedEmail`` or
``hashedPhoneNumber`` and is sent lowercased. Plain values never leave this module unhashed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from openmolt_core.errors import ToolError

__all__ = [
	"CONTACT_FIELDS",
	"Send",
	"click_conversions",
	"contact_operations",
	"customer_match_upload",
	"job_external_id",
	"normalize_email",
	"normalize_phone",
	"sha256_hex",
	"user_identifiers",
]

CONTACT_FIELDS: dict[str, dict[str, Any]] = {
	"email": {
		"type": "string",
		"description": "Email address in plain text; normalized and SHA-256 hashed before sending.",
	},
	"phoneNumber": {
		"type": "string",
		"description": "Phone number in E.164 with its country code, e.g. '+14155550123'; hashed before sending.",
	},
	"firstName": {
		"type": "string",
		"description": "First name (with lastName, countryCode and postalCode); hashed before sending.",
	},
	"lastName": {
		"type": "string",
		"description": "Last name (with firstName, countryCode and postalCode); hashed before sending.",
	},
	"countryCode": {
		"type": "string",
		"pattern": "^[A-Za-z]{2}$",
		"description": "Two-letter ISO country code of the address, e.g. 'US' (sent unhashed).",
	},
	"postalCode": {
		"type": "string",
		"description": "Postal code of the address, e.g. '94043' (sent unhashed).",
	},
	"hashedEmail": {
		"type": "string",
		"pattern": "^[0-9a-fA-F]{64}$",
		"description": "Instead of email: its SHA-256 hex digest, already normalized and hashed.",
	},
	"hashedPhoneNumber": {
		"type": "string",
		"pattern": "^[0-9a-fA-F]{64}$",
		"description": "Instead of phoneNumber: the SHA-256 hex digest of its E.164 form.",
	},
}
"""Input properties of one person, shared by the click conversion and Customer Match tools."""

_ADDRESS = ("firstName", "lastName", "countryCode", "postalCode")
_E164 = re.compile(r"^\+[1-9][0-9]{6,14}$")
_HEX = re.compile(r"^[0-9a-fA-F]{64}$")


def sha256_hex(text: str) -> str:
	"""The lowercase SHA-256 hex digest of a string's UTF-8 bytes.

	Args:
		text: The normalized value.

	Returns:
		64 lowercase hex characters.
	"""
	return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalize_email(value: str) -> str:
	"""An email as Google hashes it: trimmed, lowercased, gmail dots removed.

	Args:
		value: The email address.

	Returns:
		The normalized address.
	"""
	email = value.strip().lower()
	local, at, domain = email.rpartition("@")
	if at and domain in ("gmail.com", "googlemail.com"):
		email = f"{local.replace('.', '')}@{domain}"
	return email


def normalize_phone(value: str, field: str) -> str:
	"""A phone number in E.164, as Google hashes it.

	Args:
		value: The number, e.g. ``+1 (415) 555-0123``.
		field: Where it came from, for the error.

	Returns:
		``+`` and digits only, e.g. ``+14155550123``.

	Raises:
		ToolError: It is not an E.164 number with its country code.
	"""
	phone = re.sub(r"[\s\-.()]", "", value)
	if not _E164.match(phone):
		raise ToolError(
			f"{field}: {value!r} is not an E.164 phone number; give + then the country code "
			"and number, digits only, e.g. '+14155550123'"
		)
	return phone


def _hashed(value: str, field: str) -> str:
	if not _HEX.match(value):
		raise ToolError(f"{field}: give the 64-character SHA-256 hex digest, or the plain value")
	return value.lower()


def user_identifiers(contact: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
	"""The ``UserIdentifier`` objects (JSON names) for one person, hashed.

	Args:
		contact: ``email``, ``phoneNumber``, the four address fields, or the hashed forms.
		where: The input path of the contact (``contacts[2]``), for errors.

	Returns:
		One identifier per kind given: ``hashedEmail``, ``hashedPhoneNumber``, ``addressInfo``.

	Raises:
		ToolError: No identifier, an identifier given twice, an incomplete address, or a bad
			phone number or digest.
	"""
	out: list[dict[str, Any]] = []
	for plain, hashed, normalize in (
		("email", "hashedEmail", lambda v, f: normalize_email(v)),
		("phoneNumber", "hashedPhoneNumber", normalize_phone),
	):
		given_plain, given_hashed = contact.get(plain), contact.get(hashed)
		if given_plain and given_hashed:
			raise ToolError(f"{where}: give {plain} or {hashed}, not both")
		if given_plain:
			out.append({hashed: sha256_hex(normalize(str(given_plain), f"{where}.{plain}"))})
		elif given_hashed:
			out.append({hashed: _hashed(str(given_hashed), f"{where}.{hashed}")})
	address = {k: str(contact[k]).strip() for k in _ADDRESS if contact.get(k)}
	if address:
		missing = [k for k in _ADDRESS if k not in address]
		if missing:
			raise ToolError(
				f"{where}: an address match needs firstName, lastName, countryCode and "
				f"postalCode together; missing {', '.join(missing)}"
			)
		out.append(
			{
				"addressInfo": {
					"hashedFirstName": sha256_hex(address["firstName"].lower()),
					"hashedLastName": sha256_hex(address["lastName"].lower()),
					"countryCode": address["countryCode"].upper(),
					"postalCode": address["postalCode"],
				}
			}
		)
	return out


_CLICK_IDS = ("gclid", "gbraid", "wbraid")
_JOB_NAME = re.compile(r"^customers/[0-9]+/offlineUserDataJobs/[0-9]+$")

Send = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Sends one of the integration's declarative requests by step name, returning its reply."""


def click_conversions(conversions: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
	"""``ClickConversion`` objects (JSON names) from the tool's input, identifiers hashed.

	Args:
		conversions: The conversions, each with at most one click id and any contact fields.

	Returns:
		The conversions with the contact fields replaced by ``userIdentifiers``.

	Raises:
		ToolError: Two click ids, or neither a click id nor a person to match.
	"""
	out = []
	for index, conversion in enumerate(conversions):
		where = f"conversions[{index}]"
		ids = [k for k in _CLICK_IDS if conversion.get(k)]
		if len(ids) > 1:
			raise ToolError(f"{where}: give one click id of gclid, gbraid or wbraid, not {ids}")
		identifiers = user_identifiers(conversion, where)
		if not ids and not identifiers:
			raise ToolError(
				f"{where}: give a click id (gclid, gbraid or wbraid) or the person's email, "
				"phoneNumber or address, so Google can match the conversion"
			)
		wire = {k: v for k, v in conversion.items() if k not in CONTACT_FIELDS}
		if identifiers:
			wire["userIdentifiers"] = identifiers
		out.append(wire)
	return out


def contact_operations(contacts: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
	"""One ``OfflineUserDataJobOperation`` (a create of the person's hashed identifiers) each.

	Args:
		contacts: The people to add.

	Returns:
		``[{"create": {"userIdentifiers": [...]}}]``.

	Raises:
		ToolError: A contact with no identifier, or a bad one.
	"""
	operations = []
	for index, contact in enumerate(contacts):
		identifiers = user_identifiers(contact, f"contacts[{index}]")
		if not identifiers:
			raise ToolError(
				f"contacts[{index}]: give email, phoneNumber (or their hashed forms) or "
				"firstName, lastName, countryCode and postalCode"
			)
		operations.append({"create": {"userIdentifiers": identifiers}})
	return operations


def job_external_id(key: str) -> str:
	"""The ``externalId`` of the Customer Match job of one tool call: 63 bits of its key.

	The call's idempotency key (`openmolt_core.tools.ToolContext.idempotency_key`) is the same
	every time the call is made again (a retry, a durable run's replay), so the job it created
	can be found by this id (an int64 Google keeps with the job, sent as a decimal string).
	"""
	return str(int(hashlib.sha256(key.encode()).hexdigest()[:16], 16) >> 1)


_FIND = (
	"SELECT offline_user_data_job.resource_name, offline_user_data_job.status "
	"FROM offline_user_data_job WHERE offline_user_data_job.external_id = {external_id}"
)


async def _existing_job(send: Send, customer_id: str, external_id: str) -> tuple[str, str] | None:
	found = await send(
		"find", {"customerId": customer_id, "query": _FIND.format(external_id=external_id)}
	)
	rows = found.get("results") if isinstance(found, dict) else None
	for row in rows or []:
		job = row.get("offlineUserDataJob") if isinstance(row, dict) else None
		if not isinstance(job, dict):
			continue
		name = job.get("resourceName")
		if isinstance(name, str) and _JOB_NAME.match(name):
			return name, str(job.get("status") or "")
	return None


async def customer_match_upload(
	input: Mapping[str, Any], operations: list[dict[str, Any]], send: Send, key: str
) -> dict[str, Any]:
	"""Create a Customer Match job for the list, add the operations, run it; once per call.

	The job carries ``externalId`` from the call's idempotency key, and is looked up by it first:
	a call made again after a crash (a durable run's replay, a retry) goes on with the job the
	first attempt created instead of creating a second one. A job still ``PENDING`` gets the
	operations (adding a person twice to one job adds them once) and is run; a job already run
	(``RUNNING``, ``SUCCESS``, ``FAILED``) is reported as it is, nothing sent again.

	Args:
		input: ``customerId``, ``userList`` and optional ``consent``.
		operations: From `contact_operations` (hashed already).
		send: Sends the ``find``, ``create``, ``add`` and ``run`` requests.
		key: The call's idempotency key.

	Returns:
		``{"job", "contacts", "operation"}`` and ``partialFailureError`` when some failed; for a
		job an earlier attempt already ran, ``{"job", "contacts", "status", "earlierAttempt"}``.

	Raises:
		ToolError: Google's reply to the create request names no job.
	"""
	external_id = job_external_id(key)
	existing = await _existing_job(send, input["customerId"], external_id)
	if existing is not None and existing[1] not in ("", "PENDING", "UNSPECIFIED", "UNKNOWN"):
		return {
			"job": existing[0],
			"contacts": len(operations),
			"status": existing[1],
			"earlierAttempt": True,
		}
	name: Any
	if existing is not None:
		name = existing[0]
	else:
		create = {
			"customerId": input["customerId"],
			"userList": input["userList"],
			"externalId": external_id,
		}
		if input.get("consent"):
			create["consent"] = input["consent"]
		created = await send("create", create)
		name = (created or {}).get("resourceName") if isinstance(created, dict) else None
		if not isinstance(name, str) or not _JOB_NAME.match(name):
			raise ToolError(
				f"Google Ads answered the job creation without a job resource name "
				f"({str(created)[:200]}); nothing was uploaded, try again"
			)
	added = await send("add", {"resourceName": name, "operations": operations})
	ran = await send("run", {"resourceName": name})
	out: dict[str, Any] = {"job": name, "contacts": len(operations)}
	if isinstance(ran, dict) and ran.get("name"):
		out["operation"] = ran["name"]
	if isinstance(added, dict) and added.get("partialFailureError"):
		out["partialFailureError"] = added["partialFailureError"]
	return out
