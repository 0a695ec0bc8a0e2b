"""The Google Ads requests that upload conversions and Customer Match contacts (v26).

``CLICK_CONVERSIONS_REQUEST`` (ConversionUploadService) and ``CUSTOMER_MATCH_REQUESTS``
(GoogleAdsService.Search and OfflineUserDataJobService) are sent by `google_ads`' composed tools
once `_ads_user_data` has hashed the people's identifiers; ``ADJUSTMENTS_TOOL``
(ConversionAdjustmentUploadService) retracts or restates uploaded conversions and carries no
people's data. Kept apart from `google_ads`, which lists them with its other tools.
"""

from __future__ import annotations

from openmolt_core.integrations import HttpTool
from openmolt_core.integrations.schema import array, obj, passthrough
from openmolt_integrations._ads_inputs import (
	API_VERSION,
	CUSTOMER,
	CUSTOMER_ID,
	QUERY,
	VALIDATE_ONLY,
)

__all__ = [
	"ADJUSTMENTS_TOOL",
	"CLICK_CONVERSIONS_REQUEST",
	"CLICK_FIELDS",
	"CLICK_REQUIRED",
	"CONSENT",
	"CUSTOMER_MATCH_REQUESTS",
	"DATE_TIME",
]

DATE_TIME = "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2}$"
"""A Google Ads date time, 'yyyy-mm-dd hh:mm:ss+|-hh:mm' (the time zone is required)."""
_CONSENT_STATUS = {"type": "string", "enum": ["GRANTED", "DENIED"]}
CONSENT = obj(
	{
		"adUserData": {**_CONSENT_STATUS, "description": "Consent to send user data to Google."},
		"adPersonalization": {
			**_CONSENT_STATUS,
			"description": "Consent to ad personalization.",
		},
	},
	description="The people's consent (EU users need it), e.g. {'adUserData': 'GRANTED', 'adPersonalization': 'GRANTED'}.",
)
CLICK_FIELDS = {
	"gclid": {"type": "string", "description": "The Google click id of the ad click."},
	"gbraid": {
		"type": "string",
		"description": "Click id for app conversions on iOS (instead of gclid).",
	},
	"wbraid": {
		"type": "string",
		"description": "Click id for web conversions on iOS (instead of gclid).",
	},
	"conversionAction": {
		"type": "string",
		"pattern": "^customers/[0-9]+/conversionActions/[0-9]+$",
		"description": "Resource name of the conversion action, e.g. 'customers/1234567890/conversionActions/987' (GAQL: SELECT conversion_action.resource_name FROM conversion_action).",
	},
	"conversionDateTime": {
		"type": "string",
		"pattern": DATE_TIME,
		"description": "When the conversion happened, 'yyyy-mm-dd hh:mm:ss+hh:mm' with the UTC offset, e.g. '2026-11-30 14:05:00+01:00' (after the click).",
	},
	"conversionValue": {"type": "number", "description": "The conversion's value, e.g. 49.9."},
	"currencyCode": {
		"type": "string",
		"description": "ISO 4217 currency of the value, e.g. 'EUR'.",
	},
	"orderId": {
		"type": "string",
		"description": "Your order or transaction id (deduplicates uploads).",
	},
	"consent": CONSENT,
}
CLICK_REQUIRED = ["conversionAction", "conversionDateTime"]
_WIRE_IDENTIFIER = obj(
	{
		"hashedEmail": {"type": "string", "description": "SHA-256 of the normalized email."},
		"hashedPhoneNumber": {"type": "string", "description": "SHA-256 of the E.164 number."},
		"addressInfo": obj(
			{
				"hashedFirstName": {"type": "string", "description": "SHA-256 of the first name."},
				"hashedLastName": {"type": "string", "description": "SHA-256 of the last name."},
				"countryCode": {"type": "string", "description": "ISO country code."},
				"postalCode": {"type": "string", "description": "Postal code."},
			},
			description="A hashed name with its unhashed country and postal code.",
		),
	}
)
_WIRE_IDENTIFIERS = array(_WIRE_IDENTIFIER, "User identifiers, already normalized and hashed.")

CLICK_CONVERSIONS_REQUEST = HttpTool(
	handle="uploadClickConversions",
	description="ConversionUploadService.UploadClickConversions with hashed user identifiers.",
	scopes=["upload"],
	method="POST",
	endpoint=f"{CUSTOMER}:uploadClickConversions",
	# The API requires partialFailure true: each conversion succeeds or fails on its own.
	body={
		"conversions": "{{ input.conversions }}",
		"partialFailure": True,
		**passthrough("validateOnly"),
	},
	input_schema=obj(
		{
			"customerId": CUSTOMER_ID,
			"conversions": array(
				obj({**CLICK_FIELDS, "userIdentifiers": _WIRE_IDENTIFIERS}, CLICK_REQUIRED),
				"The conversions as the API takes them.",
			),
			"validateOnly": VALIDATE_ONLY,
		},
		["customerId", "conversions"],
	),
)
"""The request ``uploadClickConversions`` sends once it has hashed the user identifiers."""

_ADJUSTMENT = obj(
	{
		"conversionAction": CLICK_FIELDS["conversionAction"],
		"orderId": {
			"type": "string",
			"description": "The order id the conversion was uploaded with (use it when it had one).",
		},
		"gclidDateTimePair": obj(
			{
				"gclid": CLICK_FIELDS["gclid"],
				"conversionDateTime": {
					"type": "string",
					"pattern": DATE_TIME,
					"description": "The conversion's own conversionDateTime, as uploaded.",
				},
			},
			["gclid", "conversionDateTime"],
			description="Which conversion, when it was uploaded without an order id.",
		),
		"adjustmentType": {
			"type": "string",
			"enum": ["RETRACTION", "RESTATEMENT"],
			"description": "RETRACTION takes the conversion back (a refund, a cancelled order); RESTATEMENT changes its value.",
		},
		"adjustmentDateTime": {
			"type": "string",
			"pattern": DATE_TIME,
			"description": "When the adjustment happened, 'yyyy-mm-dd hh:mm:ss+hh:mm', after the conversion; a second restatement needs a later time.",
		},
		"restatementValue": obj(
			{
				"adjustedValue": {"type": "number", "description": "The new total value."},
				"currencyCode": {
					"type": "string",
					"description": "ISO 4217 currency of the value, e.g. 'EUR'.",
				},
			},
			["adjustedValue"],
			description="RESTATEMENT only: the conversion's new value.",
		),
	},
	["conversionAction", "adjustmentType", "adjustmentDateTime"],
)
ADJUSTMENTS_TOOL = HttpTool(
	handle="uploadConversionAdjustments",
	description=(
		"Retract or restate conversions uploaded before (a refunded order, a changed order "
		"value): each names its conversion by orderId, or by gclid and conversionDateTime. Up "
		"to 2000 per call; each succeeds or fails on its own (see partialFailureError)."
	),
	scopes=["upload"],
	method="POST",
	endpoint=f"{CUSTOMER}:uploadConversionAdjustments",
	# The API requires partialFailure true: each adjustment succeeds or fails on its own.
	body={**passthrough("conversionAdjustments", "validateOnly"), "partialFailure": True},
	input_schema=obj(
		{
			"customerId": CUSTOMER_ID,
			"conversionAdjustments": {
				**array(
					_ADJUSTMENT,
					"The adjustments, e.g. [{'orderId': 'A-1001', 'conversionAction': 'customers/123/conversionActions/456', 'adjustmentType': 'RETRACTION', 'adjustmentDateTime': '2026-12-02 10:00:00+01:00'}].",
				),
				"minItems": 1,
				"maxItems": 2000,
			},
			"validateOnly": VALIDATE_ONLY,
		},
		["customerId", "conversionAdjustments"],
	),
	output_schema=obj(
		{
			"results": {"type": "array", "items": {"type": "object"}},
			"partialFailureError": {"type": "object"},
			"jobId": {"type": "string"},
		}
	),
)
"""ConversionAdjustmentUploadService.UploadConversionAdjustments: retractions and restatements
(enhancements, which carry hashed people's data, are not offered)."""

_JOB = f"/{API_VERSION}/{{{{ input.resourceName | path_segments }}}}"
_JOB_NAME = {
	"type": "string",
	"pattern": "^customers/[0-9]+/offlineUserDataJobs/[0-9]+$",
	"description": "The job's resource name, from the create request's reply.",
}
CUSTOMER_MATCH_REQUESTS = {
	"find": HttpTool(
		handle="findOfflineUserDataJob",
		description="GoogleAdsService.Search for the job an earlier attempt of the call created.",
		scopes=["upload"],
		method="POST",
		endpoint=f"{CUSTOMER}/googleAds:search",
		body=passthrough("query"),
		input_schema=obj({"customerId": CUSTOMER_ID, "query": QUERY}, ["customerId", "query"]),
	),
	"create": HttpTool(
		handle="createOfflineUserDataJob",
		description="OfflineUserDataJobService.CreateOfflineUserDataJob for a Customer Match list.",
		scopes=["upload"],
		method="POST",
		endpoint=f"{CUSTOMER}/offlineUserDataJobs:create",
		body={
			"job": {
				"type": "CUSTOMER_MATCH_USER_LIST",
				**passthrough("externalId"),
				"customerMatchUserListMetadata": passthrough("userList", "consent"),
			}
		},
		input_schema=obj(
			{
				"customerId": CUSTOMER_ID,
				"userList": {"type": "string", "description": "The user list resource name."},
				"externalId": {
					"type": "string",
					"pattern": "^[0-9]{1,19}$",
					"description": "The job's id from the call's idempotency key (int64).",
				},
				"consent": CONSENT,
			},
			["customerId", "userList"],
		),
	),
	"add": HttpTool(
		handle="addOfflineUserDataJobOperations",
		description="OfflineUserDataJobService.AddOfflineUserDataJobOperations (create operations).",
		scopes=["upload"],
		method="POST",
		endpoint=f"{_JOB}:addOperations",
		body={"operations": "{{ input.operations }}", "enablePartialFailure": True},
		input_schema=obj(
			{
				"resourceName": _JOB_NAME,
				"operations": array(
					obj(
						{
							"create": obj(
								{"userIdentifiers": _WIRE_IDENTIFIERS},
								["userIdentifiers"],
								description="One person (UserData).",
							)
						},
						["create"],
					),
					"One create operation per person.",
				),
			},
			["resourceName", "operations"],
		),
	),
	"run": HttpTool(
		handle="runOfflineUserDataJob",
		description="OfflineUserDataJobService.RunOfflineUserDataJob: Google processes the job.",
		scopes=["upload"],
		method="POST",
		endpoint=f"{_JOB}:run",
		body={},
		input_schema=obj({"resourceName": _JOB_NAME}, ["resourceName"]),
	),
}
"""The requests ``addCustomerMatchContacts`` sends in order: find the job an earlier attempt of
the same call created (by its ``externalId``, from the call's idempotency key), else create it,
add the hashed contacts to it, run it (a long-running operation Google finishes within hours)."""
