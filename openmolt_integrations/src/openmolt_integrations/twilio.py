"""Twilio: SMS, MMS and WhatsApp messages, voice calls, Verify v2 and Lookup v2.

Every Twilio product has its own host, so tools set their own base URL: the core REST API
(``https://api.twilio.com/2010-04-01``, paths ending in ``.json``), Verify
(``https://verify.twilio.com/v2``) and Lookup (``https://lookups.twilio.com/v2``). Requests use
HTTP Basic auth and ``application/x-www-form-urlencoded`` bodies with Twilio's PascalCase names;
a list repeats its key (``MediaUrl=a&MediaUrl=b``), as Twilio reads arrays (its own ``form-data`` encoder, ``form_encoder("repeat")``).

Inputs carry the types of the twilio SDK's parameters (the test suite checks them): integers,
booleans and lists as such, the SDK's enums (``CallInstance.Status``...), and date-time filters
as ``format: date-time``, or ``format: date`` where Twilio's docs ask for a day (``DateSent``,
``StartTime``: ``YYYY-MM-DD``). SID inputs carry the pattern Twilio's OpenAPI (twilio-oai) declares
for that parameter: the resource's own prefix (``CA`` for a call, ``SM`` or ``MM`` for a message)
and 32 hex digits of either case.
"""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import (
	ApiSetup,
	BasicCredential,
	HttpTool,
	Integration,
)
from openmolt_core.integrations.extensions import form_encoder
from openmolt_core.integrations.schema import (
	array,
	boolean,
	integer,
	obj,
	passthrough,
	string,
)

__all__ = ["INTEGRATION", "register_integrations"]

_API = "https://api.twilio.com"
_VERIFY = "https://verify.twilio.com"
_LOOKUPS = "https://lookups.twilio.com"
_ACCOUNT = "/2010-04-01/Accounts/{{ config.accountSid }}"

_E164 = "E.164 phone number such as +15558675310"
_TO = string(f"Recipient: an {_E164}, or whatsapp:+15558675310 for WhatsApp.")
_FROM = string(
	f"Sender: one of your Twilio numbers ({_E164}), an alphanumeric sender id, or "
	"whatsapp:+1… for WhatsApp. Omit when MessagingServiceSid is given."
)
_PAGE_SIZE = integer("Results per page.", minimum=1, maximum=1000, default=50)
_PAGE_TOKEN = string("Pagination: the PageToken from the previous page's next_page_uri.")
_PAGE = integer("Page number, used with PageToken.", minimum=0)


def _sid(description: str, *prefixes: str) -> dict[str, Any]:
	"""A SID input: the resource's two-letter prefix(es) and 32 hex digits, as Twilio's OpenAPI has it.

	twilio-oai declares each SID parameter with its own prefix (``^CA[0-9a-fA-F]{32}$`` for a call,
	``^(SM|MM)[0-9a-fA-F]{32}$`` for a message) and a length of 34; the test suite checks every SID
	input against the pinned patterns.

	Args:
		description: What the SID names.
		prefixes: The resource's prefixes (``"SM", "MM"``).
	"""
	head = prefixes[0] if len(prefixes) == 1 else "(" + "|".join(prefixes) + ")"
	return string(description, pattern=f"^{head}[0-9a-fA-F]{{32}}$", minLength=34, maxLength=34)


_MESSAGE_SID = ("SM", "MM")
_CALL_SID = ("CA",)

_DOCS = """\
## Get a token

1. Sign in to the [Twilio Console](https://console.twilio.com). On the dashboard, copy the
   **Account SID** (`AC…`) and the **Auth Token**.
2. Better for production: **Account → API keys & tokens → Create API key** (Standard). Keep the
   key's SID (`SK…`) and secret; they replace the Auth Token and can be revoked on their own.
3. Buy or pick a phone number (**Phone Numbers → Manage**) to send from, or create a **Messaging
   Service**. For Verify, create a service under **Verify → Services** and copy its SID (`VA…`).

```python
om = OpenMolt(integrations={"twilio": {
    "accountSid": "AC...", "authToken": "...",          # or "apiKeySid": "SK...", "apiKeySecret": "..."
}})
```

Requests use HTTP Basic auth: the API key SID and secret when given, else the Account SID and Auth
Token. WhatsApp needs an approved WhatsApp sender (or the sandbox) and `whatsapp:` prefixed
numbers. Trial accounts can only message verified numbers.
"""

_TOOLS = [
	HttpTool(
		handle="sendMessage",
		description="Send an SMS, MMS (with MediaUrl) or WhatsApp message. Returns the message "
		"with its Sid and status (queued, sent, delivered, failed...).",
		scopes=["send"],
		method="POST",
		base_url=_API,
		endpoint=f"{_ACCOUNT}/Messages.json",
		body=passthrough(
			"To",
			"From",
			"MessagingServiceSid",
			"Body",
			"MediaUrl",
			"ContentSid",
			"ContentVariables",
			"StatusCallback",
			"SendAt",
			"ScheduleType",
			"ValidityPeriod",
		),
		input_schema=obj(
			{
				"To": _TO,
				"From": _FROM,
				"MessagingServiceSid": _sid(
					"Messaging Service SID (MG…) to send through, instead of From.", "MG"
				),
				"Body": string("Message text, up to 1600 characters.", maxLength=1600),
				"MediaUrl": array(
					string(),
					"Public URLs of images or files to attach (MMS: up to 10; WhatsApp: 1).",
					minItems=1,
					maxItems=10,
				),
				"ContentSid": _sid(
					"Content template SID (HX…), e.g. an approved WhatsApp template.", "HX"
				),
				"ContentVariables": string(
					"JSON object, as a string, with values for the content template's placeholders, "
					'e.g. {"1": "Ada", "2": "Friday"}.'
				),
				"StatusCallback": string("URL Twilio calls with delivery status updates."),
				"SendAt": string(
					"Schedule for later (needs MessagingServiceSid): ISO 8601 time 15 minutes to "
					"35 days ahead.",
					format="date-time",
				),
				"ScheduleType": string("Required with SendAt.", enum=["fixed"]),
				"ValidityPeriod": integer(
					"Seconds the message may wait in the queue.", minimum=1, maximum=36000
				),
			},
			["To"],
		),
	),
	HttpTool(
		handle="listMessages",
		description="List sent and received messages, newest first; filter by number or date.",
		scopes=["read"],
		method="GET",
		base_url=_API,
		endpoint=f"{_ACCOUNT}/Messages.json",
		query_params=passthrough(
			"To",
			"From",
			"DateSent",
			"PageSize",
			"Page",
			"PageToken",
			**{
				"DateSent>": "{{ input.DateSentAfter }}",
				"DateSent<": "{{ input.DateSentBefore }}",
			},
		),
		input_schema=obj(
			{
				"To": string("Only messages to this number."),
				"From": string("Only messages from this number."),
				"DateSent": string("Only messages sent on this day (YYYY-MM-DD).", format="date"),
				"DateSentAfter": string(
					"Only messages sent on or after this day (YYYY-MM-DD).", format="date"
				),
				"DateSentBefore": string(
					"Only messages sent on or before this day (YYYY-MM-DD).", format="date"
				),
				"PageSize": _PAGE_SIZE,
				"Page": _PAGE,
				"PageToken": _PAGE_TOKEN,
			}
		),
	),
	HttpTool(
		handle="getMessage",
		description="Get one message: status, error code, price, body.",
		scopes=["read"],
		method="GET",
		base_url=_API,
		endpoint=f"{_ACCOUNT}/Messages/{{{{ input.Sid }}}}.json",
		input_schema=obj({"Sid": _sid("Message SID (SM… or MM…).", *_MESSAGE_SID)}, ["Sid"]),
	),
	HttpTool(
		handle="cancelMessage",
		description="Cancel a scheduled message that has not been sent yet.",
		scopes=["send"],
		method="POST",
		base_url=_API,
		endpoint=f"{_ACCOUNT}/Messages/{{{{ input.Sid }}}}.json",
		body={"Status": "canceled"},
		input_schema=obj(
			{"Sid": _sid("Message SID of the scheduled message (SM…).", *_MESSAGE_SID)}, ["Sid"]
		),
	),
	HttpTool(
		handle="redactMessage",
		description="Erase a sent or received message's text (its Body becomes empty; the "
		"record stays). Only a message no longer queued or being sent can be redacted.",
		scopes=["send"],
		method="POST",
		base_url=_API,
		endpoint=f"{_ACCOUNT}/Messages/{{{{ input.Sid }}}}.json",
		# twilio-oai UpdateMessage: "To redact the text content of a Message, this parameter's
		# value must be an empty string".
		body={"Body": ""},
		input_schema=obj({"Sid": _sid("Message SID (SM… or MM…).", *_MESSAGE_SID)}, ["Sid"]),
	),
	HttpTool(
		handle="deleteMessage",
		description="Delete a message record from the account (cannot be undone; not for a "
		"message still being sent). Twilio answers 204 with no body.",
		scopes=["send"],
		method="DELETE",
		base_url=_API,
		endpoint=f"{_ACCOUNT}/Messages/{{{{ input.Sid }}}}.json",
		input_schema=obj({"Sid": _sid("Message SID (SM… or MM…).", *_MESSAGE_SID)}, ["Sid"]),
	),
	HttpTool(
		handle="listMessageMedia",
		description="List the media (images, files) attached to an MMS or WhatsApp message.",
		scopes=["read"],
		method="GET",
		base_url=_API,
		endpoint=f"{_ACCOUNT}/Messages/{{{{ input.MessageSid }}}}/Media.json",
		query_params=passthrough("PageSize", "PageToken"),
		input_schema=obj(
			{
				"MessageSid": _sid("Message SID (SM… or MM…).", *_MESSAGE_SID),
				"PageSize": _PAGE_SIZE,
				"PageToken": _PAGE_TOKEN,
			},
			["MessageSid"],
		),
	),
	HttpTool(
		handle="makeCall",
		description="Place an outbound phone call. Say what happens with Twiml (e.g. "
		"<Response><Say>Hello</Say></Response>) or a Url returning TwiML.",
		scopes=["call"],
		method="POST",
		base_url=_API,
		endpoint=f"{_ACCOUNT}/Calls.json",
		body=passthrough(
			"To",
			"From",
			"Twiml",
			"Url",
			"StatusCallback",
			"Record",
			"Timeout",
			"TimeLimit",
			"MachineDetection",
		),
		input_schema=obj(
			{
				"To": string(f"Number to call ({_E164}), a SIP address or client:name."),
				"From": string("Your Twilio number to call from (E.164)."),
				"Twiml": string(
					"TwiML instructions for the call, up to 4000 characters.", maxLength=4000
				),
				"Url": string("URL that returns the call's TwiML (instead of Twiml)."),
				"StatusCallback": string("URL Twilio calls when the call ends."),
				"Record": boolean("Record the call."),
				"Timeout": integer("Seconds to let it ring.", minimum=5, maximum=600, default=60),
				"TimeLimit": integer("Maximum call length in seconds.", minimum=1, maximum=86400),
				"MachineDetection": string(
					"Detect answering machines.", enum=["Enable", "DetectMessageEnd"]
				),
			},
			["To", "From"],
		),
	),
	HttpTool(
		handle="getCall",
		description="Get a call's status (queued, ringing, in-progress, completed, busy, "
		"no-answer, failed), duration and price.",
		scopes=["read"],
		method="GET",
		base_url=_API,
		endpoint=f"{_ACCOUNT}/Calls/{{{{ input.Sid }}}}.json",
		input_schema=obj({"Sid": _sid("Call SID (CA…).", *_CALL_SID)}, ["Sid"]),
	),
	HttpTool(
		handle="updateCall",
		description="Change a live call: hang up (Status=completed), cancel a queued call "
		"(Status=canceled) or redirect it to new TwiML.",
		scopes=["call"],
		method="POST",
		base_url=_API,
		endpoint=f"{_ACCOUNT}/Calls/{{{{ input.Sid }}}}.json",
		body=passthrough(
			"Status",
			"Twiml",
			"Url",
		),
		input_schema=obj(
			{
				"Sid": _sid("Call SID (CA…).", *_CALL_SID),
				"Status": string(
					"completed hangs up, canceled cancels a queued or ringing call.",
					enum=["completed", "canceled"],
				),
				"Twiml": string("New TwiML to run on the call."),
				"Url": string("URL returning new TwiML."),
			},
			["Sid"],
		),
	),
	HttpTool(
		handle="listCalls",
		description="List calls, newest first; filter by number, status or start time.",
		scopes=["read"],
		method="GET",
		base_url=_API,
		endpoint=f"{_ACCOUNT}/Calls.json",
		query_params=passthrough(
			"To",
			"From",
			"Status",
			"PageSize",
			"Page",
			"PageToken",
			**{
				"StartTime>": "{{ input.StartTimeAfter }}",
				"StartTime<": "{{ input.StartTimeBefore }}",
			},
		),
		input_schema=obj(
			{
				"To": string("Only calls to this number."),
				"From": string("Only calls from this number."),
				"Status": string(
					"Only calls with this status.",
					enum=[
						"queued",
						"ringing",
						"in-progress",
						"canceled",
						"completed",
						"failed",
						"busy",
						"no-answer",
					],
				),
				"StartTimeAfter": string(
					"Only calls started on or after this day (YYYY-MM-DD).", format="date"
				),
				"StartTimeBefore": string(
					"Only calls started on or before this day (YYYY-MM-DD).", format="date"
				),
				"PageSize": _PAGE_SIZE,
				"Page": _PAGE,
				"PageToken": _PAGE_TOKEN,
			}
		),
	),
	HttpTool(
		handle="listRecordings",
		description="List call recordings, optionally of one call.",
		scopes=["read"],
		method="GET",
		base_url=_API,
		endpoint=f"{_ACCOUNT}/Recordings.json",
		query_params=passthrough(
			"CallSid",
			"PageSize",
			"PageToken",
			**{
				"DateCreated>": "{{ input.DateCreatedAfter }}",
			},
		),
		input_schema=obj(
			{
				"CallSid": _sid("Only recordings of this call (CA…).", *_CALL_SID),
				"DateCreatedAfter": string(
					"Only recordings made on or after this time (ISO 8601).", format="date-time"
				),
				"PageSize": _PAGE_SIZE,
				"PageToken": _PAGE_TOKEN,
			}
		),
	),
	HttpTool(
		handle="listPhoneNumbers",
		description="List the phone numbers the account owns, with their capabilities.",
		scopes=["read"],
		method="GET",
		base_url=_API,
		endpoint=f"{_ACCOUNT}/IncomingPhoneNumbers.json",
		query_params=passthrough(
			"PhoneNumber",
			"FriendlyName",
			"PageSize",
			"PageToken",
		),
		input_schema=obj(
			{
				"PhoneNumber": string("Only numbers containing these digits."),
				"FriendlyName": string("Only numbers with this friendly name."),
				"PageSize": _PAGE_SIZE,
				"PageToken": _PAGE_TOKEN,
			}
		),
	),
	HttpTool(
		handle="getBalance",
		description="Get the account's balance and its currency (child accounts have none).",
		scopes=["read"],
		method="GET",
		base_url=_API,
		endpoint=f"{_ACCOUNT}/Balance.json",
		input_schema=obj({}),
	),
	HttpTool(
		handle="lookupPhoneNumber",
		description="Validate and format a phone number (Lookup v2, free), optionally with "
		"paid data packages: line type, carrier, caller name.",
		scopes=["lookup"],
		method="GET",
		base_url=_LOOKUPS,
		endpoint="/v2/PhoneNumbers/{{ input.PhoneNumber }}",
		query_params=passthrough("CountryCode", Fields="{{ input.Fields | join: ',' }}"),
		input_schema=obj(
			{
				"PhoneNumber": string(
					"The number, E.164 (+15558675310) or national with CountryCode."
				),
				"Fields": array(
					string(
						enum=[
							"line_type_intelligence",
							"caller_name",
							"sim_swap",
							"call_forwarding",
							"line_status",
							"identity_match",
							"reassigned_number",
							"sms_pumping_risk",
							"phone_number_quality_score",
							"validation",
						],
					),
					"Extra data packages (billed per lookup).",
				),
				"CountryCode": string("ISO country code for national-format numbers, e.g. US."),
			},
			["PhoneNumber"],
		),
	),
	HttpTool(
		handle="startVerification",
		description="Send a one-time verification code by SMS, voice call, email or WhatsApp "
		"(Verify v2). Check it with checkVerification.",
		scopes=["verify"],
		method="POST",
		base_url=_VERIFY,
		endpoint="/v2/Services/{{ config.verifyServiceSid }}/Verifications",
		body=passthrough(
			"To",
			"Channel",
			"Locale",
			"CustomFriendlyName",
		),
		input_schema=obj(
			{
				"To": string(
					f"Who to verify: an {_E164}, or an email address for the email channel."
				),
				"Channel": string(
					"How to send the code.",
					enum=["sms", "call", "email", "whatsapp"],
					default="sms",
				),
				"Locale": string("Language of the message, e.g. en, fr, pt-BR."),
				"CustomFriendlyName": string("Name shown in the message instead of the service's."),
			},
			["To", "Channel"],
		),
	),
	HttpTool(
		handle="checkVerification",
		description="Check the code a user entered; `status` is approved when it matches.",
		scopes=["verify"],
		method="POST",
		base_url=_VERIFY,
		endpoint="/v2/Services/{{ config.verifyServiceSid }}/VerificationCheck",
		body=passthrough(
			"To",
			"Code",
			"VerificationSid",
		),
		input_schema=obj(
			{
				"To": string("The number or email the code was sent to."),
				"Code": string(
					"The code the user entered (4 to 10 characters).", minLength=4, maxLength=10
				),
				"VerificationSid": _sid("Verification SID (VE…), instead of To.", "VE"),
			},
			["Code"],
		),
	),
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"cancelMessage": [],
		"redactMessage": [],
		"deleteMessage": [],
		"getBalance": [],
		"listMessageMedia": [],
		"updateCall": [],
		"listPhoneNumbers": [],
		"startVerification": [],
		"checkVerification": [],
		"listMessages": ["private", "untrusted"],
		"getMessage": ["private", "untrusted"],
		"listRecordings": ["private"],
		"sendMessage": ["outbound"],
		"makeCall": ["outbound"],
		# Others' words: caller_name: the name a caller's number is registered under.
		"getCall": ["untrusted"],
		"listCalls": ["private", "untrusted"],
		"lookupPhoneNumber": ["untrusted"],
	},
	name="Twilio",
	description="Send SMS, MMS and WhatsApp messages, place calls, verify users and look up numbers.",
	api_version="2010-04-01 (core), Verify v2, Lookup v2",
	api_setup=ApiSetup(base_url=_API, request_format="form-data"),
	# Twilio reads a list as its key repeated (MediaUrl=a&MediaUrl=b), not Stripe's indices:
	# what twilio-python 9.13.0 sends for API 2010-04-01 (and Verify v2, Lookup v2), and
	# OpenAPI's default for twilio-oai's arrays; tests/integrations/messaging/
	# test_twilio_form_bodies.py compares the bytes.
	encoders={"form-data": form_encoder("repeat")},
	credential_setup=[
		BasicCredential(
			type="basic",
			username="{{ config.apiKeySid | default: config.accountSid }}",
			password="{{ config.apiKeySecret | default: config.authToken }}",
		),
	],
	scopes={
		"read": "Read messages, calls, recordings, phone numbers and the balance.",
		"send": "Send, cancel, redact and delete messages.",
		"call": "Place and control phone calls.",
		"verify": "Send and check verification codes (config.verifyServiceSid).",
		"lookup": "Look up phone numbers.",
	},
	tools=_TOOLS,
	docs=_DOCS,
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the Twilio integration."""
	register(INTEGRATION)
