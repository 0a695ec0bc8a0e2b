"""S3 tools checked against botocore's S3 service model (method, requestUri, member locations)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlsplit

import botocore
import pytest

from openmolt_core.integrations import HttpTool
from openmolt_integrations import s3

MODEL: dict[str, Any] = json.loads(
	gzip.decompress(
		(Path(botocore.__file__).parent / "data/s3/2006-03-01/service-2.json.gz").read_bytes()
	)
)

OPERATIONS = {
	"listBuckets": "ListBuckets",
	"listObjects": "ListObjectsV2",
	"headObject": "HeadObject",
	"getObject": "GetObject",
	"putObject": "PutObject",
	"copyObject": "CopyObject",
	"deleteObject": "DeleteObject",
	"deleteObjects": "DeleteObjects",
	"headBucket": "HeadBucket",
	"createBucket": "CreateBucket",
	"deleteBucket": "DeleteBucket",
}
HTTP_TOOLS = {t.handle: t for t in s3.INTEGRATION.tools if isinstance(t, HttpTool)}
TRANSPORT_HEADERS = {"content-type"}  # the payload's media type, set for raw or XML bodies


def _members(shape_name: str | None, location: str) -> set[str]:
	if not shape_name:
		return set()
	members = MODEL["shapes"][shape_name]["members"].values()
	return {m["locationName"].lower() for m in members if m.get("location") == location}


def test_every_http_tool_maps_to_an_operation() -> None:
	"""Each S3 HTTP tool is listed against the botocore operation it implements."""
	assert set(HTTP_TOOLS) == set(OPERATIONS)
	assert MODEL["metadata"]["apiVersion"] == s3.INTEGRATION.api_version
	assert MODEL["metadata"]["auth"] == ["aws.auth#sigv4"]
	assert (
		MODEL["metadata"]["endpointPrefix"] == s3.INTEGRATION.credential_setup[0].params["service"]
	)


@pytest.mark.parametrize(("handle", "operation"), OPERATIONS.items(), ids=list(OPERATIONS))
def test_tool_matches_the_service_model(handle: str, operation: str) -> None:
	"""Method, URI shape, query names and header names agree with the service model."""
	tool = HTTP_TOOLS[handle]
	op = MODEL["operations"][operation]
	request_shape = op.get("input", {}).get("shape")
	output_shape = op.get("output", {}).get("shape")
	assert tool.method == op["http"]["method"]
	uri = urlsplit(op["http"]["requestUri"])
	literal_query = dict(parse_qsl(uri.query, keep_blank_values=True))
	base = tool.base_url or ""
	if "{Bucket}" in uri.path:
		assert "input.Bucket" in base, "the bucket is part of the base URL"
	else:
		assert "input.Bucket" not in base
	path, _, endpoint_query = tool.endpoint.partition("?")
	if "{Key+}" in uri.path:
		assert path == "/{{ input.Key | path_segments: exact: true }}"  # {Key+}: every slash kept
	else:
		assert path == "/"
	# A bare subresource (?delete) sits in the endpoint: query_params drop empty values.
	assert dict(parse_qsl(endpoint_query, keep_blank_values=True)) == {
		k: v for k, v in literal_query.items() if v == ""
	}
	query_names = _members(request_shape, "querystring") | set(literal_query)
	for name, value in tool.query_params.items():
		assert name.lower() in query_names, f"{handle}: query {name} not in {operation}"
		if name in literal_query:
			assert value == literal_query[name]
	for name, value in literal_query.items():
		if value:
			assert name in tool.query_params, f"{handle}: misses literal query {name}"
	header_names = _members(request_shape, "header") | TRANSPORT_HEADERS
	for name in tool.headers:
		assert name.lower() in header_names, f"{handle}: header {name} not in {operation}"
	# The header map (location "headers": Metadata -> x-amz-meta-) is what s3-object sends.
	if tool.request_format == "s3-object":
		assert "x-amz-meta-" in _members(request_shape, "headers"), handle
	out_headers = _members(output_shape, "header")
	out_prefixes = _members(output_shape, "headers")
	for name in tool.response_headers:
		if name.endswith("*"):
			assert name[:-1] in out_prefixes, f"{handle}: {name} not a header map of the output"
		else:
			assert name.lower() in out_headers, f"{handle}: response header {name} not in output"
	uses_body = tool.body is not None
	assert uses_body == (handle in {"putObject", "createBucket", "deleteObjects"})
	checksum_required = op.get("httpChecksum", {}).get("requestChecksumRequired", False)
	# The s3-xml format adds Content-MD5 (test_s3_xml_sends_the_content_md5_s3_requires).
	assert (tool.request_format == "s3-xml") == checksum_required, handle


def test_put_object_body_is_the_raw_payload() -> None:
	"""PutObject's Body is the blob payload, sent raw from a file reference."""
	shape = MODEL["shapes"]["PutObjectRequest"]
	assert shape["payload"] == "Body"
	tool = HTTP_TOOLS["putObject"]
	assert tool.request_format == "s3-object"
	assert tool.body == {"file": "{{ input.file }}", "metadata": "{{ input.Metadata }}"}


class _Store:
	"""Resolves one file reference, as the agent's file store would."""

	async def open(self, reference: str) -> Any:
		from openmolt_core.files import StoredFile

		assert reference == "openmolt-file:f1"
		return StoredFile(data=b"hello", media_type="text/plain", name="a.txt")


@pytest.mark.anyio
async def test_s3_object_sends_the_raw_file_and_metadata_headers() -> None:
	"""s3-object sends the file's bytes as the payload and Metadata as x-amz-meta-* headers."""
	from openmolt_core.integrations.extensions import EncodeRequest

	encode = s3.INTEGRATION.encoders["s3-object"]
	request = EncodeRequest(files={}, store=_Store())  # type: ignore[arg-type]
	body = {"file": "openmolt-file:f1", "metadata": {"author": "Ann", "n": 2}}
	encoded = await encode(body, request)
	assert encoded.content == b"hello"
	assert encoded.content_type == "text/plain"
	assert dict(encoded.headers) == {"x-amz-meta-author": "Ann", "x-amz-meta-n": "2"}
	plain = await encode({"file": "openmolt-file:f1"}, request)
	assert dict(plain.headers) == {}


@pytest.mark.anyio
async def test_s3_xml_sends_the_content_md5_s3_requires() -> None:
	"""s3-xml sends the XML with Content-MD5: the base64 of the body's MD5 digest."""
	import base64
	import hashlib

	from openmolt_core.integrations.extensions import EncodeRequest

	xml = "<Delete><Object><Key>a</Key></Object></Delete>"
	encoded = await s3.INTEGRATION.encoders["s3-xml"](xml, EncodeRequest(files={}, store=None))
	assert encoded.content == xml.encode()
	assert encoded.content_type == "application/xml"
	digest = base64.b64encode(hashlib.md5(xml.encode()).digest()).decode()
	assert dict(encoded.headers) == {"Content-MD5": digest}


def test_get_object_response_is_binary_and_list_objects_is_xml() -> None:
	"""GetObject's streaming Body becomes a file; ListObjectsV2 answers XML, parsed."""
	output = MODEL["shapes"]["GetObjectOutput"]
	assert output["payload"] == "Body"
	assert MODEL["shapes"][output["members"]["Body"]["shape"]]["type"] == "blob"
	assert HTTP_TOOLS["getObject"].response_format == "binary"
	assert MODEL["metadata"]["protocol"] == "rest-xml"
	assert (HTTP_TOOLS["listObjects"].response_format or "xml") == "xml"


def test_create_bucket_configuration_element_and_namespace() -> None:
	"""The CreateBucket XML body uses the payload's element name and XML namespace."""
	shape = MODEL["shapes"]["CreateBucketRequest"]
	payload = shape["members"][shape["payload"]]
	config_shape = MODEL["shapes"][payload["shape"]]
	body = HTTP_TOOLS["createBucket"].body
	assert f'<{payload["locationName"]} xmlns="{payload["xmlNamespace"]["uri"]}">' in body
	assert "LocationConstraint" in config_shape["members"]
	assert "<LocationConstraint>" in body


def test_delete_objects_body_follows_the_delete_shape() -> None:
	"""DeleteObjects' XML uses the payload's element, namespace and flattened Object members."""
	import liquid

	shape = MODEL["shapes"]["DeleteObjectsRequest"]
	payload = shape["members"][shape["payload"]]
	delete = MODEL["shapes"][payload["shape"]]
	objects = delete["members"]["Objects"]
	assert MODEL["shapes"][objects["shape"]]["flattened"] is True
	element = objects["locationName"]
	identifier = MODEL["shapes"][MODEL["shapes"][objects["shape"]]["member"]["shape"]]
	assert {"Key", "VersionId"} <= set(identifier["members"])
	assert "Quiet" in delete["members"]
	tool = HTTP_TOOLS["deleteObjects"]
	body = (
		liquid.Environment()
		.from_string(tool.body)
		.render(
			input={"Objects": [{"Key": "a&b.txt"}, {"Key": "c", "VersionId": "v1"}], "Quiet": True}
		)
	)
	assert body == (
		f'<{payload["locationName"]} xmlns="{payload["xmlNamespace"]["uri"]}">'
		f"<{element}><Key>a&amp;b.txt</Key></{element}>"
		f"<{element}><Key>c</Key><VersionId>v1</VersionId></{element}>"
		"<Quiet>true</Quiet></Delete>"
	)
	assert MODEL["operations"]["DeleteObjects"]["httpChecksum"]["requestChecksumRequired"]
	assert tool.request_format == "s3-xml"


def test_put_object_metadata_is_the_x_amz_meta_header_map() -> None:
	"""PutObject's Metadata member is the x-amz-meta- header map, and HeadObject returns it."""
	put = MODEL["shapes"]["PutObjectRequest"]["members"]["Metadata"]
	assert (put["location"], put["locationName"]) == ("headers", "x-amz-meta-")
	assert HTTP_TOOLS["putObject"].body["metadata"] == "{{ input.Metadata }}"
	head = MODEL["shapes"]["HeadObjectOutput"]["members"]["Metadata"]
	assert (head["location"], head["locationName"]) == ("headers", "x-amz-meta-")
	assert "x-amz-meta-*" in HTTP_TOOLS["headObject"].response_headers


def test_copy_source_header_names_bucket_and_key() -> None:
	"""x-amz-copy-source is /<bucket>/<encoded key>, optionally with ?versionId=."""
	template = HTTP_TOOLS["copyObject"].headers["x-amz-copy-source"]
	assert template.startswith(
		"/{{ input.CopySourceBucket }}/{{ input.CopySourceKey | path_segments: exact: true }}"
	)
	assert "versionId=" in template


def test_list_objects_pagination_matches_the_paginator() -> None:
	"""ListObjectsV2 pages with continuation-token → NextContinuationToken, as botocore pages."""
	pages = json.loads(
		(Path(botocore.__file__).parent / "data/s3/2006-03-01/paginators-1.json").read_text()
	)["pagination"]["ListObjectsV2"]
	assert pages["input_token"] == "ContinuationToken"
	assert pages["output_token"] == "NextContinuationToken"
	members = MODEL["shapes"]["ListObjectsV2Request"]["members"]
	assert members["ContinuationToken"]["locationName"] in HTTP_TOOLS["listObjects"].query_params
	assert "NextContinuationToken" in HTTP_TOOLS["listObjects"].description


def test_presigned_url_is_a_sigv4_query_signature() -> None:
	"""presignUrl signs in the query string with the botocore signer, for the object's URL."""
	config = {
		"accessKeyId": "AKIDEXAMPLE",
		"secretAccessKey": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
		"region": "eu-west-1",
	}
	url = s3.presign_url(config, bucket="reports", key="2026/q3 summary.pdf", expires_in=600)
	parts = urlsplit(url)
	assert parts.netloc == "reports.s3.eu-west-1.amazonaws.com"
	assert parts.path == "/2026/q3%20summary.pdf"
	query = parse_qs(parts.query)
	assert query["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"]
	assert query["X-Amz-Expires"] == ["600"]
	assert re.fullmatch(
		r"AKIDEXAMPLE/\d{8}/eu-west-1/s3/aws4_request", query["X-Amz-Credential"][0]
	)
	assert re.fullmatch(r"[0-9a-f]{64}", query["X-Amz-Signature"][0])


def test_object_url_styles() -> None:
	"""Virtual-hosted on AWS, path style when forced, bucket as subdomain of a custom endpoint."""
	assert s3.object_url({}, "b", "k") == "https://b.s3.us-east-1.amazonaws.com/k"
	assert (
		s3.object_url({"endpoint": "http://127.0.0.1:9000", "forcePathStyle": True}, "b", "a/b c")
		== "http://127.0.0.1:9000/b/a/b%20c"
	)
	assert (
		s3.object_url({"region": "auto", "forcePathStyle": "true"}, "b", "k")
		== "https://s3.auto.amazonaws.com/b/k"
	)
	assert (
		s3.object_url({"endpoint": "https://acc.r2.example"}, "b", "k")
		== "https://b.acc.r2.example/k"
	)


def test_presign_refuses_bad_input() -> None:
	"""Out-of-range expiry and missing keys are reported as tool errors the model can fix."""
	from openmolt_core.errors import ToolError

	with pytest.raises(ToolError, match="604800"):
		s3.presign_url(
			{"accessKeyId": "a", "secretAccessKey": "b"}, bucket="b", key="k", expires_in=0
		)
	with pytest.raises(ToolError, match="accessKeyId"):
		s3.presign_url({}, bucket="b", key="k")


@pytest.mark.parametrize(
	"config",
	[
		{},
		{"region": "eu-west-1"},
		{"endpoint": "http://127.0.0.1:9000", "forcePathStyle": True},
		{"region": "auto", "endpoint": "https://acc.r2.example", "forcePathStyle": True},
		{"endpoint": "https://acc.r2.example"},
	],
)
def test_base_url_templates_agree_with_object_url(config: dict[str, Any]) -> None:
	"""The Liquid base URLs the tools use give the same object URL as the presigner's."""
	import liquid

	env = liquid.Environment()
	template = HTTP_TOOLS["getObject"].base_url or ""
	base = env.from_string(template).render(input={"Bucket": "my-bucket"}, config=config)
	assert base + "/k" == s3.object_url(config, "my-bucket", "k")
	service = env.from_string(HTTP_TOOLS["listBuckets"].base_url or "").render(config=config)
	assert service == config.get(
		"endpoint", f"https://s3.{config.get('region', 'us-east-1')}.amazonaws.com"
	)


@pytest.mark.parametrize(
	"config",
	[
		{"region": "eu-west-1"},
		{"region": "us-east-1", "endpoint": "http://127.0.0.1:9000", "forcePathStyle": True},
	],
)
def test_presigned_url_equals_botocores_own(config: dict[str, Any]) -> None:
	"""Our presigned URL is the one botocore's S3 client generates for the same object."""
	import botocore.config
	import botocore.session

	creds = {
		"accessKeyId": "AKIDEXAMPLE",
		"secretAccessKey": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
	}
	style = "path" if config.get("forcePathStyle") else "virtual"
	client = botocore.session.get_session().create_client(
		"s3",
		region_name=config["region"],
		endpoint_url=config.get("endpoint") or f"https://s3.{config['region']}.amazonaws.com",
		aws_access_key_id=creds["accessKeyId"],
		aws_secret_access_key=creds["secretAccessKey"],
		config=botocore.config.Config(signature_version="s3v4", s3={"addressing_style": style}),
	)
	for _ in range(3):  # both must be signed within the same second
		theirs = client.generate_presigned_url(
			"get_object", Params={"Bucket": "reports", "Key": "a b/c.txt"}, ExpiresIn=900
		)
		ours = s3.presign_url(
			{**config, **creds}, bucket="reports", key="a b/c.txt", expires_in=900
		)
		if (
			parse_qs(urlsplit(theirs).query)["X-Amz-Date"]
			== parse_qs(urlsplit(ours).query)["X-Amz-Date"]
		):
			break
	assert urlsplit(ours)[:3] == urlsplit(theirs)[:3]
	assert parse_qs(urlsplit(ours).query) == parse_qs(urlsplit(theirs).query)


_EXACT = re.compile(r"^\{\{ input\.(\w+) \}\}$")
_JSON_TYPES = {"string": "string", "integer": "integer", "long": "integer", "boolean": "boolean"}
_JSON_TYPES |= {"map": "object"}


def _named_inputs(handle: str, operation: str) -> list[tuple[str, str]]:
	"""(input name, request member name) of every input the tool sends: uri, query, header, body."""
	tool = HTTP_TOOLS[handle]
	shape = MODEL["operations"][operation].get("input", {}).get("shape")
	members = MODEL["shapes"][shape]["members"] if shape else {}
	where = {
		(m.get("location"), m.get("locationName", name).lower()): name
		for name, m in members.items()
	}
	out = []
	for location, part in (("querystring", tool.query_params), ("header", tool.headers)):
		for key, value in part.items():
			match = _EXACT.match(value)
			if match:
				out.append((match.group(1), where[(location, key.lower())]))
	if isinstance(tool.body, dict) and "metadata" in tool.body:
		out.append((_EXACT.match(tool.body["metadata"]).group(1), "Metadata"))
	uri = MODEL["operations"][operation]["http"]["requestUri"]
	out += [(name, name) for name in ("Bucket", "Key") if name in re.findall(r"\{(\w+)\+?\}", uri)]
	return out


@pytest.mark.parametrize(("handle", "operation"), OPERATIONS.items(), ids=list(OPERATIONS))
def test_inputs_are_named_and_typed_as_the_request_members(handle: str, operation: str) -> None:
	"""Query inputs take the wire name (input_name: max-keys → max_keys); uri, header and body
	inputs take botocore's member name (Bucket, Key, ContentType, StorageClass, Metadata); each
	has the member's type and no enum value the member's enum lacks."""
	from openmolt_core.integrations.schema import input_name

	tool = HTTP_TOOLS[handle]
	props = tool.input_schema["properties"]
	members = MODEL["shapes"][MODEL["operations"][operation]["input"]["shape"]]["members"]
	for given, member in _named_inputs(handle, operation):
		spec = members[member]
		expected = (
			input_name(spec["locationName"]) if spec.get("location") == "querystring" else member
		)
		assert given == expected, f"{handle}: input {given!r} fills {member}; name it {expected!r}"
		shape = MODEL["shapes"][spec["shape"]]
		assert props[given]["type"] == _JSON_TYPES[shape["type"]], (handle, given)
		if "enum" in props[given]:
			assert set(props[given]["enum"]) <= set(shape["enum"]), (handle, given)
	assert {"Bucket"} <= set(props) or "{Bucket}" not in MODEL["operations"][operation]["http"][
		"requestUri"
	]


def test_composed_inputs_carry_the_member_names() -> None:
	"""Inputs sent inside XML or composed headers are named as botocore's members there."""
	delete = MODEL["shapes"]["Delete"]["members"]
	identifier = MODEL["shapes"]["ObjectIdentifier"]["members"]
	props = HTTP_TOOLS["deleteObjects"].input_schema["properties"]
	assert {"Objects", "Quiet"} <= set(delete) and {"Objects", "Quiet"} <= set(props)
	assert set(props["Objects"]["items"]["properties"]) <= set(identifier)
	config = MODEL["shapes"]["CreateBucketConfiguration"]["members"]
	assert "LocationConstraint" in config
	assert "LocationConstraint" in HTTP_TOOLS["createBucket"].input_schema["properties"]
	copy = HTTP_TOOLS["copyObject"].input_schema["properties"]
	assert "CopySource" in MODEL["shapes"]["CopyObjectRequest"]["members"]
	assert {"CopySourceBucket", "CopySourceKey", "CopySourceVersionId"} <= set(copy)
	presign = next(t for t in s3.INTEGRATION.tools if t.handle == "presignUrl")
	assert {"Bucket", "Key", "ContentType"} <= set(presign.input_schema["properties"])
	assert {"Bucket", "Key", "ContentType"} <= set(MODEL["shapes"]["PutObjectRequest"]["members"])


# Keys whose slashes are part of the name (a folder marker, a leading or doubled slash) and
# characters a URL would otherwise read as its own (?, #, %, +, space, non-ASCII).
ODD_KEYS = ["folder/", "/lead", "a//b", "reports/a b/ü?#%+&=.txt", "~tilde;,$@!"]


class _Sent(Exception):
	"""Raised with the request botocore was about to send, so nothing is sent."""

	def __init__(self, request: Any) -> None:
		super().__init__("captured")
		self.request = request


def _capture(request: Any, **_: Any) -> None:
	raise _Sent(request)


def _botocore_request(operation: str, params: dict[str, Any], config: dict[str, Any]) -> Any:
	"""The request botocore's S3 client sends for an operation (captured, never sent)."""
	import botocore.config
	import botocore.session

	style = "path" if config.get("forcePathStyle") else "virtual"
	client = botocore.session.get_session().create_client(
		"s3",
		region_name="eu-west-1",
		endpoint_url="https://s3.eu-west-1.amazonaws.com",
		aws_access_key_id="AKIDEXAMPLE",
		aws_secret_access_key="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
		config=botocore.config.Config(signature_version="s3v4", s3={"addressing_style": style}),
	)
	client.meta.events.register("before-send.s3.*", _capture)
	with pytest.raises(_Sent) as sent:
		getattr(client, operation)(**params)
	return sent.value.request


async def _our_request(handle: str, input: dict[str, Any], config: dict[str, Any]) -> Any:
	import httpx

	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, call_tool, finish

	seen: list[httpx.Request] = []

	def service(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(204)

	om = OpenMolt(http_client=httpx.AsyncClient(transport=httpx.MockTransport(service)))
	model = ScriptedModel([call_tool(f"s3.{handle}", **input), finish(done=True)])
	credential = {
		"accessKeyId": "AKIDEXAMPLE",
		"secretAccessKey": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
		"region": "eu-west-1",
		**config,
	}
	agent = om.create_agent(
		name="T",
		model=model,
		integrations=[{"integration": "s3", "credential": {"config": credential}}],
	)
	await agent.run()
	[request] = seen
	return request


@pytest.mark.anyio
@pytest.mark.parametrize("config", [{}, {"forcePathStyle": True}], ids=["virtual", "path"])
@pytest.mark.parametrize("key", ODD_KEYS)
async def test_an_object_key_reaches_the_object_botocore_names(
	key: str, config: dict[str, Any]
) -> None:
	"""Every slash of a key is kept and every other character encoded, as botocore sends it."""
	theirs = urlsplit(
		_botocore_request("delete_object", {"Bucket": "docs", "Key": key}, config).url
	)
	ours = await _our_request("deleteObject", {"Bucket": "docs", "Key": key}, config)
	# The SSRF guard connects to the address it checked; the Host header names the bucket's host.
	assert (ours.headers["host"], ours.url.raw_path.decode()) == (theirs.hostname, theirs.path)


@pytest.mark.anyio
@pytest.mark.parametrize("key", ODD_KEYS)
async def test_a_copy_source_names_the_key_botocore_names(key: str) -> None:
	"""x-amz-copy-source keeps the source key's slashes as botocore's CopyObject sends them."""
	source = {"Bucket": "src", "Key": key}
	theirs = _botocore_request(
		"copy_object", {"Bucket": "dst", "Key": "k", "CopySource": source}, {}
	)
	request = await _our_request(
		"copyObject",
		{"Bucket": "dst", "Key": "k", "CopySourceBucket": "src", "CopySourceKey": key},
		{},
	)
	assert (
		request.headers["x-amz-copy-source"] == "/" + theirs.headers["x-amz-copy-source"].decode()
	)


@pytest.mark.anyio
async def test_query_values_are_encoded_as_botocore_encodes_them() -> None:
	"""A space in a query value is %20 and '+' is %2B, as in botocore's request (SigV4 signs
	the query as RFC 3986 text: a form-style '+' for a space is another string to S3)."""
	params = {"Bucket": "docs", "Prefix": "my folder/a+b", "StartAfter": "x y"}
	theirs = urlsplit(_botocore_request("list_objects_v2", params, {}).url).query
	request = await _our_request(
		"listObjects", {"Bucket": "docs", "prefix": "my folder/a+b", "start_after": "x y"}, {}
	)
	ours = dict(pair.split("=", 1) for pair in request.url.query.decode().split("&"))
	expected = dict(pair.split("=", 1) for pair in theirs.split("&"))
	assert expected["prefix"] == "my%20folder%2Fa%2Bb"
	for name in ("prefix", "start-after"):
		assert ours[name] == expected[name], name
