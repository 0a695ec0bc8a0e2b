"""WhatsApp Business Cloud API (Meta Graph API v26.0): messages, media and templates.

Messages are sent from a business phone number: ``POST /{phone-number-id}/messages`` with
``"messaging_product": "whatsapp"``. Free-form messages are allowed only within 24 hours of the
customer's last message; outside that window, send an approved template.
"""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import (
	ApiSetup,
	BearerCredential,
	HttpTool,
	Integration,
)
from openmolt_core.integrations.schema import (
	array,
	boolean,
	integer,
	obj,
	passthrough,
	string,
)
from openmolt_integrations._graph import GRAPH_URL, GRAPH_VERSION

__all__ = ["INTEGRATION", "register_integrations"]

_TO = string(
	"Recipient's phone number in international format without + or spaces, e.g. 15551234567."
)
_CONTEXT = obj(
	{"message_id": string("wamid of the message to reply to.")},
	["message_id"],
	description="Reply to (quote) an earlier message.",
)
_MEDIA = {
	"id": string("Media id from uploadMedia (preferred)."),
	"link": string("Public HTTPS URL of the media (instead of id)."),
}
# Media captions take up to 1024 characters (Cloud API, messages reference: image, video and
# document objects).
_CAPTION = string("Caption shown under the media, up to 1024 characters.", maxLength=1024)
_CAPTIONED = obj(
	{**_MEDIA, "caption": _CAPTION},
	description="The media: id or link, with an optional caption.",
)
_MESSAGES = "/{{ config.phoneNumberId }}/messages"
# WhatsAppBusinessVertical in Meta's OpenAPI: the industries a business profile can name.
_VERTICALS = [
	"OTHER",
	"AUTO",
	"BEAUTY",
	"APPAREL",
	"EDU",
	"ENTERTAIN",
	"EVENT_PLAN",
	"FINANCE",
	"GROCERY",
	"GOVT",
	"HOTEL",
	"HEALTH",
	"NONPROFIT",
	"PROF_SERVICES",
	"RETAIL",
	"TRAVEL",
	"RESTAURANT",
	"ALCOHOL",
	"ONLINE_GAMBLING",
	"PHYSICAL_GAMBLING",
	"OTC_DRUGS",
]
# An interactive message's action, with the bounds of Meta's OpenAPI (InteractiveObject.action):
# reply buttons (type button) or a list menu (type list).
_ROW = obj(
	{
		"id": string(
			"Row id, sent back when the row is chosen, up to 200 characters.", maxLength=200
		),
		"title": string("Row title, up to 24 characters.", maxLength=24),
		"description": string("Row description, up to 72 characters.", maxLength=72),
	},
	["id", "title"],
	description="A row of the list.",
)
_ACTION = obj(
	{
		"buttons": array(
			obj(
				{
					"type": string("Button kind.", enum=["reply"]),
					"reply": obj(
						{
							"id": string(
								"Button id, sent back when pressed, up to 256 characters.",
								maxLength=256,
							),
							"title": string("Button label, up to 20 characters.", maxLength=20),
						},
						["id", "title"],
						description="The button's id and label.",
					),
				},
				["type", "reply"],
				description="A reply button.",
			),
			"type button: 1 to 3 reply buttons.",
			minItems=1,
			maxItems=3,
		),
		"button": string(
			"type list: the label of the menu button, up to 20 characters.", maxLength=20
		),
		"sections": array(
			obj(
				{
					"title": string("Section title, up to 24 characters.", maxLength=24),
					"rows": array(
						_ROW, "The section's rows (10 at most in all sections).", maxItems=10
					),
				},
				["rows"],
				description="A section of the list: its title and rows.",
			),
			"type list: 1 to 10 sections.",
			minItems=1,
			maxItems=10,
		),
	},
	description='button: {"buttons": [{"type": "reply", "reply": {"id": "yes", "title": "Yes"}}]}; '
	'list: {"button": "Choose", "sections": [{"title": "...", "rows": [{"id": "a", "title": "...", '
	'"description": "..."}]}]}.',
)


def _send(handle: str, description: str, schema: dict[str, Any], body: dict[str, Any]) -> HttpTool:
	return HttpTool(
		handle=handle,
		description=description,
		scopes=["send"],
		method="POST",
		endpoint=_MESSAGES,
		body={
			"messaging_product": "whatsapp",
			"recipient_type": "individual",
			**passthrough(*(n for n in ("to", "context") if n in schema["properties"])),
			**body,
		},
		input_schema=schema,
	)


_DOCS = """\
## Get a token

1. In [Meta for Developers](https://developers.facebook.com/apps), create an app of type
   **Business** and add the **WhatsApp** product. It gives you a test number, its **Phone number
   ID** and your **WhatsApp Business Account ID** (WhatsApp → API Setup).
2. For production, in [Business Settings](https://business.facebook.com/settings) → **System
   users**, add a system user, assign it the app and the WhatsApp account, and **Generate token**
   with the permissions `whatsapp_business_messaging` and `whatsapp_business_management`
   (choose "Never" as expiry). The temporary token on the API Setup page works for 24 hours.

```python
om = OpenMolt(integrations={"whatsapp": {
    "accessToken": "EAAG...", "phoneNumberId": "1065...", "wabaId": "1024...",
}})
```

Businesses onboarding customers use Meta's OAuth dialog (`https://www.facebook.com/v26.0/dialog/oauth`,
Embedded Signup) and exchange the code at `https://graph.facebook.com/v26.0/oauth/access_token`;
Meta issues long-lived tokens without refresh tokens, so pass the resulting token as `accessToken`.

Free-form messages reach a user only within 24 hours of their last message; start conversations
with an approved template (`sendTemplate`). Throughput is about 80 messages per second per number.

## Checked against

`listTemplates`, `createTemplate` and `listPhoneNumbers` are checked by the test suite against the
WhatsApp Business Account requests of Meta's `facebook-business` SDK (edge, method, parameter
names, the category enum). The phone-number and media requests (messages, media, business
profile) are checked against Meta's OpenAPI for the WhatsApp Business Platform
(`facebook/openapi`, `business-messaging-api_v23.0.yaml`): path, query names, body names, required
fields, enums and bounds of each message type. The documentation adds media captions, document
file names, the upload's `type` and the typing indicator, which that document leaves out.
"""

_TOOLS = [
	_send(
		"sendText",
		"Send a text message (within the 24-hour customer service window).",
		obj(
			{
				"to": _TO,
				"body": string("Message text, up to 4096 characters.", maxLength=4096),
				"preview_url": boolean(
					"Show a preview of the first URL in the text.", default=False
				),
				"context": _CONTEXT,
			},
			["to", "body"],
		),
		{
			"type": "text",
			"text": passthrough("body", "preview_url"),
		},
	),
	_send(
		"sendTemplate",
		"Send an approved message template; the only way to start a conversation outside the "
		"24-hour window. Fill variables through components.",
		obj(
			{
				"to": _TO,
				"name": string("Template name, e.g. hello_world."),
				"language": string("Template language code, e.g. en_US.", default="en_US"),
				"components": array(
					{"type": "object"},
					'Variable values: [{"type": "body", "parameters": [{"type": "text", '
					'"text": "Ada"}]}]; header/button components the same way.',
				),
				"context": _CONTEXT,
			},
			["to", "name", "language"],
		),
		{
			"type": "template",
			# The template's language object: its code, and the one language policy Meta's
			# OpenAPI (TemplateMessage: language requires policy and code) allows.
			"template": {
				**passthrough("name"),
				"language": {"policy": "deterministic", "code": "{{ input.language }}"},
				**passthrough("components"),
			},
		},
	),
	_send(
		"sendMedia",
		"Send an image, video, audio, document or sticker by media id (uploadMedia) or public "
		"URL. Give `type` and the matching object.",
		obj(
			{
				"to": _TO,
				"type": string(
					"Kind of media.", enum=["image", "video", "audio", "document", "sticker"]
				),
				"image": _CAPTIONED,
				"video": _CAPTIONED,
				"audio": obj(_MEDIA, description="The audio: id or link."),
				"document": obj(
					{
						**_MEDIA,
						"caption": _CAPTION,
						"filename": string("File name shown to the user."),
					},
					description="The document: id or link, caption, filename.",
				),
				"sticker": obj(_MEDIA, description="The sticker (webp): id or link."),
				"context": _CONTEXT,
			},
			["to", "type"],
		),
		passthrough("type", "image", "video", "audio", "document", "sticker"),
	),
	_send(
		"sendInteractive",
		"Send a message with reply buttons (up to 3) or a list menu (up to 10 rows).",
		obj(
			{
				"to": _TO,
				"interactive": obj(
					{
						"type": string(
							"button = reply buttons, list = list menu.", enum=["button", "list"]
						),
						"header": obj(
							{
								"type": string("Header kind: a text header.", enum=["text"]),
								"text": string("Header text, up to 60 characters.", maxLength=60),
							},
							["type", "text"],
							description="Optional header.",
						),
						"body": obj(
							{"text": string("Body text, up to 1024 characters.", maxLength=1024)},
							["text"],
							description="Body.",
						),
						"footer": obj(
							{"text": string("Footer text, up to 60 characters.", maxLength=60)},
							["text"],
							description="Optional footer.",
						),
						"action": _ACTION,
					},
					["type", "body", "action"],
					description="The interactive content.",
				),
				"context": _CONTEXT,
			},
			["to", "interactive"],
		),
		{"type": "interactive", **passthrough("interactive")},
	),
	_send(
		"sendReaction",
		"React to a message with an emoji (an empty emoji removes the reaction).",
		obj(
			{
				"to": _TO,
				"message_id": string("wamid of the message to react to."),
				"emoji": string("One emoji, e.g. 👍; empty string to remove."),
			},
			["to", "message_id", "emoji"],
		),
		{
			"type": "reaction",
			"reaction": passthrough("message_id", "emoji"),
		},
	),
	HttpTool(
		handle="markAsRead",
		description="Mark a received message as read (blue ticks), optionally showing a typing "
		"indicator for up to 25 seconds.",
		scopes=["send"],
		method="POST",
		endpoint=_MESSAGES,
		body={
			"messaging_product": "whatsapp",
			"status": "read",
			**passthrough("message_id", "typing_indicator"),
		},
		input_schema=obj(
			{
				"message_id": string("wamid of the received message."),
				"typing_indicator": obj(
					{"type": string("Indicator kind.", enum=["text"])},
					["type"],
					description='Give {"type": "text"} to also show \'typing…\' to the user.',
				),
			},
			["message_id"],
		),
	),
	HttpTool(
		handle="uploadMedia",
		description="Upload a file to WhatsApp and get a media id for sendMedia (media is kept "
		"30 days). Images ≤5 MB, video/audio ≤16 MB, documents ≤100 MB.",
		scopes=["send"],
		method="POST",
		endpoint="/{{ config.phoneNumberId }}/media",
		request_format="multipart",
		body={"messaging_product": "whatsapp", **passthrough("type")},
		files=passthrough("file"),
		input_schema=obj(
			{
				"file": string(
					"File reference: openmolt-file:<id>, data:<type>;base64,<data> or fileSystem:<path>."
				),
				"type": string(
					"MIME type of the file, e.g. image/jpeg, application/pdf, audio/ogg."
				),
			},
			["file", "type"],
		),
	),
	HttpTool(
		handle="getMediaUrl",
		description="Get a media item's temporary download URL (valid 5 minutes), MIME type and "
		"size, e.g. for media a user sent; then call downloadMedia with the url.",
		scopes=["read"],
		method="GET",
		endpoint="/{{ input.media_id }}",
		query_params={"phone_number_id": "{{ config.phoneNumberId }}"},
		input_schema=obj(
			{"media_id": string("Media id (from a webhook message or uploadMedia).")}, ["media_id"]
		),
	),
	HttpTool(
		handle="downloadMedia",
		description="Download media bytes from the url returned by getMediaUrl; saves the file and "
		"returns a file reference.",
		scopes=["read"],
		method="GET",
		base_url="{{ input.url }}",
		input_origins=["https://lookaside.fbsbx.com"],
		endpoint="",
		response_format="binary",
		input_schema=obj(
			{
				"url": string(
					"The `url` from getMediaUrl.", pattern="^https://lookaside\\.fbsbx\\.com/"
				)
			},
			["url"],
		),
	),
	HttpTool(
		handle="deleteMedia",
		description="Delete uploaded media.",
		scopes=["manage"],
		method="DELETE",
		endpoint="/{{ input.media_id }}",
		query_params={"phone_number_id": "{{ config.phoneNumberId }}"},
		input_schema=obj({"media_id": string("Media id to delete.")}, ["media_id"]),
	),
	HttpTool(
		handle="listTemplates",
		description="List the account's message templates with their status (APPROVED, PENDING, "
		"REJECTED), language and components.",
		scopes=["read"],
		method="GET",
		endpoint="/{{ config.wabaId }}/message_templates",
		query_params={
			"fields": "name,status,language,category,components",
			**passthrough("name", "limit", "after"),
		},
		input_schema=obj(
			{
				"name": string("Only templates with this name."),
				"limit": integer("Templates per page.", minimum=1, maximum=100, default=25),
				"after": string("Cursor: paging.cursors.after of the previous page."),
			}
		),
	),
	HttpTool(
		handle="createTemplate",
		description="Submit a new message template for review.",
		scopes=["manage"],
		method="POST",
		endpoint="/{{ config.wabaId }}/message_templates",
		body=passthrough("name", "language", "category", "components"),
		input_schema=obj(
			{
				"name": string(
					"Lowercase name with underscores, e.g. order_shipped.",
					pattern="^[a-z0-9_]{1,512}$",
				),
				"language": string("Language code, e.g. en_US."),
				"category": string(
					"Template category.", enum=["MARKETING", "UTILITY", "AUTHENTICATION"]
				),
				"components": array(
					{"type": "object"},
					'Components: [{"type": "BODY", "text": "Hi {{1}}, order {{2}} shipped.", '
					'"example": {"body_text": [["Ada", "#42"]]}}] plus HEADER, FOOTER, BUTTONS.',
					minItems=1,
				),
			},
			["name", "language", "category", "components"],
		),
	),
	HttpTool(
		handle="listPhoneNumbers",
		description="List the business account's phone numbers with display number, verified "
		"name and quality rating.",
		scopes=["read"],
		method="GET",
		endpoint="/{{ config.wabaId }}/phone_numbers",
		query_params=passthrough("limit", "after"),
		input_schema=obj(
			{
				"limit": integer("Numbers per page.", minimum=1, maximum=100, default=25),
				"after": string("Cursor: paging.cursors.after of the previous page."),
			}
		),
	),
	HttpTool(
		handle="getBusinessProfile",
		description="Get the WhatsApp business profile of the sending number (about, address, "
		"description, email, websites).",
		scopes=["read"],
		method="GET",
		endpoint="/{{ config.phoneNumberId }}/whatsapp_business_profile",
		query_params={
			"fields": "about,address,description,email,profile_picture_url,websites,vertical"
		},
		input_schema=obj({}),
	),
	HttpTool(
		handle="updateBusinessProfile",
		description="Change the WhatsApp business profile of the sending number (only the "
		"given fields): about, address, description, email, up to 2 websites, vertical.",
		scopes=["manage"],
		method="POST",
		endpoint="/{{ config.phoneNumberId }}/whatsapp_business_profile",
		body={
			"messaging_product": "whatsapp",
			**passthrough("about", "address", "description", "email", "websites", "vertical"),
		},
		# Bounds and the vertical enum of Meta's OpenAPI (WhatsAppBusinessProfileUpdateRequest).
		input_schema=obj(
			{
				"about": string("The About text, 1 to 139 characters.", minLength=1, maxLength=139),
				"address": string("The business address, up to 256 characters.", maxLength=256),
				"description": string(
					"The business description, up to 256 characters.", maxLength=256
				),
				"email": string(
					"Contact email, up to 128 characters.", format="email", maxLength=128
				),
				"websites": array(
					string(format="uri", maxLength=256),
					"Up to 2 website URLs (replaces the current ones).",
					maxItems=2,
				),
				"vertical": string("The business's industry.", enum=_VERTICALS),
			},
			minProperties=1,
		),
	),
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"sendReaction": [],
		"markAsRead": [],
		"uploadMedia": [],
		"getMediaUrl": [],
		"downloadMedia": [],
		"deleteMedia": [],
		"listTemplates": [],
		"createTemplate": [],
		"listPhoneNumbers": [],
		"getBusinessProfile": [],
		"sendText": ["outbound"],
		"sendTemplate": ["outbound"],
		"sendMedia": ["outbound"],
		"sendInteractive": ["outbound"],
		# The profile is public: every customer of the number reads it.
		"updateBusinessProfile": ["outbound"],
	},
	name="WhatsApp",
	description="Send WhatsApp text, template, media, interactive messages and reactions; media and templates.",
	api_version=f"Graph API {GRAPH_VERSION}",
	api_setup=ApiSetup(base_url=GRAPH_URL),
	credential_setup=[
		BearerCredential(
			type="bearer", headers={"Authorization": "Bearer {{ config.accessToken }}"}
		),
	],
	scopes={
		"read": "Read media, templates, phone numbers and the business profile.",
		"send": "Send messages, reactions and read receipts; upload media.",
		"manage": "Create templates, delete media and change the business profile.",
	},
	tools=_TOOLS,
	docs=_DOCS,
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the WhatsApp integration."""
	register(INTEGRATION)
