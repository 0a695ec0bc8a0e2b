"""Amazon S3 and S3-compatible stores (MinIO, Cloudflare R2, ...), signed with AWS SigV4.

Targets the S3 REST API version ``2006-03-01`` (botocore's S3 service model, which the tests check
every tool against).

Requests are signed per request by the ``aws_sigv4`` auth this integration registers
(`openmolt_integrations._aws`, with its ``s3-object`` and ``s3-xml`` body formats). The bucket is part of the
base URL: virtual-hosted style on AWS (``https://<bucket>.s3.<region>.amazonaws.com``), path style
(``<endpoint>/<bucket>``) when ``config.forcePathStyle`` is true, which MinIO and most
self-hosted stores need. ``config.endpoint`` points the tools at another S3-compatible service.
Presigned URLs are computed locally with botocore's signer (the ``s3`` extra installs it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from openmolt_core import hookimpl
from openmolt_core.errors import ToolError
from openmolt_core.integrations import (
	ApiSetup,
	FunctionTool,
	HttpTool,
	Integration,
)
from openmolt_core.integrations.schema import obj, passthrough
from openmolt_integrations._aws import AUTHS, object_body, sigv4_credential, xml_body

if TYPE_CHECKING:
	from collections.abc import Mapping

	from openmolt_core.plugins import IntegrationRegistrar
	from openmolt_core.tools import ToolContext

__all__ = ["INTEGRATION", "object_url", "presign_url", "register_integrations"]

_REGION = '{{ config.region | default: "us-east-1" }}'
_SERVICE_URL = (
	"{% if config.endpoint %}{{ config.endpoint }}"
	"{% else %}https://s3." + _REGION + ".amazonaws.com{% endif %}"
)
_BUCKET_URL = (
	"{% if config.forcePathStyle %}" + _SERVICE_URL + "/{{ input.Bucket }}"
	'{% elsif config.endpoint %}{% assign vhost = "://" | append: input.Bucket | append: "." %}'
	'{{ config.endpoint | replace_first: "://", vhost }}'
	"{% else %}https://{{ input.Bucket }}.s3." + _REGION + ".amazonaws.com{% endif %}"
)
# The bucket is part of the host (virtual-hosted style): the origins the input may choose.
_BUCKET_ORIGINS = [
	_SERVICE_URL,
	"{% if config.endpoint %}{{ config.endpoint | replace_first: '://', '://*.' }}"
	"{% else %}https://*.s3." + _REGION + ".amazonaws.com{% endif %}",
]
_KEY_PATH = "/{{ input.Key | path_segments: exact: true }}"

_BUCKET = {
	"type": "string",
	"pattern": "^[A-Za-z0-9][A-Za-z0-9._-]{1,254}$",
	"description": "The bucket name (lowercase letters, digits, dots and hyphens).",
}
_KEY = {
	"type": "string",
	"minLength": 1,
	"description": 'The object key, slashes allowed ("reports/2026/q3.pdf").',
}
_VERSION_ID = {
	"type": "string",
	"description": "A specific object version (versioned buckets only).",
}
_STORAGE_CLASS = {
	"type": "string",
	"enum": [
		"STANDARD",
		"REDUCED_REDUNDANCY",
		"STANDARD_IA",
		"ONEZONE_IA",
		"INTELLIGENT_TIERING",
		"GLACIER",
		"DEEP_ARCHIVE",
		"GLACIER_IR",
	],
	"description": "Storage class of the new object (AWS only; default STANDARD).",
}
_METADATA = {
	"type": "object",
	"additionalProperties": {"type": "string"},
	"description": (
		'User metadata stored with the object, sent as x-amz-meta-<name> headers ({"author": '
		'"Ana"}). Names are letters, digits and hyphens, stored lowercase; values are ASCII; '
		"2 KB in all."
	),
}
_XMLNS = "http://s3.amazonaws.com/doc/2006-03-01/"
_DELETE_BODY = (
	f'<Delete xmlns="{_XMLNS}">'
	"{% for object in input.Objects %}<Object><Key>{{ object.Key | escape }}</Key>"
	"{% if object.VersionId %}<VersionId>{{ object.VersionId | escape }}</VersionId>{% endif %}"
	"</Object>{% endfor %}"
	"{% if input.Quiet %}<Quiet>true</Quiet>{% endif %}</Delete>"
)
_OBJECT_HEADERS = [
	"Content-Type",
	"Content-Length",
	"ETag",
	"Last-Modified",
	"Cache-Control",
	"Content-Disposition",
	"x-amz-version-id",
	"x-amz-storage-class",
	"x-amz-server-side-encryption",
	"x-amz-meta-*",
]


TOOLS: list[HttpTool | FunctionTool] = [
	HttpTool(
		handle="listBuckets",
		description="List the buckets of the account (name and creation date).",
		scopes=["read"],
		method="GET",
		base_url=_SERVICE_URL,
		endpoint="/",
		query_params={
			**passthrough("prefix"),
			"max-buckets": "{{ input.max_buckets }}",
			"continuation-token": "{{ input.continuation_token }}",
		},
		input_schema={
			"type": "object",
			"properties": {
				"max_buckets": {
					"type": "integer",
					"minimum": 1,
					"maximum": 10000,
					"description": "Maximum number of buckets to return.",
				},
				"continuation_token": {
					"type": "string",
					"description": "ContinuationToken of the previous page.",
				},
				"prefix": {"type": "string", "description": "Only buckets whose name starts so."},
			},
			"additionalProperties": False,
		},
	),
	HttpTool(
		handle="listObjects",
		description=(
			"List objects in a bucket (ListObjectsV2), up to 1000 per page. With a delimiter "
			'("/") folders come back as CommonPrefixes. When IsTruncated is true, pass '
			"NextContinuationToken as continuation_token."
		),
		scopes=["read"],
		method="GET",
		base_url=_BUCKET_URL,
		endpoint="/",
		query_params={
			**passthrough("prefix", "delimiter"),
			"list-type": "2",
			"max-keys": "{{ input.max_keys }}",
			"continuation-token": "{{ input.continuation_token }}",
			"start-after": "{{ input.start_after }}",
		},
		response_format="xml",
		input_schema=obj(
			{
				"Bucket": _BUCKET,
				"prefix": {
					"type": "string",
					"description": 'Only keys starting with this ("reports/2026/").',
				},
				"delimiter": {
					"type": "string",
					"description": 'Group keys by this character, usually "/", to list one level.',
				},
				"max_keys": {
					"type": "integer",
					"minimum": 1,
					"maximum": 1000,
					"description": "Maximum number of keys (default 1000).",
				},
				"continuation_token": {
					"type": "string",
					"description": "NextContinuationToken of the previous page.",
				},
				"start_after": {
					"type": "string",
					"description": "Start listing after this key.",
				},
			},
			["Bucket"],
			closed=True,
		),
	),
	HttpTool(
		handle="headObject",
		description="Get an object's metadata (size, type, ETag, dates) without downloading it.",
		scopes=["read"],
		method="HEAD",
		base_url=_BUCKET_URL,
		endpoint=_KEY_PATH,
		query_params=passthrough("versionId"),
		response_headers=_OBJECT_HEADERS,
		input_schema=obj(
			{"Bucket": _BUCKET, "Key": _KEY, "versionId": _VERSION_ID},
			["Bucket", "Key"],
			closed=True,
		),
	),
	HttpTool(
		handle="getObject",
		description=(
			"Download an object. The bytes are saved as a file reference (never shown inline); "
			"its type, size and ETag come back with it."
		),
		scopes=["read"],
		method="GET",
		base_url=_BUCKET_URL,
		endpoint=_KEY_PATH,
		query_params=passthrough("versionId"),
		headers={**passthrough("Range"), "If-None-Match": "{{ input.IfNoneMatch }}"},
		response_format="binary",
		response_headers=[*_OBJECT_HEADERS, "Content-Range"],
		input_schema=obj(
			{
				"Bucket": _BUCKET,
				"Key": _KEY,
				"versionId": _VERSION_ID,
				"Range": {
					"type": "string",
					"description": 'Only part of the object, as an HTTP range ("bytes=0-1023").',
				},
				"IfNoneMatch": {
					"type": "string",
					"description": "Only download if the ETag differs from this one.",
				},
			},
			["Bucket", "Key"],
			closed=True,
		),
	),
	HttpTool(
		handle="putObject",
		description="Upload a file as an object (up to 5 GB), replacing any object at the key.",
		scopes=["write"],
		method="PUT",
		base_url=_BUCKET_URL,
		endpoint=_KEY_PATH,
		request_format="s3-object",
		# The s3-object encoder's body: the file, and metadata it sends as x-amz-meta-* headers.
		body={"file": "{{ input.file }}", "metadata": "{{ input.Metadata }}"},
		headers={
			"Content-Type": "{{ input.ContentType }}",
			"Cache-Control": "{{ input.CacheControl }}",
			"Content-Disposition": "{{ input.ContentDisposition }}",
			"x-amz-storage-class": "{{ input.StorageClass }}",
		},
		response_headers=["ETag", "x-amz-version-id"],
		input_schema=obj(
			{
				"Bucket": _BUCKET,
				"Key": _KEY,
				"file": {
					"type": "string",
					"description": (
						"The content as a file reference: openmolt-file:<id> from an earlier "
						"tool, a data: URL, or a path from the fileSystem integration."
					),
				},
				"ContentType": {
					"type": "string",
					"description": 'Media type to store ("image/png"); default: the file\'s type.',
				},
				"CacheControl": {
					"type": "string",
					"description": 'Cache-Control to serve the object with ("max-age=3600").',
				},
				"ContentDisposition": {
					"type": "string",
					"description": 'Content-Disposition to serve it with ("attachment").',
				},
				"StorageClass": _STORAGE_CLASS,
				"Metadata": _METADATA,
			},
			["Bucket", "Key", "file"],
			closed=True,
		),
	),
	HttpTool(
		handle="copyObject",
		description="Copy an object (up to 5 GB) to another key or bucket on the server side.",
		scopes=["write"],
		method="PUT",
		base_url=_BUCKET_URL,
		endpoint=_KEY_PATH,
		headers={
			"x-amz-copy-source": (
				"/{{ input.CopySourceBucket }}/{{ input.CopySourceKey | path_segments: exact: true }}"
				"{% if input.CopySourceVersionId %}?versionId={{ input.CopySourceVersionId | url_encode }}"
				"{% endif %}"
			),
			"x-amz-storage-class": "{{ input.StorageClass }}",
		},
		response_format="xml",
		input_schema=obj(
			{
				"Bucket": {**_BUCKET, "description": "The destination bucket."},
				"Key": {**_KEY, "description": "The destination key."},
				"CopySourceBucket": {**_BUCKET, "description": "The bucket to copy from."},
				"CopySourceKey": {**_KEY, "description": "The key to copy from."},
				"CopySourceVersionId": {
					**_VERSION_ID,
					"description": "The source version to copy.",
				},
				"StorageClass": _STORAGE_CLASS,
			},
			["Bucket", "Key", "CopySourceBucket", "CopySourceKey"],
			closed=True,
		),
	),
	HttpTool(
		handle="deleteObject",
		description="Delete an object (in a versioned bucket this adds a delete marker).",
		scopes=["delete"],
		method="DELETE",
		base_url=_BUCKET_URL,
		endpoint=_KEY_PATH,
		query_params=passthrough("versionId"),
		response_headers=["x-amz-delete-marker", "x-amz-version-id"],
		input_schema=obj(
			{
				"Bucket": _BUCKET,
				"Key": _KEY,
				"versionId": {**_VERSION_ID, "description": "Delete this version for good."},
			},
			["Bucket", "Key"],
			closed=True,
		),
	),
	HttpTool(
		handle="deleteObjects",
		description=(
			"Delete up to 1000 objects of a bucket in one request. Returns the Deleted keys and "
			"the Errors (per key, e.g. AccessDenied); with quiet only the errors."
		),
		scopes=["delete"],
		method="POST",
		base_url=_BUCKET_URL,
		endpoint="/?delete",
		request_format="s3-xml",
		body=_DELETE_BODY,
		input_schema=obj(
			{
				"Bucket": _BUCKET,
				"Objects": {
					"type": "array",
					"minItems": 1,
					"maxItems": 1000,
					"description": "The objects to delete.",
					"items": {
						"type": "object",
						"properties": {
							"Key": _KEY,
							"VersionId": {
								**_VERSION_ID,
								"description": "Delete this version for good.",
							},
						},
						"required": ["Key"],
						"additionalProperties": False,
					},
				},
				"Quiet": {
					"type": "boolean",
					"default": False,
					"description": "Report only the keys that failed, not every deleted one.",
				},
			},
			["Bucket", "Objects"],
			closed=True,
		),
	),
	HttpTool(
		handle="headBucket",
		description="Check that a bucket exists and is accessible; returns its region.",
		scopes=["read"],
		method="HEAD",
		base_url=_BUCKET_URL,
		endpoint="/",
		response_headers=["x-amz-bucket-region"],
		input_schema=obj({"Bucket": _BUCKET}, ["Bucket"], closed=True),
	),
	HttpTool(
		handle="createBucket",
		description="Create a bucket. Outside us-east-1 give the region as LocationConstraint.",
		scopes=["buckets"],
		method="PUT",
		base_url=_BUCKET_URL,
		endpoint="/",
		request_format="text",
		headers={"Content-Type": "application/xml"},
		body=(
			"{% if input.LocationConstraint %}"
			f'<CreateBucketConfiguration xmlns="{_XMLNS}">'
			"<LocationConstraint>{{ input.LocationConstraint | escape }}</LocationConstraint>"
			"</CreateBucketConfiguration>{% endif %}"
		),
		response_headers=["Location"],
		input_schema=obj(
			{
				"Bucket": {
					**_BUCKET,
					"pattern": "^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$",
					"description": "The new bucket's name: 3-63 lowercase letters, digits, dots, hyphens.",
				},
				"LocationConstraint": {
					"type": "string",
					"description": 'The region to create it in ("eu-west-1"); omit for us-east-1.',
				},
			},
			["Bucket"],
			closed=True,
		),
	),
	HttpTool(
		handle="deleteBucket",
		description="Delete an empty bucket.",
		scopes=["buckets"],
		method="DELETE",
		base_url=_BUCKET_URL,
		endpoint="/",
		input_schema=obj({"Bucket": _BUCKET}, ["Bucket"], closed=True),
	),
]


def _truthy(value: Any) -> bool:
	if isinstance(value, str):
		return value.strip().lower() in {"1", "true", "yes", "on"}
	return bool(value)


def object_url(config: Mapping[str, Any], bucket: str, key: str) -> str:
	"""The URL of an object, built the same way as the tools' base URLs.

	Args:
		config: The credential config (``region``, ``endpoint``, ``forcePathStyle``).
		bucket: The bucket name.
		key: The object key; each ``/``-separated segment is URL-encoded.
	"""
	region = config.get("region") or "us-east-1"
	endpoint = str(config.get("endpoint") or "")
	path = "/" + "/".join(quote(part, safe="") for part in key.split("/"))
	if _truthy(config.get("forcePathStyle")):
		service = endpoint or f"https://s3.{region}.amazonaws.com"
		return f"{service}/{bucket}{path}"
	if endpoint:
		return endpoint.replace("://", f"://{bucket}.", 1) + path
	return f"https://{bucket}.s3.{region}.amazonaws.com{path}"


def presign_url(
	config: Mapping[str, Any],
	*,
	bucket: str,
	key: str,
	method: str = "GET",
	expires_in: int = 3600,
	content_type: str | None = None,
) -> str:
	"""Return a SigV4 presigned URL for an object (query-string signing, done locally).

	Args:
		config: The credential config: ``accessKeyId``, ``secretAccessKey``, optional
			``sessionToken``, ``region``, ``endpoint`` and ``forcePathStyle``.
		bucket: The bucket name.
		key: The object key.
		method: ``GET`` to download, ``PUT`` to upload, ``HEAD`` or ``DELETE``.
		expires_in: Seconds the URL stays valid (1 to 604800, i.e. 7 days).
		content_type: For ``PUT``: the Content-Type the uploader must send.

	Raises:
		ToolError: botocore is not installed, the credentials are missing, or an argument is
			out of range.
	"""
	try:
		# botocore ships no type information
		from botocore.auth import S3SigV4QueryAuth  # type: ignore[import-untyped]
		from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]
		from botocore.credentials import Credentials  # type: ignore[import-untyped]
	except ImportError as exc:
		from openmolt_core._hints import install_command

		raise ToolError(
			"presigning needs botocore, which is not installed; run: "
			f"{install_command('openmolt[s3]')}",
			tool="presignUrl",
		) from exc
	if not 1 <= expires_in <= 604800:
		raise ToolError(
			f"ExpiresIn must be between 1 and 604800 seconds (7 days), got {expires_in}",
			tool="presignUrl",
		)
	access_key = config.get("accessKeyId")
	secret_key = config.get("secretAccessKey")
	if not access_key or not secret_key:
		raise ToolError(
			"the s3 credential config needs accessKeyId and secretAccessKey to presign URLs",
			tool="presignUrl",
		)
	credentials = Credentials(access_key, secret_key, config.get("sessionToken") or None)
	region = config.get("region") or "us-east-1"
	signer = S3SigV4QueryAuth(credentials, "s3", region, expires=expires_in)
	headers = {"Content-Type": content_type} if content_type else {}
	request = AWSRequest(method=method, url=object_url(config, bucket, key), headers=headers)
	signer.add_auth(request)
	return str(request.url)


def _presign(input: dict[str, Any], context: ToolContext) -> dict[str, Any]:
	expires = int(input.get("ExpiresIn", 3600))
	method = input.get("HttpMethod", "GET")
	url = presign_url(
		context.config,
		bucket=input["Bucket"],
		key=input["Key"],
		method=method,
		expires_in=expires,
		content_type=input.get("ContentType"),
	)
	out: dict[str, Any] = {"url": url, "method": method, "expiresIn": expires}
	if input.get("ContentType"):
		out["headers"] = {"Content-Type": input["ContentType"]}
	return out


TOOLS.append(
	FunctionTool(
		handle="presignUrl",
		description=(
			"Make a presigned URL that lets anyone download (GET) or upload (PUT) one object "
			"without credentials, until it expires. Computed locally; nothing is sent to S3."
		),
		function=_presign,
		scopes=["presign"],
		input_schema=obj(
			{
				"Bucket": _BUCKET,
				"Key": _KEY,
				"HttpMethod": {
					"type": "string",
					"enum": ["GET", "PUT", "HEAD", "DELETE"],
					"default": "GET",
					"description": "GET to share a download, PUT to let someone upload.",
				},
				"ExpiresIn": {
					"type": "integer",
					"minimum": 1,
					"maximum": 604800,
					"default": 3600,
					"description": "Seconds the URL stays valid (at most 7 days).",
				},
				"ContentType": {
					"type": "string",
					"description": "For PUT: the Content-Type the uploader must send.",
				},
			},
			["Bucket", "Key"],
			closed=True,
		),
		output_schema={
			"type": "object",
			"properties": {
				"url": {"type": "string"},
				"method": {"type": "string"},
				"expiresIn": {"type": "integer"},
				"headers": {"type": "object"},
			},
		},
	)
)

DOCS = """\
## Get a token

**AWS.** In the IAM console create a user (or role) for the agent, attach a policy limited to the
buckets it needs (`s3:ListAllMyBuckets`, `s3:ListBucket`, `s3:GetObject`, `s3:PutObject`,
`s3:DeleteObject`...), then under **Security credentials** create an access key. Pass
`accessKeyId`, `secretAccessKey` and `region` (plus `sessionToken` for temporary credentials).

**Cloudflare R2.** R2 → **Manage API tokens** → create a token with Object Read & Write. Set
`endpoint` to `https://<account_id>.r2.cloudflarestorage.com`, `region` to `auto` and
`forcePathStyle` to true.

**MinIO** (or another S3-compatible store): an access key from its console, `endpoint` set to
the server URL (no trailing slash, e.g. `http://127.0.0.1:9000`), `region` set to `us-east-1` and
`forcePathStyle` to true.

```python
om = OpenMolt(integrations={"s3": {
    "accessKeyId": "AKIA...", "secretAccessKey": "...", "region": "eu-west-1",
}})
agent = om.create_agent(name="Archivist", model="openai:gpt-5-mini",
                        integrations=[{"integration": "s3", "scopes": ["read", "presign"]}])
```

Responses in XML (listObjects, copyObject, deleteObjects) come back parsed; downloads are saved
as files. `putObject` stores user metadata (the input `Metadata`, e.g. `{"author": "Ana"}`, becomes the
header `x-amz-meta-author`), and `headObject`/`getObject` return it under `headers`. `deleteObjects`
removes up to 1000 keys at once (OpenMolt adds the `Content-MD5` header S3 requires).
Presigned URLs need botocore: `pip install 'openmolt[s3]'`.
"""

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"listBuckets": [],
		"putObject": [],
		"copyObject": [],
		"deleteObject": [],
		"deleteObjects": [],
		"headBucket": [],
		"createBucket": [],
		"deleteBucket": [],
		"listObjects": ["private"],
		"headObject": ["private"],
		# An object's bytes: an upload of anyone the bucket takes them from, or of a tainted run.
		"getObject": ["private", "untrusted"],
		"presignUrl": ["outbound"],
	},
	id="s3",
	name="Amazon S3",
	description="Buckets and objects on Amazon S3 or any S3-compatible store (MinIO, R2).",
	api_version="2006-03-01",
	api_setup=ApiSetup(base_url=_SERVICE_URL, response_format="xml", input_origins=_BUCKET_ORIGINS),
	credential_setup=[
		sigv4_credential("s3", _REGION),
	],
	auths=AUTHS,
	encoders={"s3-object": object_body, "s3-xml": xml_body},
	scopes={
		"read": "List buckets and objects, read object metadata and download objects.",
		"write": "Upload and copy objects.",
		"delete": "Delete objects.",
		"buckets": "Create and delete buckets.",
		"presign": "Make presigned URLs that grant access to one object without credentials.",
	},
	tools=TOOLS,
	docs=DOCS,
)


@hookimpl
def register_integrations(register: IntegrationRegistrar) -> None:
	"""Register the S3 integration."""
	register(INTEGRATION, id="s3")
