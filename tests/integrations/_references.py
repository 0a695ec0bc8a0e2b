"""Which official machine-readable reference checks each built-in integration's tools.

One table per fact: ``REFERENCES`` names, for every integration module, the pinned reference(s)
its conformance tests read and those test files; ``UNREFERENCED`` lists the tools that no such
reference checks (``module.handle``), each with the reason. tests/integrations/
test_reference_coverage.py keeps both honest (every module listed, every test file there and
reading the module, every listed tool real, at most ``MAX_UNREFERENCED`` of them, each listed in
docs/reference/integrations.md). Run ``uv run python tests/integrations/_references.py`` to print
the unreferenced tools and their count.
"""

from __future__ import annotations

from openmolt_core.integrations import HttpTool
from openmolt_integrations import tiktok

MAX_UNREFERENCED = 26  # 25, and TikTok's status fetch as two tools (one per tool scope)
"""The most tools that may stay without a machine-readable reference."""

REFERENCES: dict[str, tuple[str, tuple[str, ...]]] = {
	"airtable": (
		"airtable.js (npm airtable 0.12.2): the record tools",
		("commerce/test_airtable_reference.py",),
	),
	"browser_use": ("browser-use-sdk (PyPI)", ("media/test_media_browser_use_reference.py",)),
	"discord": (
		"discord-api-spec (npm, Discord's OpenAPI document)",
		("social/test_social_discord_reference.py", "messaging/test_messaging_conformance.py"),
	),
	"dropbox": ("dropbox (PyPI, generated from stone)", ("media/test_media_dropbox_reference.py",)),
	"etsy": ("etsy-ts (npm 8.0.1, Etsy's Open API v3)", ("commerce/test_etsy_reference.py",)),
	"fal": ("fal-client (PyPI)", ("media/test_media_openai_fal_reference.py",)),
	"github": ("@octokit/openapi (npm)", ("commerce/test_commerce_conformance.py",)),
	"gmail": ("Google discovery documents", ("google/test_google_discovery_conformance.py",)),
	"google_ads": (
		"google-ads (PyPI) and google-proto-files (npm)",
		("google/test_google_gapic_conformance.py",),
	),
	"google_calendar": (
		"Google discovery documents",
		("google/test_google_discovery_conformance.py",),
	),
	"google_drive": (
		"Google discovery documents",
		("google/test_google_discovery_conformance.py",),
	),
	"google_sheets": (
		"Google discovery documents",
		("google/test_google_discovery_conformance.py",),
	),
	"instagram": ("facebook-business (PyPI)", ("social/test_social_graph_reference.py",)),
	"meta_ads": ("facebook-business (PyPI)", ("social/test_social_graph_reference.py",)),
	"nano_banana": (
		"google-ai-generativelanguage and google-genai (PyPI)",
		("google/test_google_gapic_conformance.py",),
	),
	"notion": ("@notionhq/client (npm)", ("commerce/test_commerce_conformance.py",)),
	"openai_image": ("openai (PyPI)", ("media/test_media_openai_fal_reference.py",)),
	"outlook": ("msgraph-sdk (PyPI)", ("messaging/test_messaging_conformance.py",)),
	"s3": ("botocore's S3 service model (PyPI)", ("media/test_media_s3_reference.py",)),
	"shopify": (
		"@shopify/dev-mcp (npm): the Admin GraphQL schema",
		("commerce/test_commerce_conformance.py",),
	),
	"slack": (
		"slack-sdk (PyPI)",
		("messaging/test_messaging_conformance.py", "messaging/test_slack_sdk_requests.py"),
	),
	"stripe": ("stripe (PyPI)", ("commerce/test_commerce_conformance.py",)),
	"telegram": ("@grammyjs/types (npm)", ("social/test_social_telegram_reference.py",)),
	"tiktok": ("none published: documentation pages", ("social/test_social_tiktok_reference.py",)),
	"twilio": (
		"twilio (PyPI, generated from twilio-oai)",
		("messaging/test_messaging_conformance.py", "messaging/test_twilio_form_bodies.py"),
	),
	"veo": (
		"google-genai and google-ai-generativelanguage (PyPI)",
		("google/test_google_gapic_conformance.py",),
	),
	"whatsapp": (
		"facebook-business (PyPI): the Business Account edges; Meta's OpenAPI "
		"(facebook/openapi business-messaging-api_v23.0.yaml, pinned extract): messages, media, "
		"business profile",
		(
			"messaging/test_whatsapp_sdk_reference.py",
			"messaging/test_whatsapp_openapi_reference.py",
			"messaging/test_messaging_conformance.py",
		),
	),
	"x": (
		"xdk (PyPI, generated from the X API OpenAPI); the OpenAPI's constraints (xdevplatform/xdk "
		"specs/openapi.json 2.167, pinned extract)",
		("messaging/test_messaging_conformance.py", "messaging/test_x_openapi_reference.py"),
	),
	"youtube": ("Google discovery documents", ("google/test_google_discovery_conformance.py",)),
}

_AIRTABLE = (
	"Airtable publishes no OpenAPI document and airtable.js calls no metadata, comment or "
	"upload endpoint; pinned to its documentation page"
)
_TIKTOK = (
	"TikTok publishes no spec or SDK for the Content Posting and Display APIs "
	"(tiktok-business-api-sdk is the Marketing API); pinned to its documentation page"
)
_LOCAL = "reads OpenMolt's own file store: no vendor request to check"

UNREFERENCED: dict[str, str] = {
	**{
		f"airtable.{h}": _AIRTABLE
		for h in (
			"whoami",
			"listBases",
			"getBaseSchema",
			"createTable",
			"createField",
			"updateTable",
			"updateField",
			"uploadAttachment",
			"listComments",
			"createComment",
		)
	},
	# Every TikTok request: the integration has no machine-readable reference at all.
	**{f"tiktok.{t.handle}": _TIKTOK for t in tiktok.INTEGRATION.tools if isinstance(t, HttpTool)},
	"instagram.searchHashtag": (
		"a root-level search facebook-business has no call for; pinned to the hashtag search "
		"documentation"
	),
	**{f"{m}.fileInfo": _LOCAL for m in ("dropbox", "google_drive", "tiktok", "youtube")},
}


def main() -> None:
	"""Print the unreferenced tools, their reasons and their count."""
	for key, reason in sorted(UNREFERENCED.items()):
		print(f"{key}: {reason}")
	print(f"{len(UNREFERENCED)} tools without a machine-readable reference")


if __name__ == "__main__":
	main()
