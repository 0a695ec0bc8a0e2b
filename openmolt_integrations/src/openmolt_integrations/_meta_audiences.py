"""Meta Ads Custom Audiences from a customer list (Graph v26.0).

People are matched by email, phone, name, postal code and country, which Meta takes only as
SHA-256 hex digests of the normalized values: the tool normalizes and hashes them here, never the
model, the way Meta's own SDK does (facebook-business 26, ``CustomAudienceMixin.format_params``
and ``normalize_key``; the test suite compares the two):

- every value: surrounding whitespace and dots removed, lowercased;
- phone: digits only, with the country code (the input must start with ``+``);
- first and last name: letters a-z only;
- postal code: the part before a dash; country: the first two letters (ISO 3166-1 alpha-2).

Kept apart from `meta_ads`, which lists the tools and runs the upload.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from openmolt_core.errors import ToolError
from openmolt_core.integrations import HttpTool
from openmolt_core.integrations.schema import array, obj, passthrough, passthrough_of, string

__all__ = [
	"ADD_USERS_REQUEST",
	"AUDIENCE_FIELDS",
	"AUDIENCE_TOOLS",
	"PERSON",
	"SCHEMA_KEYS",
	"USERS_INPUT",
	"users_payload",
]

_ACCOUNT = "act_{{ input.ad_account_id | remove_first: 'act_' }}"
_AD_ACCOUNT_ID = string(
	'The ad account id, with or without the "act_" prefix ("act_1234567890").',
	pattern="^(act_)?[0-9]+$",
)
_AUDIENCE_ID = string("The custom audience's id (from createCustomAudience).", pattern="^[0-9]+$")

SCHEMA_KEYS = {
	"email": "EMAIL",
	"phone": "PHONE",
	"firstName": "FN",
	"lastName": "LN",
	"zip": "ZIP",
	"country": "COUNTRY",
}
"""Each person input and the key Meta's multi-key schema names it by."""

PERSON: dict[str, Any] = obj(
	{
		"email": string("Email address in plain text; normalized and hashed before sending."),
		"phone": string(
			"Phone number with its + country code, e.g. '+14155550123'; hashed before sending.",
			pattern=r"^\+[0-9 ().-]+$",
		),
		"firstName": string("First name; hashed before sending."),
		"lastName": string("Last name; hashed before sending."),
		"zip": string("Postal code, e.g. '94043'; hashed before sending."),
		"country": string(
			"Two-letter ISO country code, e.g. 'US'; hashed before sending.",
			pattern="^[A-Za-z]{2}$",
		),
	},
	closed=True,
)
"""One person of a customer list, in plain text."""

_STRIP = " \t\r\n\0\x0b."


def _normalized(key: str, value: str) -> str:
	"""A value as facebook-business normalizes it for ``key`` before hashing."""
	value = value.strip(_STRIP).lower()
	if key == "PHONE":
		return re.sub(r"[^0-9]", "", value)
	if key in ("FN", "LN"):
		return re.sub(r"[^a-z]", "", value)
	if key == "ZIP":
		return value.split("-")[0]
	if key == "COUNTRY":
		return re.sub(r"[^a-z]", "", value)[:2]
	return value


def users_payload(users: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
	"""The ``payload`` of ``POST /{custom_audience_id}/users``: a multi-key schema and hashed rows.

	Args:
		users: The people, each with the same identifiers (``email``, ``phone``...).

	Returns:
		``{"schema": [...], "is_raw": True, "data": [[sha256 hex, ...], ...]}``.

	Raises:
		ToolError: A person has no identifier, or not the same ones as the first person.
	"""
	names = [n for n in SCHEMA_KEYS if users and users[0].get(n)]
	if not names:
		raise ToolError("users[0]: give at least one of " + ", ".join(SCHEMA_KEYS))
	rows = []
	for index, user in enumerate(users):
		given = [n for n in SCHEMA_KEYS if user.get(n)]
		if given != names:
			raise ToolError(
				f"users[{index}]: every person needs the same identifiers as users[0] "
				f"({', '.join(names)}); this one has {', '.join(given) or 'none'}. Send people "
				"with other identifiers in another call"
			)
		rows.append(
			[
				hashlib.sha256(
					_normalized(SCHEMA_KEYS[n], str(user[n])).encode("utf-8")
				).hexdigest()
				for n in names
			]
		)
	return {"schema": [SCHEMA_KEYS[n] for n in names], "is_raw": True, "data": rows}


ADD_USERS_REQUEST = HttpTool(
	handle="addCustomAudienceUsers",
	description="CustomAudience.create_user: add hashed people to a customer list audience.",
	scopes=["audiences"],
	method="POST",
	endpoint="/{{ input.custom_audience_id }}/users",
	body=passthrough("payload"),
	input_schema=obj(
		{
			"custom_audience_id": _AUDIENCE_ID,
			"payload": {"type": "object", "description": "The schema and hashed rows."},
		},
		["custom_audience_id", "payload"],
		closed=True,
	),
)
"""The request ``addCustomAudienceUsers`` sends once it has hashed the people."""

_CREATE = obj(
	{
		"ad_account_id": _AD_ACCOUNT_ID,
		"name": string("The audience name."),
		"description": string("What the list holds."),
		"customer_file_source": string(
			"Where the people's data comes from: USER_PROVIDED_ONLY (collected from them), "
			"PARTNER_PROVIDED_ONLY or BOTH_USER_AND_PARTNER_PROVIDED.",
			enum=["USER_PROVIDED_ONLY", "PARTNER_PROVIDED_ONLY", "BOTH_USER_AND_PARTNER_PROVIDED"],
		),
	},
	["ad_account_id", "name", "customer_file_source"],
	closed=True,
)
AUDIENCE_FIELDS = (
	"id,name,description,subtype,approximate_count_lower_bound,"
	"approximate_count_upper_bound,operation_status,delivery_status,time_updated"
)
"""The fields listCustomAudiences returns by default."""

AUDIENCE_TOOLS: list[HttpTool] = [
	HttpTool(
		handle="createCustomAudience",
		description=(
			"Create an empty customer list audience (subtype CUSTOM) in an ad account; add "
			"people with addCustomAudienceUsers, then target it in an ad set's "
			'targeting.custom_audiences ([{"id": "..."}]).'
		),
		scopes=["audiences"],
		method="POST",
		endpoint=f"/{_ACCOUNT}/customaudiences",
		body={"subtype": "CUSTOM", **passthrough_of(_CREATE, exclude=["ad_account_id"])},
		input_schema=_CREATE,
	),
]
"""The declarative audience tool; `meta_ads` adds the list and ``addCustomAudienceUsers``."""

USERS_INPUT = obj(
	{
		"custom_audience_id": _AUDIENCE_ID,
		"users": array(
			PERSON,
			"The people (up to 10000 per call), each with the same identifiers, e.g. "
			"[{'email': 'ana@example.com', 'phone': '+14155550123'}].",
			minItems=1,
			maxItems=10000,
		),
	},
	["custom_audience_id", "users"],
	closed=True,
)
"""The input of ``addCustomAudienceUsers``: people in plain text."""
