"""Every messaging tool against the service's official reference.

Discord, Twilio, X and WhatsApp: extracts of their official OpenAPI files (specs/NOTICE.md).
Microsoft Graph: URL templates of msgraph-sdk. Slack: the method list of slack-sdk's WebClient.
Instagram: the endpoints and parameter types of facebook-business. Telegram and TikTok publish no
machine-readable reference: their tests pin the requests to the official documentation pages.
"""

from __future__ import annotations

import ast
import json
import re
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from openmolt_core.integrations import HttpTool, Integration
from openmolt_integrations import (
	discord,
	instagram,
	outlook,
	slack,
	telegram,
	tiktok,
	twilio,
	whatsapp,
	x,
)

SPECS = Path(__file__).parent / "specs"

_IF_ELSE = re.compile(
	r"\{%-?\s*if [^%]*%\}(.*?)\{%-?\s*else\s*-?%\}(.*?)\{%-?\s*endif\s*-?%\}", re.S
)
_IF = re.compile(r"\{%-?\s*(?:if|unless) [^%]*%\}(.*?)\{%-?\s*end(?:if|unless)\s*-?%\}", re.S)
_VAR = re.compile(r"\{\{\s*(.*?)\s*\}\}")
_FORMATS = {
	"json": "application/json",
	"form-data": "application/x-www-form-urlencoded",
	"multipart": "multipart/form-data",
}
# Graph API parameters every node and edge accepts: field selection and cursor paging
# (https://developers.facebook.com/docs/graph-api/results).
_GRAPH_COMMON = {"fields", "limit", "after", "before"}


def variants(text: str) -> list[str]:
	"""Expand the Liquid conditionals of a template into every text it can produce."""
	match = _IF_ELSE.search(text)
	if match:
		head, tail = text[: match.start()], text[match.end() :]
		return variants(head + match.group(1) + tail) + variants(head + match.group(2) + tail)
	match = _IF.search(text)
	if match:
		head, tail = text[: match.start()], text[match.end() :]
		return variants(head + match.group(1) + tail) + variants(head + tail)
	return [text]


def shape(url: str) -> str:
	"""A URL template with every ``{{ ... }}`` as ``{}``."""
	return _VAR.sub("{}", url)


def http_tools(integration: Integration) -> list[HttpTool]:
	return [t for t in integration.tools if isinstance(t, HttpTool)]


def urls(integration: Integration, tool: HttpTool) -> list[str]:
	base = tool.base_url if tool.base_url is not None else integration.api_setup.base_url
	return [base + v for v in variants(tool.endpoint)]


def input_path_names(url: str) -> list[str | None]:
	"""For each placeholder of a URL: the input field it renders, or None for config values."""
	out: list[str | None] = []
	for expr in _VAR.findall(url):
		name = expr.split("|")[0].strip()
		out.append(name.removeprefix("input.") if name.startswith("input.") else None)
	return out


def request_format(integration: Integration, tool: HttpTool) -> str:
	return tool.request_format or integration.api_setup.request_format


def body_keys(tool: HttpTool) -> tuple[set[str], dict[str, set[str]]]:
	if not isinstance(tool.body, dict):
		return set(), {}
	nested = {k: set(v) for k, v in tool.body.items() if isinstance(v, dict)}
	return set(tool.body), nested


def _norm(name: str) -> str:
	return name.lower().replace("-", "_")


# OpenAPI extracts ---------------------------------------------------------------------------


def load_operations(
	*files: str, version: str | None = None
) -> dict[tuple[str, str], list[dict[str, Any]]]:
	"""Operations by (method, URL shape); paths of the same shape (``/{Media-ID}``, ``/{Media-URL}``) share a key."""
	ops: dict[tuple[str, str], list[dict[str, Any]]] = {}
	for name in files:
		data = json.loads((SPECS / name).read_text())
		for op in data["operations"]:
			path = op["path"].replace("{Version}", version) if version else op["path"]
			for server in data["servers"]:
				ops.setdefault(
					(op["method"], server + re.sub(r"\{[^}]+\}", "{}", path)), []
				).append(op)
	return ops


def _names_match(ours: list[str | None], path: str) -> bool:
	theirs = [n for n in re.findall(r"\{([^}]+)\}", path) if n != "Version"]
	return len(ours) == len(theirs) and all(
		o is None or _norm(o) == _norm(t) for o, t in zip(ours, theirs, strict=True)
	)


def check_openapi(
	integration: Integration,
	ops: dict[tuple[str, str], list[dict[str, Any]]],
	*,
	extra_query: set[str] = frozenset(),  # type: ignore[assignment]
	extra_body: dict[str, set[str]] | None = None,
	skip: set[str] = frozenset(),  # type: ignore[assignment]
) -> int:
	"""Assert method, path, path-parameter names, query names and body names; return checks made."""
	checked = 0
	for tool in http_tools(integration):
		if tool.handle in skip:
			continue
		for url in urls(integration, tool):
			key = (tool.method, shape(url))
			assert key in ops, f"{tool.handle}: {key[0]} {key[1]} is not in the reference"
			ours = input_path_names(url)
			named = [op for op in ops[key] if _names_match(ours, op["path"])]
			assert named, (
				f"{tool.handle}: path parameters {ours} differ from {[o['path'] for o in ops[key]]}"
			)
			op = named[0]
			unknown_query = set(tool.query_params) - set(op["query"]) - extra_query
			assert not unknown_query, (
				f"{tool.handle}: query {unknown_query} not in {op['operationId']}"
			)
			top, nested = body_keys(tool)
			top |= set(tool.files)
			if top:
				ctype = _FORMATS[request_format(integration, tool)]
				assert ctype in op["body"], (
					f"{tool.handle}: {ctype} not accepted by {op['operationId']}"
				)
				spec_body = op["body"][ctype]
				allowed = set(spec_body["properties"]) | (extra_body or {}).get(tool.handle, set())
				assert top <= allowed, (
					f"{tool.handle}: body {top - allowed} not in {op['operationId']}"
				)
				for key_name, keys in nested.items():
					spec_nested = set(spec_body["nested"].get(key_name, []))
					assert keys <= spec_nested, (
						f"{tool.handle}: {key_name}.{keys - spec_nested} unknown"
					)
			checked += 1
	return checked


def test_discord_tools_match_the_discord_openapi_spec() -> None:
	"""Each Discord tool is an operation of discord-api-spec, with its parameter and body names."""
	ops = load_operations("discord_openapi_subset.json")
	assert check_openapi(discord.INTEGRATION, ops) == len(discord.INTEGRATION.tools)
	assert discord.INTEGRATION.api_setup.base_url == "https://discord.com/api/v10"


def test_twilio_tools_match_the_twilio_oai_specs() -> None:
	"""Each Twilio tool is an operation of twilio-oai on its own host, with form field names."""
	ops = load_operations(
		"twilio_api_v2010_subset.json",
		"twilio_verify_v2_subset.json",
		"twilio_lookups_v2_subset.json",
	)
	assert check_openapi(twilio.INTEGRATION, ops) == len(twilio.INTEGRATION.tools)
	hosts = {
		re.match(r"https://[^/]+", urls(twilio.INTEGRATION, t)[0]).group(0)
		for t in twilio.INTEGRATION.tools
	}  # type: ignore[union-attr]
	assert hosts == {
		"https://api.twilio.com",
		"https://verify.twilio.com",
		"https://lookups.twilio.com",
	}
	for tool in twilio.INTEGRATION.tools:
		if tool.method == "POST":
			assert request_format(twilio.INTEGRATION, tool) == "form-data", tool.handle
	# twilio-python sends list parameters (MediaUrl) as a list the HTTP client repeats per item.
	assert twilio.INTEGRATION.api_setup.form_arrays == "repeat"


def test_x_tools_match_the_xdk_openapi_spec() -> None:
	"""Each X tool is an operation of the X API v2 spec (xdk), with its field parameter names."""
	ops = load_operations("x_openapi_subset.json")
	assert check_openapi(x.INTEGRATION, ops) == len(x.INTEGRATION.tools)
	assert not any("1.1" in t.endpoint for t in x.INTEGRATION.tools)


def test_whatsapp_tools_match_the_business_messaging_spec() -> None:
	"""Each WhatsApp tool is an operation of facebook/openapi's business-messaging spec."""
	ops = load_operations("whatsapp_openapi_subset.json", version="v26.0")
	checked = check_openapi(
		whatsapp.INTEGRATION,
		ops,
		extra_query=_GRAPH_COMMON,
		# The spec's media schema omits `type`, which the upload reference requires:
		# https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#upload-media
		extra_body={"uploadMedia": {"type"}},
		skip={"downloadMedia"},
	)
	assert checked == len(whatsapp.INTEGRATION.tools) - 1
	# downloadMedia fetches the media URL itself, the spec's GET /{Version}/{Media-URL}.
	assert any(
		o["path"] == "/{Version}/{Media-URL}"
		for o in ops[("GET", "https://graph.facebook.com/v26.0/{}")]
	)
	download = next(t for t in whatsapp.INTEGRATION.tools if t.handle == "downloadMedia")
	assert download.method == "GET" and download.response_format == "binary"
	sends = [t for t in whatsapp.INTEGRATION.tools if t.endpoint.endswith("/messages")]
	assert sends and all(t.body["messaging_product"] == "whatsapp" for t in sends)


# Microsoft Graph ----------------------------------------------------------------------------


def _graph_templates() -> tuple[dict[tuple[str, str], dict[str, Any]], dict[str, list[str]]]:
	data = json.loads((SPECS / "msgraph_users_mail_calendar.json").read_text())
	out: dict[tuple[str, str], dict[str, Any]] = {}
	for entry in data["templates"]:
		template = entry["template"]
		path = re.split(r"\{\?|\?|\{&", template, maxsplit=1)[0]
		path = re.sub(r"\{[^}]+\}", "{}", path.replace("{+baseurl}", ""))
		names = re.findall(r"[?&]?\{?[?&]?([^{}=&?]+)=", template)
		names += [n for group in re.findall(r"\{[?&]([^}]*)\}", template) for n in group.split(",")]
		query = {n.replace("%24", "$").rstrip("*") for n in names}
		for method in entry["methods"]:
			out[(method.upper(), path)] = {
				"query": query,
				"body": {b.lower() for b in entry["body"]},
			}
	return out, data["models"]


def test_outlook_tools_match_msgraph_sdk_url_templates() -> None:
	"""Each Outlook tool is a msgraph-sdk request builder: path, method, query and body names."""
	templates, models = _graph_templates()
	base = "https://graph.microsoft.com/v1.0"
	assert outlook.INTEGRATION.api_setup.base_url == base
	message = set(models["message"]) | set(models["outlook_item"])
	event = set(models["event"]) | set(models["outlook_item"])
	attachment = set(models["attachment"]) | set(models["file_attachment"]) | {"@odata.type"}
	checked = 0
	for tool in outlook.INTEGRATION.tools:
		for url in urls(outlook.INTEGRATION, tool):
			assert url.startswith(base + "/me/")
			path = "/users/{}" + shape(url.removeprefix(base + "/me"))
			key = (tool.method, path)
			assert key in templates, f"{tool.handle}: {key} is not a msgraph-sdk request builder"
			spec = templates[key]
			unknown = set(tool.query_params) - spec["query"]
			assert not unknown, f"{tool.handle}: query {unknown}"
			top, nested = body_keys(tool)
			if not top:
				checked += 1
				continue
			if spec["body"]:
				assert {k.lower() for k in top} <= spec["body"], f"{tool.handle}: body {top}"
				if "message" in nested:
					assert nested["message"] <= message
			elif path.endswith("/attachments"):
				assert top <= attachment
			elif "/events" in path:
				assert top <= event, f"{tool.handle}: {top - event}"
			else:
				assert top <= message, f"{tool.handle}: {top - message}"
			checked += 1
	assert checked == len(outlook.INTEGRATION.tools) + 1  # replyToMessage is reply and replyAll


def test_outlook_oauth_uses_the_tenant_and_offline_access() -> None:
	"""The Microsoft identity URLs carry the tenant (default common) and ask for offline_access."""
	oauth = outlook.INTEGRATION.credential("oauth2")
	assert oauth is not None
	assert (
		oauth.auth_url
		== "https://login.microsoftonline.com/{{ config.tenant | default: 'common' }}/oauth2/v2.0/authorize"
	)
	assert (
		oauth.token_url
		== "https://login.microsoftonline.com/{{ config.tenant | default: 'common' }}/oauth2/v2.0/token"
	)
	assert "offline_access" in oauth.scopes and "Mail.Send" in oauth.scopes


# Slack ----------------------------------------------------------------------------------------


def _slack_methods() -> dict[str, dict[str, Any]]:
	path = Path(str(metadata.distribution("slack-sdk").locate_file("slack_sdk/web/client.py")))
	tree = ast.parse(path.read_text())
	client = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "WebClient")
	methods: dict[str, dict[str, Any]] = {}
	for fn in client.body:
		if not isinstance(fn, ast.FunctionDef):
			continue
		params = {a.arg for a in fn.args.kwonlyargs}
		for node in ast.walk(fn):
			if (
				isinstance(node, ast.Call)
				and isinstance(node.func, ast.Attribute)
				and node.func.attr == "update"
			):
				for arg in node.args:
					if isinstance(arg, ast.Dict):
						params |= {k.value for k in arg.keys if isinstance(k, ast.Constant)}
			if (
				isinstance(node, ast.Call)
				and isinstance(node.func, ast.Attribute)
				and node.func.attr == "api_call"
			):
				name = node.args[0]
				if not isinstance(name, ast.Constant):
					continue
				kw = {k.arg: k.value for k in node.keywords}
				verb = kw.get("http_verb")
				methods[name.value] = {
					"verb": verb.value if isinstance(verb, ast.Constant) else "POST",
					"json": "json" in kw,
					"params": params,
				}
	return methods


def test_slack_tools_are_slack_sdk_web_api_methods() -> None:
	"""Each Slack tool calls a WebClient method with its HTTP verb, encoding and argument names."""
	methods = _slack_methods()
	assert len(methods) > 300
	assert "files.getUploadURLExternal" in methods and "files.completeUploadExternal" in methods
	checked = 0
	for tool in slack.INTEGRATION.tools:
		if tool.handle == "uploadFileBytes":
			continue
		name = tool.endpoint.lstrip("/")
		assert name != "files.upload", "files.upload is retired"
		assert name in methods, f"{tool.handle}: {name} is not a Slack Web API method"
		spec = methods[name]
		assert tool.method == spec["verb"], (
			f"{tool.handle}: slack-sdk sends {name} as {spec['verb']}"
		)
		if tool.method == "GET":
			names = set(tool.query_params)
		else:
			fmt = request_format(slack.INTEGRATION, tool)
			assert fmt == ("json" if spec["json"] else "form-data"), f"{tool.handle}: {fmt}"
			names = set(tool.body)
		assert names <= spec["params"], f"{tool.handle}: {names - spec['params']}"
		checked += 1
	assert checked == len(slack.INTEGRATION.tools) - 1
	upload = next(t for t in slack.INTEGRATION.tools if t.handle == "uploadFileBytes")
	assert (upload.method, upload.base_url, upload.request_format) == (
		"POST",
		"{{ input.upload_url }}",
		"binary",
	)
	client = Path(
		str(metadata.distribution("slack-sdk").locate_file("slack_sdk/web/client.py"))
	).read_text()
	assert 'url=f["upload_url"]' in client  # slack-sdk also POSTs the raw bytes to upload_url


def test_slack_scopes_and_errors_follow_slack_sdk() -> None:
	"""Scopes are comma-joined in the authorize URL and ok=false is an error, as in slack-sdk."""
	sdk = Path(str(metadata.distribution("slack-sdk").locate_file("slack_sdk")))
	generator = (sdk / "oauth/authorize_url_generator/__init__.py").read_text()
	assert '",".join(self.scopes)' in generator
	response = (sdk / "web/slack_response.py").read_text()
	assert 'self.data.get("ok", False)' in response  # validate() raises SlackApiError otherwise
	oauth = slack.INTEGRATION.credential("oauth2")
	assert oauth is not None and oauth.scope_separator == ","
	assert slack.INTEGRATION.api_setup.error_check == "ok_field"


# Instagram --------------------------------------------------------------------------------------


def _fb_source(module: str) -> str:
	path = metadata.distribution("facebook-business").locate_file(
		f"facebook_business/adobjects/{module}.py"
	)
	return Path(str(path)).read_text()


def _fb_edges(module: str) -> dict[tuple[str, str], dict[str, Any]]:
	src = _fb_source(module)
	out: dict[tuple[str, str], dict[str, Any]] = {}
	for match in re.finditer(
		r"\n    def \w+\(self, fields=None, params=None.*?return request", src, re.S
	):
		body = match.group(0)
		types = re.search(r"param_types = \{(.*?)\n        \}", body, re.S)
		target = re.search(r"target_class=(\w+)", body)
		method = re.search(r"method='(\w+)'", body)
		endpoint = re.search(r"endpoint='([^']*)'", body)
		assert method and endpoint
		out[(method.group(1), endpoint.group(1))] = {
			"params": set(re.findall(r"'([\w.]+)':", types.group(1))) if types else set(),
			"target": target.group(1) if target else None,
		}
	return out


def _fb_fields(module: str) -> set[str]:
	src = _fb_source(module)
	block = re.search(r"class Field\(AbstractObject\.Field\):\n(.*?)\n\n", src, re.S)
	assert block, module
	return set(re.findall(r"(\w+) = '", block.group(1)))


_IG_NODES = {
	"config.igUserId": "iguser",
	"input.media_id": "igmedia",
	"input.comment_id": "igcomment",
	"input.container_id": "shadowigmediabuilder",
}


def test_instagram_tools_match_the_facebook_business_sdk() -> None:
	"""Each Instagram tool is a node or edge call of facebook-business 26 with its parameters and fields."""
	assert metadata.version("facebook-business").startswith("26.")
	apiconfig = Path(
		str(
			metadata.distribution("facebook-business").locate_file("facebook_business/apiconfig.py")
		)
	)
	assert "'v26.0'" in apiconfig.read_text()
	assert instagram.INTEGRATION.api_setup.base_url == "https://graph.facebook.com/v26.0"
	for tool in instagram.INTEGRATION.tools:
		match = re.fullmatch(r"/\{\{ ([\w.]+) \}\}(/\w+)?", tool.endpoint)
		assert match, tool.endpoint
		module = _IG_NODES[match.group(1)]
		edges = _fb_edges(module)
		key = (tool.method, match.group(2) or "/")
		assert key in edges, f"{tool.handle}: {key} is not an endpoint of {module}"
		edge = edges[key]
		names = set(tool.query_params) | (set(tool.body) if isinstance(tool.body, dict) else set())
		unknown = names - edge["params"] - _GRAPH_COMMON
		assert not unknown, f"{tool.handle}: parameters {unknown}"
		fields = tool.query_params.get("fields")
		if fields and "{{" not in fields:
			target = module if key[1] == "/" else edge["target"]
			target_module = target.lower()
			# Graph field expansion may also name the target's edges (replies{...}).
			known = _fb_fields(target_module) | {e.strip("/") for _, e in _fb_edges(target_module)}
			asked = {f.split("{")[0] for f in re.sub(r"\{[^}]*\}", "", fields).split(",")}
			assert asked <= known, f"{tool.handle}: fields {asked - known}"


# Telegram ---------------------------------------------------------------------------------------

# Parameter names of each method, from https://core.telegram.org/bots/api (Bot API 10.0), one
# anchor per method, e.g. https://core.telegram.org/bots/api#sendmessage.
TELEGRAM_METHODS = {
	"getMe": set(),
	"sendMessage": {
		"business_connection_id",
		"chat_id",
		"message_thread_id",
		"text",
		"parse_mode",
		"entities",
		"link_preview_options",
		"disable_notification",
		"protect_content",
		"allow_paid_broadcast",
		"message_effect_id",
		"reply_parameters",
		"reply_markup",
	},
	"sendPhoto": {
		"business_connection_id",
		"chat_id",
		"message_thread_id",
		"photo",
		"caption",
		"parse_mode",
		"caption_entities",
		"show_caption_above_media",
		"has_spoiler",
		"disable_notification",
		"protect_content",
		"allow_paid_broadcast",
		"message_effect_id",
		"reply_parameters",
		"reply_markup",
	},
	"sendDocument": {
		"business_connection_id",
		"chat_id",
		"message_thread_id",
		"document",
		"thumbnail",
		"caption",
		"parse_mode",
		"caption_entities",
		"disable_content_type_detection",
		"disable_notification",
		"protect_content",
		"allow_paid_broadcast",
		"message_effect_id",
		"reply_parameters",
		"reply_markup",
	},
	"editMessageText": {
		"business_connection_id",
		"chat_id",
		"message_id",
		"inline_message_id",
		"text",
		"parse_mode",
		"entities",
		"link_preview_options",
		"reply_markup",
	},
	"deleteMessage": {"chat_id", "message_id"},
	"forwardMessage": {
		"chat_id",
		"message_thread_id",
		"from_chat_id",
		"video_start_timestamp",
		"disable_notification",
		"protect_content",
		"message_id",
	},
	"getUpdates": {"offset", "limit", "timeout", "allowed_updates"},
	"getFile": {"file_id"},
	"getChat": {"chat_id"},
	"sendChatAction": {"business_connection_id", "chat_id", "message_thread_id", "action"},
	"answerCallbackQuery": {"callback_query_id", "text", "show_alert", "url", "cache_time"},
	"setWebhook": {
		"url",
		"certificate",
		"ip_address",
		"max_connections",
		"allowed_updates",
		"drop_pending_updates",
		"secret_token",
	},
	"deleteWebhook": {"drop_pending_updates"},
}


def test_telegram_tools_follow_the_bot_api_documentation() -> None:
	"""Each Telegram tool calls https://api.telegram.org/bot<token>/METHOD with documented parameters.

	Pinned to https://core.telegram.org/bots/api#making-requests ("https://api.telegram.org/bot<token>/METHOD_NAME")
	and https://core.telegram.org/bots/api#getfile ("https://api.telegram.org/file/bot<token>/<file_path>").
	"""
	base = "https://api.telegram.org/bot{{ config.botToken }}"
	assert telegram.INTEGRATION.api_setup.base_url == base
	for tool in telegram.INTEGRATION.tools:
		if tool.handle == "downloadFile":
			assert tool.base_url == "https://api.telegram.org/file/bot{{ config.botToken }}"
			assert tool.endpoint == "/{{ input.file_path | path_segments }}"
			assert (tool.method, tool.response_format) == ("GET", "binary")
			continue
		method = tool.endpoint.lstrip("/")
		assert method in TELEGRAM_METHODS, f"{tool.handle}: {method} is not a Bot API method"
		assert tool.method == "POST"
		names = set(tool.body) | set(tool.files)
		unknown = names - TELEGRAM_METHODS[method]
		assert not unknown, f"{tool.handle}: {unknown} are not parameters of {method}"
		if tool.files:
			assert tool.request_format == "multipart"


# TikTok -----------------------------------------------------------------------------------------

# Requests of the official documentation, page by page.
TIKTOK_DOCS = {
	# https://developers.tiktok.com/doc/tiktok-api-v2-get-user-info
	"getUserInfo": ("GET", "https://open.tiktokapis.com/v2/user/info/", {"fields"}, set()),
	# https://developers.tiktok.com/doc/content-posting-api-reference-query-creator-info
	"queryCreatorInfo": (
		"POST",
		"https://open.tiktokapis.com/v2/post/publish/creator_info/query/",
		set(),
		set(),
	),
	# https://developers.tiktok.com/doc/content-posting-api-reference-direct-post
	"initDirectPost": (
		"POST",
		"https://open.tiktokapis.com/v2/post/publish/video/init/",
		set(),
		{"post_info", "source_info"},
	),
	# https://developers.tiktok.com/doc/content-posting-api-reference-upload-video
	"initInboxUpload": (
		"POST",
		"https://open.tiktokapis.com/v2/post/publish/inbox/video/init/",
		set(),
		{"source_info"},
	),
	# https://developers.tiktok.com/doc/content-posting-api-reference-photo-post
	"initPhotoPost": (
		"POST",
		"https://open.tiktokapis.com/v2/post/publish/content/init/",
		set(),
		{"post_info", "source_info", "post_mode", "media_type"},
	),
	# https://developers.tiktok.com/doc/content-posting-api-reference-get-video-status
	"getPostStatus": (
		"POST",
		"https://open.tiktokapis.com/v2/post/publish/status/fetch/",
		set(),
		{"publish_id"},
	),
	# https://developers.tiktok.com/doc/tiktok-api-v2-video-list
	"listVideos": (
		"POST",
		"https://open.tiktokapis.com/v2/video/list/",
		{"fields"},
		{"max_count", "cursor"},
	),
	# https://developers.tiktok.com/doc/tiktok-api-v2-video-query
	"queryVideos": ("POST", "https://open.tiktokapis.com/v2/video/query/", {"fields"}, {"filters"}),
}
# https://developers.tiktok.com/doc/content-posting-api-reference-direct-post (post_info, source_info)
TIKTOK_POST_INFO = {
	"title",
	"privacy_level",
	"disable_duet",
	"disable_stitch",
	"disable_comment",
	"video_cover_timestamp_ms",
	"brand_content_toggle",
	"brand_organic_toggle",
	"is_aigc",
}
TIKTOK_SOURCE_INFO = {"source", "video_size", "chunk_size", "total_chunk_count", "video_url"}


def test_tiktok_tools_follow_the_official_documentation() -> None:
	"""Each TikTok tool sends the method, URL (with trailing slash) and fields of the documented request."""
	for tool in http_tools(tiktok.INTEGRATION):
		if tool.handle == "uploadVideoChunk":
			# https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide:
			# PUT {UPLOAD_URL}, Content-Type, Content-Range: bytes {FIRST_BYTE}-{LAST_BYTE}/{TOTAL_BYTE_LENGTH}
			assert (tool.method, tool.base_url, tool.request_format) == (
				"PUT",
				"{{ input.upload_url }}",
				"binary",
			)
			assert (
				tool.headers["Content-Range"]
				== "bytes {{ input.first_byte }}-{{ input.last_byte }}/{{ input.total_bytes }}"
			)
			continue
		method, url, query, body = TIKTOK_DOCS[tool.handle]
		assert (tool.method, urls(tiktok.INTEGRATION, tool)[0]) == (method, url), tool.handle
		assert set(tool.query_params) == query, tool.handle
		assert (set(tool.body) if isinstance(tool.body, dict) else set()) == body, tool.handle
	direct = next(t for t in tiktok.INTEGRATION.tools if t.handle == "initDirectPost")
	assert set(direct.body["post_info"]) == TIKTOK_POST_INFO
	source = direct.input_schema["properties"]["source_info"]["properties"]
	assert set(source) == TIKTOK_SOURCE_INFO
	oauth = tiktok.INTEGRATION.credential("oauth2")
	assert oauth is not None
	# https://developers.tiktok.com/doc/oauth-user-access-token-management
	assert oauth.token_url == "https://open.tiktokapis.com/v2/oauth/token/"
	assert oauth.client_id_param == "client_key"
	# https://developers.tiktok.com/doc/login-kit-web
	assert oauth.auth_url == "https://www.tiktok.com/v2/auth/authorize/"
	assert oauth.scope_separator == ","  # "comma (,) separated" in Login Kit for Web


@pytest.mark.parametrize(
	("integration", "minimum"),
	[
		(discord.INTEGRATION, 10),
		(twilio.INTEGRATION, 10),
		(x.INTEGRATION, 10),
		(whatsapp.INTEGRATION, 10),
	],
)
def test_the_openapi_extracts_cover_every_tool(integration: Integration, minimum: int) -> None:
	"""The committed extracts hold an operation for every tool, so a new tool cannot skip the check."""
	assert len(integration.tools) >= minimum
	files = {
		"Discord": ["discord_openapi_subset.json"],
		"Twilio": [
			"twilio_api_v2010_subset.json",
			"twilio_verify_v2_subset.json",
			"twilio_lookups_v2_subset.json",
		],
		"X": ["x_openapi_subset.json"],
		"WhatsApp": ["whatsapp_openapi_subset.json"],
	}[integration.name]
	for name in files:
		data = json.loads((SPECS / name).read_text())
		assert re.fullmatch(r"[0-9a-f]{40}", data["commit"])
		assert data["operations"]
