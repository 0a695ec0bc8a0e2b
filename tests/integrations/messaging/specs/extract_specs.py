"""Rebuild the small reference extracts in this directory from the official specs.

Not a test. Each extract keeps, for the operations our messaging integrations use, the method, the
path, the operation id, the query parameter names and the request-body property names (top level
and one level down, from the schemas and the spec's own examples). See NOTICE.md for sources.

Usage (paths to checkouts of the public repositories and unpacked wheels):

    python extract_specs.py --discord discord-api-spec --twilio twilio-oai --x xdk \
        --whatsapp facebook-openapi --msgraph unpacked-msgraph-sdk-wheel
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent

DISCORD = [
	("post", "/channels/{channel_id}/messages"),
	("get", "/channels/{channel_id}/messages"),
	("get", "/channels/{channel_id}/messages/{message_id}"),
	("patch", "/channels/{channel_id}/messages/{message_id}"),
	("delete", "/channels/{channel_id}/messages/{message_id}"),
	("put", "/channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/@me"),
	("delete", "/channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/@me"),
	("put", "/channels/{channel_id}/messages/pins/{message_id}"),
	("post", "/channels/{channel_id}/messages/{message_id}/threads"),
	("post", "/channels/{channel_id}/threads"),
	("get", "/channels/{channel_id}"),
	("get", "/guilds/{guild_id}/channels"),
	("get", "/guilds/{guild_id}/threads/active"),
	("get", "/guilds/{guild_id}/members/search"),
	("post", "/users/@me/channels"),
	("get", "/users/@me/guilds"),
]
_ACC = "/2010-04-01/Accounts/{AccountSid}"
TWILIO = {
	"twilio_api_v2010": [
		("post", f"{_ACC}/Messages.json"),
		("get", f"{_ACC}/Messages.json"),
		("get", f"{_ACC}/Messages/{{Sid}}.json"),
		("post", f"{_ACC}/Messages/{{Sid}}.json"),
		("get", f"{_ACC}/Messages/{{MessageSid}}/Media.json"),
		("post", f"{_ACC}/Calls.json"),
		("get", f"{_ACC}/Calls.json"),
		("get", f"{_ACC}/Calls/{{Sid}}.json"),
		("post", f"{_ACC}/Calls/{{Sid}}.json"),
		("get", f"{_ACC}/Recordings.json"),
		("get", f"{_ACC}/IncomingPhoneNumbers.json"),
	],
	"twilio_verify_v2": [
		("post", "/v2/Services/{ServiceSid}/Verifications"),
		("post", "/v2/Services/{ServiceSid}/VerificationCheck"),
	],
	"twilio_lookups_v2": [("get", "/v2/PhoneNumbers/{PhoneNumber}")],
}
X = [
	("post", "/2/tweets"),
	("delete", "/2/tweets/{id}"),
	("get", "/2/tweets/{id}"),
	("get", "/2/tweets/search/recent"),
	("get", "/2/users/me"),
	("get", "/2/users/by/username/{username}"),
	("get", "/2/users/{id}/tweets"),
	("get", "/2/users/{id}/mentions"),
	("get", "/2/users/{id}/timelines/reverse_chronological"),
	("post", "/2/users/{id}/likes"),
	("delete", "/2/users/{id}/likes/{tweet_id}"),
	("post", "/2/users/{id}/retweets"),
	("post", "/2/media/upload"),
	("get", "/2/media/upload"),
	("post", "/2/media/upload/initialize"),
	("post", "/2/media/upload/{id}/append"),
	("post", "/2/media/upload/{id}/finalize"),
]
WHATSAPP = [
	("post", "/{Version}/{Phone-Number-ID}/messages"),
	("post", "/{Version}/{Phone-Number-ID}/media"),
	("get", "/{Version}/{Media-ID}"),
	("delete", "/{Version}/{Media-ID}"),
	("get", "/{Version}/{Media-URL}"),
	("get", "/{Version}/{WABA-ID}/message_templates"),
	("post", "/{Version}/{WABA-ID}/message_templates"),
	("get", "/{Version}/{WABA-ID}/phone_numbers"),
	("get", "/{Version}/{Phone-Number-ID}/whatsapp_business_profile"),
]
MSGRAPH_DIRS = [
	"messages",
	"mail_folders",
	"calendar_view",
	"events",
	"send_mail",
]
MSGRAPH_MODELS = ["message", "event", "outlook_item", "attachment", "file_attachment"]


def _git_show(repo: Path, path: str) -> tuple[str, str]:
	commit = subprocess.run(
		["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
	).stdout.strip()
	text = subprocess.run(
		["git", "-C", str(repo), "show", f"HEAD:{path}"], check=True, capture_output=True, text=True
	).stdout
	return commit, text


class _Spec:
	def __init__(self, doc: dict[str, Any]) -> None:
		self.doc = doc

	def resolve(self, node: Any) -> Any:
		seen = 0
		while isinstance(node, dict) and "$ref" in node and seen < 20:
			target: Any = self.doc
			for part in node["$ref"].lstrip("#/").split("/"):
				target = target[part]
			node = target
			seen += 1
		return node

	def properties(self, schema: Any, depth: int = 0) -> dict[str, Any]:
		schema = self.resolve(schema)
		out: dict[str, Any] = {}
		if not isinstance(schema, dict) or depth > 8:
			return out
		for key in ("allOf", "oneOf", "anyOf"):
			for sub in schema.get(key, []):
				out.update(self.properties(sub, depth + 1))
		for name, sub in schema.get("properties", {}).items():
			out[name] = sub
		return out

	def operation(self, method: str, path: str) -> dict[str, Any]:
		item = self.doc["paths"][path]
		op = item[method]
		params = [self.resolve(p) for p in item.get("parameters", []) + op.get("parameters", [])]
		body: dict[str, Any] = {}
		for ctype, content in self.resolve(op.get("requestBody") or {}).get("content", {}).items():
			props = self.properties(content.get("schema", {}))
			nested = {k: sorted(self.properties(v)) for k, v in props.items()}
			for example in (content.get("examples") or {}).values():
				value = self.resolve(example).get("value")
				if isinstance(value, dict):
					for k, v in value.items():
						props.setdefault(k, {})
						if isinstance(v, dict):
							nested[k] = sorted(set(nested.get(k, [])) | set(v))
			body[ctype] = {
				"properties": sorted(props),
				"nested": {k: v for k, v in sorted(nested.items()) if v},
			}
		return {
			"method": method.upper(),
			"path": path,
			"operationId": op.get("operationId"),
			"path_params": [p["name"] for p in params if p.get("in") == "path"],
			"query": sorted({p["name"] for p in params if p.get("in") == "query"}),
			"body": body,
		}


def _openapi(
	out: str, source: str, commit: str, doc: dict[str, Any], ops: list[tuple[str, str]]
) -> None:
	spec = _Spec(doc)
	servers = sorted({s["url"] for s in doc.get("servers", [])})
	data = {
		"source": source,
		"commit": commit,
		"version": doc.get("info", {}).get("version"),
		"servers": servers,
		"operations": [spec.operation(m, p) for m, p in ops],
	}
	(HERE / out).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def _msgraph(root: Path) -> None:
	base = root / "msgraph/generated/users/item"
	templates = []
	for sub in MSGRAPH_DIRS:
		for path in sorted((base / sub).rglob("*_request_builder.py")):
			if "/item/" in str(path.relative_to(base)).replace("\\", "/") and path.parent.name in {
				"extensions",
				"multi_value_extended_properties",
				"single_value_extended_properties",
				"count",
			}:
				continue
			src = path.read_text()
			match = re.search(r'super\(\).__init__\(request_adapter, "([^"]+)"', src)
			if (
				not match
				or "extendedProperties" in match.group(1)
				or "/extensions" in match.group(1)
			):
				continue
			methods = sorted(set(re.findall(r"async def (get|post|patch|delete|put)\(", src)))
			body: list[str] = []
			for body_file in path.parent.glob("*_post_request_body.py"):
				body += re.findall(r'writer\.write_\w+\("([A-Za-z@.]+)"', body_file.read_text())
			templates.append(
				{"template": match.group(1), "methods": methods, "body": sorted(set(body))}
			)
	models = {}
	for name in MSGRAPH_MODELS:
		src = (root / f"msgraph/generated/models/{name}.py").read_text()
		models[name] = sorted(set(re.findall(r'writer\.write_\w+\("([A-Za-z@.]+)"', src)))
	data = {
		"source": "PyPI msgraph-sdk==1.65.0, msgraph/generated/users/item/** and models/",
		"templates": templates,
		"models": models,
	}
	(HERE / "msgraph_users_mail_calendar.json").write_text(
		json.dumps(data, indent=1, sort_keys=True) + "\n"
	)


def main() -> None:
	parser = argparse.ArgumentParser(description=__doc__)
	for name in ("discord", "twilio", "x", "whatsapp", "msgraph"):
		parser.add_argument(f"--{name}", type=Path)
	args = parser.parse_args()
	if args.discord:
		commit, text = _git_show(args.discord, "specs/openapi.json")
		_openapi(
			"discord_openapi_subset.json",
			"discord/discord-api-spec specs/openapi.json",
			commit,
			json.loads(text),
			DISCORD,
		)
	if args.twilio:
		for name, ops in TWILIO.items():
			commit, text = _git_show(args.twilio, f"spec/json/{name}.json")
			_openapi(
				f"{name}_subset.json",
				f"twilio/twilio-oai spec/json/{name}.json",
				commit,
				json.loads(text),
				ops,
			)
	if args.x:
		commit, text = _git_show(args.x, "specs/openapi.json")
		_openapi(
			"x_openapi_subset.json",
			"xdevplatform/xdk specs/openapi.json",
			commit,
			json.loads(text),
			X,
		)
	if args.whatsapp:
		import yaml  # only needed to rebuild; the tests read JSON

		commit, text = _git_show(args.whatsapp, "business-messaging-api_v23.0.yaml")
		doc = yaml.safe_load(text)
		_openapi(
			"whatsapp_openapi_subset.json",
			"facebook/openapi business-messaging-api_v23.0.yaml",
			commit,
			doc,
			WHATSAPP,
		)
	if args.msgraph:
		_msgraph(args.msgraph)


if __name__ == "__main__":
	main()
