"""Check declarative HTTP tools against Google's machine-readable API references.

Two kinds of reference are supported, both read from installed packages (no network):

- Google API discovery documents (``google-api-python-client`` ships them): `discovery_problems`
  checks a tool against one discovery method: HTTP method, URL template (the tool's Liquid
  ``{{ input.x }}`` maps to the discovery ``{x}``/``{+x}``), required path and query parameters,
  query parameter names, request body fields (walked through the schema ``$ref``s), media upload
  paths and media download; `keyword_problems` checks that the inputs keep the reference's
  ``format``, ``pattern``, ``enum`` and bounds.
- Pydantic models of an SDK (``google-genai``'s Interactions types): `pydantic_problems` walks a
  body template through the models' fields (their JSON names), unions included.
- ``google.api.http`` rules as shipped in GAPIC packages (``rest_base.py`` of
  ``google-ai-generativelanguage``) or written down from the googleapis protos, together with the
  request message of the RPC read from the proto-plus sources (``google-ads``,
  ``google-ai-generativelanguage``): `http_rule_problems`. `proto_http_rules` reads the rules of
  a ``.proto`` file (Google's ``google-proto-files`` npm package ships the googleapis protos).

Each check returns a list of human-readable problems; an empty list means the tool conforms.
Other integrations can reuse the helpers with their own references.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from openmolt_core.integrations import HttpTool, Integration

__all__ = [
	"ProtoIndex",
	"camel_to_snake",
	"discovery_document",
	"discovery_method",
	"discovery_problems",
	"endpoint_shape",
	"http_rule_problems",
	"input_vars",
	"keyword_problems",
	"model_candidates",
	"package_file",
	"proto_http_rules",
	"pydantic_problems",
	"rest_rules",
	"sdk_model_fields",
	"tool_url",
]

_EXPR = re.compile(r"\{\{\s*(.*?)\s*\}\}")
_INPUT_VAR = re.compile(r"^input\.([A-Za-z_][A-Za-z0-9_]*)")


def package_file(distribution: str, relative: str) -> Path:
	"""Path of a file inside an installed distribution, without importing it."""
	path = Path(str(metadata.distribution(distribution).locate_file(relative)))
	if not path.exists():
		raise FileNotFoundError(f"{relative} is not in {distribution}")
	return path


def camel_to_snake(name: str) -> str:
	"""``pageToken`` -> ``page_token``."""
	return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def input_vars(template: Any) -> set[str]:
	"""The ``input.*`` top-level names a template (string, dict or list) refers to."""
	found: set[str] = set()
	if isinstance(template, str):
		for expr in _EXPR.findall(template):
			match = _INPUT_VAR.match(expr)
			if match:
				found.add(match.group(1))
		for tag in re.findall(r"\{%\s*(.*?)\s*%\}", template):
			found |= set(re.findall(r"input\.([A-Za-z_][A-Za-z0-9_]*)", tag))
	elif isinstance(template, dict):
		for value in template.values():
			found |= input_vars(value)
	elif isinstance(template, list):
		for value in template:
			found |= input_vars(value)
	return found


def tool_url(tool: HttpTool, integration: Integration) -> str:
	"""The tool's URL template: its base URL (or the integration's) joined to its endpoint."""
	base = tool.base_url if tool.base_url is not None else integration.api_setup.base_url
	if tool.endpoint.startswith(("http://", "https://")):
		return tool.endpoint
	return base.rstrip("/") + tool.endpoint


def endpoint_shape(template: str) -> str:
	"""Replace each Liquid output in a URL template by ``{name}`` (``{+name}`` with path_segments)."""

	def repl(match: re.Match[str]) -> str:
		expr = match.group(1)
		var = _INPUT_VAR.match(expr)
		name = var.group(1) if var else expr.split("|")[0].strip()
		return "{+" + name + "}" if "path_segments" in expr else "{" + name + "}"

	return _EXPR.sub(repl, template)


# discovery documents -----------------------------------------------------------------------


@cache
def discovery_document(api: str) -> dict[str, Any]:
	"""A discovery document shipped in google-api-python-client, e.g. ``drive.v3``."""
	path = package_file(
		"google-api-python-client", f"googleapiclient/discovery_cache/documents/{api}.json"
	)
	return json.loads(path.read_text(encoding="utf-8"))


def _methods(resources: dict[str, Any]) -> dict[str, dict[str, Any]]:
	out: dict[str, dict[str, Any]] = {}
	for resource in resources.values():
		for method in resource.get("methods", {}).values():
			out[method["id"]] = method
		out |= _methods(resource.get("resources", {}))
	return out


def discovery_method(api: str, method_id: str) -> dict[str, Any]:
	"""One method of a discovery document by its id (``drive.files.list``)."""
	methods = _methods(discovery_document(api)["resources"])
	if method_id not in methods:
		raise KeyError(f"{method_id} is not a method of {api}")
	return methods[method_id]


def _normalize(url: str) -> str:
	return re.sub(r"\{\+?([^}]+)\}", r"{\1}", url)


def _schema_problems(
	doc: dict[str, Any], body: Any, schema: dict[str, Any], where: str
) -> list[str]:
	if "$ref" in schema:
		schema = doc["schemas"][schema["$ref"]]
	if isinstance(body, str) or body is None:
		return []  # a template value: its shape is the input's
	if isinstance(body, list):
		items = schema.get("items")
		if schema.get("type") != "array" or items is None:
			return [f"{where} is a list but the reference says {schema.get('type')}"]
		return [
			p for i, v in enumerate(body) for p in _schema_problems(doc, v, items, f"{where}[{i}]")
		]
	if isinstance(body, dict):
		props = schema.get("properties")
		if props is None:
			if schema.get("additionalProperties") is not None or schema.get("type") == "any":
				return []
			return [f"{where} is an object but the reference says {schema.get('type')}"]
		problems = []
		for key, value in body.items():
			if key not in props:
				problems.append(f"{where}.{key} is not a field of the reference schema")
			else:
				problems += _schema_problems(doc, value, props[key], f"{where}.{key}")
		return problems
	return []


def discovery_problems(
	tool: HttpTool,
	integration: Integration,
	api: str,
	method_id: str,
	*,
	resumable_session: bool = False,
) -> list[str]:
	"""How a tool disagrees with a discovery method (empty when it conforms).

	Args:
		tool: The tool.
		integration: Its integration (for the base URL).
		api: The discovery document (``drive.v3``).
		method_id: The discovery method (``drive.files.create``).
		resumable_session: The tool is the second step of a resumable upload (PUT of the bytes
			to the session of ``method_id``), which discovery describes only as a protocol.
	"""
	doc = discovery_document(api)
	method = discovery_method(api, method_id)
	params: dict[str, Any] = method.get("parameters", {})
	problems: list[str] = []
	url = endpoint_shape(tool_url(tool, integration))
	query = tool.query_params
	upload = method.get("mediaUpload", {}).get("protocols", {})
	root = doc["rootUrl"].rstrip("/")
	expected_urls = {
		_normalize(doc["rootUrl"] + doc["servicePath"] + method.get("flatPath", method["path"]))
	}
	if upload:
		expected_urls |= {_normalize(root + p["path"]) for p in upload.values()}
		expected_urls |= {
			_normalize(root + p["path"]).replace("/resumable/upload/", "/upload/")
			for p in upload.values()
		}
	if _normalize(url) not in expected_urls:
		problems.append(f"URL {url} is none of the reference's {sorted(expected_urls)}")
	is_upload = "/upload/" in url
	if resumable_session:
		if tool.method != "PUT":
			problems.append("a resumable session upload must PUT the bytes")
		if "resumable" not in upload:
			problems.append(f"{method_id} does not support resumable uploads")
		if query.get("uploadType") != "resumable" or "upload_id" not in query:
			problems.append("a resumable session upload needs uploadType=resumable and upload_id")
	elif tool.method != method["httpMethod"]:
		problems.append(f"method {tool.method} but the reference says {method['httpMethod']}")
	if is_upload:
		kind = query.get("uploadType")
		if not upload:
			problems.append(f"{method_id} takes no media upload")
		if kind not in {"multipart", "media", "resumable"}:
			problems.append(
				f"an upload URL needs uploadType multipart, media or resumable, got {kind!r}"
			)
		if kind == "multipart" and tool.request_format != "multipart-related":
			problems.append("uploadType=multipart needs request_format multipart-related")
		if kind == "media" and tool.request_format != "binary":
			problems.append("uploadType=media needs request_format binary")
	elif tool.request_format in {"multipart-related", "binary"}:
		problems.append(f"{tool.request_format} body on a non-upload URL")
	path_vars = set(re.findall(r"\{\+?([^}]+)\}", url))
	props = tool.input_schema.get("properties", {})
	required_inputs = set(tool.input_schema.get("required", []))
	for name, spec in params.items():
		if not spec.get("required"):
			continue
		if spec.get("location") == "path":
			if name not in path_vars:
				problems.append(f"required path parameter {name} is not in the URL")
			elif name not in props or (
				name not in required_inputs and "default" not in props[name]
			):
				problems.append(f"path parameter {name} is not a required input (nor defaulted)")
		elif name not in query and not resumable_session:
			problems.append(f"required query parameter {name} is missing")
	global_params = set(doc.get("parameters", {}))
	for name in query:
		if name == "upload_id" and resumable_session:
			continue
		if name not in params and name not in global_params:
			problems.append(f"query parameter {name} is not a parameter of {method_id}")
		elif params.get(name, {}).get("location") == "path":
			problems.append(f"{name} is a path parameter, not a query parameter")
	if tool.response_format == "binary":
		if not method.get("supportsMediaDownload"):
			problems.append(f"{method_id} does not support media download")
		if method_id.endswith(".get") and query.get("alt") != "media":
			problems.append("a media download through get needs alt=media")
	body = tool.body
	if tool.request_format == "multipart-related" and isinstance(body, dict):
		extra = set(body) - {"metadata", "media"}
		if extra:
			problems.append(
				f"a multipart-related body holds only metadata and media, not {sorted(extra)}"
			)
		body = body.get("metadata")
	if resumable_session:
		problems += _session_problems(tool)
	elif tool.request_format == "binary":
		if not isinstance(body, str) or "input." not in body:
			problems.append("a binary body must be a file reference template")
	elif body is not None:
		if "request" not in method:
			if body != {}:
				problems.append(f"{method_id} takes no request body")
		else:
			problems += _schema_problems(doc, body, method["request"], "body")
	elif "request" in method and tool.method in {"POST", "PUT", "PATCH"} and not upload:
		problems.append(f"{method_id} expects a {method['request'].get('$ref')} body")
	return problems


_CHUNK_RANGE = re.compile(
	r"^bytes \{\{ input\.(\w+) \}\}-\{\{ input\.(\w+) \}\}/\{\{ input\.\w+ \}\}$"
)
_STATUS_RANGE = re.compile(r"^bytes \*/\{\{ input\.\w+ \}\}$")


def _session_problems(tool: HttpTool) -> list[str]:
	"""How a PUT to a resumable session departs from Google's resumable upload protocol.

	Three shapes are allowed: the whole content in one PUT (a file reference body, no
	Content-Range); one chunk (``Content-Range: bytes a-b/total`` and the same ``#bytes=a-b``
	range of the file as the body); and the status query (no body, ``Content-Range:
	bytes */total``). Chunks and status queries are answered ``308 Resume Incomplete`` with a
	``Range`` header, which the tool must accept and return.
	"""
	problems: list[str] = []
	content_range = tool.headers.get("Content-Range")
	body = tool.body
	partial = content_range is not None
	if partial and (308 not in tool.accept_statuses or "Range" not in tool.response_headers):
		problems.append("chunk and status PUTs must accept 308 and return its Range header")
	if body is None:
		if content_range is None or not _STATUS_RANGE.match(content_range):
			problems.append("a status query needs Content-Range 'bytes */<total>' and no body")
		return problems
	if tool.request_format != "binary" or not isinstance(body, str) or "input." not in body:
		problems.append("a session PUT sends a file reference as a binary body")
		return problems
	if partial:
		match = _CHUNK_RANGE.match(content_range or "")
		if not match:
			problems.append(f"Content-Range {content_range!r} is not 'bytes <a>-<b>/<total>'")
		elif not body.endswith(
			f"#bytes={{{{ input.{match.group(1)} }}}}-{{{{ input.{match.group(2)} }}}}"
		):
			problems.append("the chunk body must be the file's #bytes= range of Content-Range")
	elif "#bytes=" in body:
		problems.append("a byte range body needs a Content-Range header")
	return problems


# keywords of the reference carried into input schemas ----------------------------------------

REFERENCE_FORMATS = {"date-time": "date-time", "google-datetime": "date-time", "date": "date"}
"""Discovery ``format`` to the JSON Schema format an input must declare (``google-datetime`` is
RFC 3339 too); the numeric formats (``int32``, ``uint64``...) have no JSON Schema counterpart."""

_EXACT_INPUT = re.compile(r"^\{\{\s*input\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$")


def _keyword_drops(
	doc: dict[str, Any], ours: dict[str, Any], ref: dict[str, Any], where: str, seen: frozenset[str]
) -> list[str]:
	if "$ref" in ref:
		if ref["$ref"] in seen:
			return []
		seen = seen | {ref["$ref"]}
		ref = doc["schemas"][ref["$ref"]]
	problems = []
	fmt = REFERENCE_FORMATS.get(ref.get("format", ""))
	if fmt and ours.get("format") != fmt:
		problems.append(
			f"{where}: the reference's format {fmt} is missing (ours {ours.get('format')})"
		)
	if "pattern" in ref and ours.get("pattern") != ref["pattern"]:
		problems.append(f"{where}: the reference's pattern {ref['pattern']!r} is missing")
	if "enum" in ref:
		enum = ours.get("enum")
		if not enum:
			problems.append(f"{where}: the reference's enum {ref['enum']} is missing")
		elif not set(enum) <= set(ref["enum"]):
			problems.append(f"{where}: {sorted(set(enum) - set(ref['enum']))} are not in the enum")
	if "minimum" in ref and (
		ours.get("minimum") is None or float(ours["minimum"]) < float(ref["minimum"])
	):
		problems.append(
			f"{where}: minimum {ours.get('minimum')} below the reference's {ref['minimum']}"
		)
	if "maximum" in ref and (
		ours.get("maximum") is None or float(ours["maximum"]) > float(ref["maximum"])
	):
		problems.append(
			f"{where}: maximum {ours.get('maximum')} above the reference's {ref['maximum']}"
		)
	if ref.get("type") == "array" and isinstance(ours.get("items"), dict) and "items" in ref:
		problems += _keyword_drops(doc, ours["items"], ref["items"], where + "[]", seen)
	ref_props = ref.get("properties")
	for name, prop in (ours.get("properties") or {}).items():
		if ref_props is None:
			break  # a map or free-form object: any name
		if name not in ref_props:
			problems.append(f"{where}.{name} is not a field of the reference schema")
		else:
			problems += _keyword_drops(doc, prop, ref_props[name], f"{where}.{name}", seen)
	return problems


def _body_inputs(
	doc: dict[str, Any], body: Any, ref: dict[str, Any], where: str
) -> list[tuple[str, dict[str, Any], str]]:
	"""(input, reference schema, where) of each body field filled from an input of its name."""
	if "$ref" in ref:
		ref = doc["schemas"][ref["$ref"]]
	found: list[tuple[str, dict[str, Any], str]] = []
	if isinstance(body, dict):
		props = ref.get("properties") or {}
		for key, value in body.items():
			if key not in props:
				continue
			exact = _EXACT_INPUT.match(value) if isinstance(value, str) else None
			if exact:
				found.append((exact.group(1), props[key], f"{where}.{key}"))
			elif isinstance(value, str) and input_vars(value) == {key}:
				found.append((key, props[key], f"{where}.{key}"))  # the input with a default
			else:
				found += _body_inputs(doc, value, props[key], f"{where}.{key}")
	elif isinstance(body, list) and "items" in ref:
		for value in body:
			found += _body_inputs(doc, value, ref["items"], where + "[]")
	return found


def keyword_problems(tool: HttpTool, api: str, method_id: str) -> list[str]:
	"""Where an input drops a ``format``, ``pattern``, ``enum`` or bound of the discovery method.

	Each parameter of the method that is an input of the same name, and each body field filled
	from an input, must declare the reference's format (`REFERENCE_FORMATS`) and pattern, an enum
	within the reference's, and bounds within its ``minimum``/``maximum``; nested properties of
	the input must be fields of the reference schema (through ``$ref``) and are checked alike.

	Args:
		tool: The tool.
		api: The discovery document (``calendar.v3``).
		method_id: The discovery method (``calendar.events.list``).
	"""
	doc = discovery_document(api)
	method = discovery_method(api, method_id)
	props: dict[str, Any] = tool.input_schema.get("properties", {})
	problems: list[str] = []
	for name, spec in method.get("parameters", {}).items():
		if name in props:
			ours = props[name]
			if spec.get("repeated") and ours.get("type") == "array":
				ours = ours.get("items", {})
			problems += _keyword_drops(doc, ours, spec, f"parameter {name}", frozenset())
	body = tool.body
	if tool.request_format == "multipart-related" and isinstance(body, dict):
		body = body.get("metadata")
	if "request" in method and body is not None:
		for name, ref, where in _body_inputs(doc, body, method["request"], "body"):
			if name in props:
				problems += _keyword_drops(
					doc, props[name], ref, f"input {name} ({where})", frozenset()
				)
	return problems


# google.api.http rules and proto-plus messages ------------------------------------------------


def rest_rules(distribution: str, relative: str) -> set[tuple[str, str]]:
	"""The ``(METHOD, uri)`` pairs of a GAPIC ``rest_base.py`` (its ``http_options``)."""
	text = package_file(distribution, relative).read_text(encoding="utf-8")
	pairs = re.findall(r'"method":\s*"(\w+)",\s*"uri":\s*"([^"]+)"', text)
	return {(m.upper(), uri) for m, uri in pairs}


_RPC = re.compile(
	r"rpc (\w+)\(\s*(\w+)\s*\)\s*returns\s*\([^)]*\)\s*\{\s*option \(google\.api\.http\) = \{"
	r"\s*(get|post|put|patch|delete): \"([^\"]+)\"(?:\s*body: \"([^\"]*)\")?",
	re.S,
)


def proto_http_rules(text: str) -> dict[str, tuple[str, str, str, str]]:
	"""RPC name to (request message, METHOD, uri, body) from a .proto's google.api.http options."""
	return {
		m.group(1): (m.group(2), m.group(3).upper(), m.group(4), m.group(5) or "")
		for m in _RPC.finditer(text)
	}


def _rule_shape(uri: str) -> str:
	"""``/v1beta/{model=models/*}:x`` -> ``/v1beta/models/{*}:x``; ``{customer_id=*}`` -> ``{*}``."""

	def repl(match: re.Match[str]) -> str:
		pattern = match.group(2)
		if pattern is None or pattern == "*":
			return "{*}"
		return "/".join(
			"{*}" if seg == "*" else "{**}" if seg == "**" else seg for seg in pattern.split("/")
		)

	return re.sub(r"\{([a-z_.]+)(?:=([^}]+))?\}", repl, uri)


def _our_shape_regex(url_path: str) -> re.Pattern[str]:
	out = ""
	for piece in re.split(r"(\{\+?[^}]+\})", url_path):
		if piece.startswith("{+"):
			out += r"(?:\{\*\}|[^/{}]+)(?:/(?:\{\*\}|[^/{}]+))*"
		elif piece.startswith("{"):
			out += r"(?:\{\*\}|[^/{}:]+)"
		else:
			out += re.escape(piece)
	return re.compile(out)


def sdk_model_fields(distribution: str, relative: str, class_name: str) -> set[str]:
	"""Field names of a pydantic model class in an SDK source file (``google-genai`` types)."""
	text = package_file(distribution, relative).read_text(encoding="utf-8")
	match = re.search(
		rf"^class {class_name}\((?:_common\.)?BaseModel\):\n(.*?)(?=^class |\Z)", text, re.M | re.S
	)
	if match is None:
		raise KeyError(f"{class_name} is not a model of {relative}")
	return set(re.findall(r"^  ([a-z_][a-z0-9_]*): ", match.group(1), re.M))


class ProtoIndex:
	"""Messages and fields of proto-plus modules, read from their source (nothing imported).

	Args:
		distribution: The distribution holding the modules (``google-ads``).
		extra: More fields per message name, from another official source (``google-genai``).
	"""

	def __init__(self, distribution: str, extra: dict[str, set[str]] | None = None) -> None:
		self.distribution = distribution
		self.extra = extra or {}

	@cache  # noqa: B019 - the index lives as long as the test session
	def _module(self, module: str) -> tuple[dict[str, dict[str, str | None]], dict[str, str]]:
		text = package_file(self.distribution, module.replace(".", "/") + ".py").read_text(
			encoding="utf-8"
		)
		aliases = {
			alias: f"{pkg}.{mod}"
			for pkg, mod, alias in re.findall(r"^from ([\w.]+) import (\w+) as (\w+)$", text, re.M)
		}
		messages: dict[str, dict[str, str | None]] = {}
		for match in re.finditer(
			r"^class (\w+)\(proto\.Message\):\n(.*?)(?=^class |\Z)", text, re.M | re.S
		):
			fields: dict[str, str | None] = {}
			body = match.group(2)
			chunks = re.split(r"^    (?=[a-z_][a-z0-9_]*: )", body, flags=re.M)
			for chunk in chunks[1:]:
				name = chunk.split(":", 1)[0]
				head = re.split(r"\n    \)\n", chunk, maxsplit=1)[0]
				if "proto." not in head:
					continue
				ref = re.search(r'message=("?)([\w.]+)\1', head)
				fields[name] = ref.group(2) if ref else None
			messages[match.group(1)] = fields
		return messages, aliases

	def fields(self, module: str, message: str) -> dict[str, tuple[str, str] | None]:
		"""Field name to its message type ``(module, name)`` (None for scalars and enums)."""
		messages, aliases = self._module(module)
		if message not in messages:
			raise KeyError(f"{message} is not a message of {module}")
		out: dict[str, tuple[str, str] | None] = {}
		for name, ref in messages[message].items():
			if ref is None:
				out[name] = None
			elif "." in ref:
				alias, type_name = ref.split(".", 1)
				target = aliases.get(alias)
				out[name] = (target, type_name) if target and "." not in type_name else None
			else:
				out[name] = (module, ref)
		for name in self.extra.get(message, set()):
			out.setdefault(name, None)
		return out

	def problems(self, value: Any, module: str, message: str, where: str = "body") -> list[str]:
		"""How a body template disagrees with a message (keys are camelCase JSON names)."""
		if isinstance(value, list):
			return [
				p
				for i, v in enumerate(value)
				for p in self.problems(v, module, message, f"{where}[{i}]")
			]
		if not isinstance(value, dict):
			return []
		fields = self.fields(module, message)
		problems = []
		for key, inner in value.items():
			name = camel_to_snake(key)
			if name not in fields and f"{name}_" in fields:
				name += "_"  # proto-plus appends _ to Python names: OfflineUserDataJob.type_
			if name not in fields:
				problems.append(f"{where}.{key} is not a field of {message}")
			elif fields[name] is not None:
				sub_module, sub_message = fields[name]  # type: ignore[misc]
				problems += self.problems(inner, sub_module, sub_message, f"{where}.{key}")
		return problems

	def path_problems(self, path: str, module: str, message: str) -> list[str]:
		"""How a dotted response path (``candidates[].content.parts[].inlineData``) disagrees."""
		for step in path.split("."):
			name = camel_to_snake(step.removesuffix("[]"))
			fields = self.fields(module, message)
			if name not in fields:
				return [f"{path}: {step} is not a field of {message}"]
			target = fields[name]
			if target is None:
				return []
			module, message = target
		return []


def http_rule_problems(
	tool: HttpTool,
	integration: Integration,
	rule: tuple[str, str],
	*,
	rules: set[tuple[str, str]] | None = None,
	request: tuple[ProtoIndex, str, str] | None = None,
	body_field: str = "*",
) -> list[str]:
	"""How a tool disagrees with a ``google.api.http`` rule and its request message.

	Args:
		tool: The tool.
		integration: Its integration.
		rule: ``(METHOD, uri)`` of the RPC, e.g. ``("POST", "/v1beta/{model=models/*}:generateContent")``.
		rules: The rules the package declares; the rule must be one of them when given.
		request: ``(index, module, message)`` of the request message, to check body fields.
		body_field: The rule's ``body``: ``*`` (the whole request) or one field name.
	"""
	method, uri = rule
	problems = []
	if rules is not None and rule not in rules:
		problems.append(f"{method} {uri} is not a rule of the reference")
	if tool.method != method:
		problems.append(f"method {tool.method} but the reference says {method}")
	url = endpoint_shape(tool_url(tool, integration))
	path = re.sub(r"^https?://[^/]+", "", url)
	is_upload = path.startswith("/upload/")
	if is_upload:
		path = path.removeprefix("/upload")
		if tool.query_params.get("uploadType") not in {"multipart", "media", "resumable"}:
			problems.append("an upload URL needs uploadType multipart, media or resumable")
	if not _our_shape_regex(path).fullmatch(_rule_shape(uri)):
		problems.append(f"path {path} does not match {uri}")
	rule_vars = re.findall(r"\{([a-z_.]+)(?:=[^}]+)?\}", uri)
	our_vars = re.findall(r"\{\+?([^}]+)\}", path)
	for field, ours in zip(rule_vars, our_vars, strict=False):
		leaf = field.split(".")[-1]
		camel = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), leaf)
		if leaf == "name":
			continue  # a resource name: the tool may take it whole or build it from an id
		if ours != camel and not ours.lower().endswith(camel.lower()):
			problems.append(f"URL variable {ours} should be named for the reference's {field}")
	if len(rule_vars) != len(our_vars):
		problems.append(f"the URL has {len(our_vars)} variables, the reference {len(rule_vars)}")
	if request is not None:
		index, module, message = request
		body = tool.body
		if tool.request_format == "multipart-related" and isinstance(body, dict):
			body = body.get("metadata")
		if body_field != "*" and isinstance(body, dict):
			body = {body_field: body}
		if body is not None and method == "GET":
			problems.append("a GET rule takes no body")
		problems += index.problems(body, module, message)
		for name in tool.query_params:
			if name in {"alt", "uploadType", "key", "fields"}:
				continue
			if camel_to_snake(name) not in index.fields(module, message):
				problems.append(f"query parameter {name} is not a field of {message}")
	return problems


# pydantic models of an SDK (google-genai's Interactions API types) ----------------------------


def model_candidates(annotation: Any) -> list[type[Any]]:
	"""The pydantic model classes an annotation allows (through Optional, Union, List, Annotated).

	``Unknown*`` fallback models (open unions that accept anything) are left out, so that a name
	is accepted only when a real variant declares it.
	"""
	import typing

	from pydantic import BaseModel

	out: list[type[Any]] = []
	stack = [annotation]
	while stack:
		item = stack.pop()
		value = getattr(item, "__value__", None)  # typing_extensions.TypeAliasType
		if value is not None:
			stack.append(value)
			continue
		if isinstance(item, type) and issubclass(item, BaseModel):
			if not item.__name__.startswith("Unknown"):
				out.append(item)
			continue
		stack.extend(typing.get_args(item))
	return out


def _json_fields(model: type[Any]) -> dict[str, Any]:
	return {(f.alias or name): f.annotation for name, f in model.model_fields.items()}


def pydantic_problems(value: Any, annotation: Any, where: str = "body") -> list[str]:
	"""How a body template disagrees with SDK models: a key no allowed model declares.

	Template strings are not checked (their shape is the input's); a list checks each item; a
	dict must fit at least one model the annotation allows (the one with fewest problems is
	reported).
	"""
	if isinstance(value, list):
		return [
			p
			for i, v in enumerate(value)
			for p in pydantic_problems(v, annotation, f"{where}[{i}]")
		]
	if not isinstance(value, dict):
		return []
	candidates = model_candidates(annotation)
	if not candidates:
		return [f"{where} is an object but the reference allows none there"]
	best: list[str] | None = None
	for model in candidates:
		fields = _json_fields(model)
		problems = []
		for key, inner in value.items():
			if key not in fields:
				problems.append(f"{where}.{key} is not a field of {model.__name__}")
			else:
				problems += pydantic_problems(inner, fields[key], f"{where}.{key}")
		if not problems:
			return []
		if best is None or len(problems) < len(best):
			best = problems
	return best or []
