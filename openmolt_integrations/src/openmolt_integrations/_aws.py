"""What S3 adds to the engine: AWS Signature V4 as an auth, and its two body formats.

- ``aws_sigv4`` (`sigv4_auth`): signs every request with botocore's signer (the ``s3`` extra
  installs botocore). The credential is an `AuthCredential` whose ``params`` are templates over
  the config: ``access_key_id``, ``secret_access_key``, ``session_token`` (optional), ``region``
  and ``service``.
- ``s3-object`` (`object_body`): a PutObject body ``{"file": <file reference>, "metadata":
  {...}}``: the file's bytes, and each metadata entry as an ``x-amz-meta-<name>`` header.
- ``s3-xml`` (`xml_body`): an XML text body with the ``Content-MD5`` header that S3's
  DeleteObjects and other multi-object writes require.

Signature V4 is botocore's: AWS's own implementation, kept current by AWS, where a hand-written
signer would have to track every S3 canonicalization rule.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Generator, Mapping
from typing import Any

import httpx

from openmolt_core.errors import IntegrationError, ToolError
from openmolt_core.integrations import AuthCredential
from openmolt_core.integrations.credentials import render_value
from openmolt_core.integrations.extensions import EncodedBody, EncodeRequest, checked_media_type

__all__ = ["AUTHS", "AwsSigV4Auth", "object_body", "sigv4_auth", "sigv4_credential", "xml_body"]

_UNSIGNED = frozenset({"connection", "accept-encoding", "user-agent", "accept", "expect"})


class AwsSigV4Auth(httpx.Auth):
	"""AWS Signature V4 on every request (S3's variant when ``service`` is ``s3``).

	Args:
		credential: The ``aws_sigv4`` credential (its ``params`` are templates over the config).
		config: The agent's credential config.
		iid: The integration id, for messages.

	Raises:
		IntegrationError: botocore is not installed.
	"""

	requires_request_body = True

	def __init__(self, credential: Any, config: Mapping[str, Any], iid: str) -> None:
		try:
			# botocore ships no type information.
			from botocore.auth import S3SigV4Auth, SigV4Auth  # type: ignore[import-untyped]
			from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]
			from botocore.credentials import Credentials  # type: ignore[import-untyped]
		except ImportError as exc:
			from openmolt_core._hints import install_command

			raise IntegrationError(
				f"the aws_sigv4 credential needs botocore; run: {install_command('openmolt[s3]')}",
				integration=iid,
			) from exc
		self._classes = (S3SigV4Auth, SigV4Auth, AWSRequest, Credentials)
		self.credential = credential
		self.params: dict[str, str] = dict(credential.params)
		self.config = dict(config)
		self.iid = iid

	def _param(self, name: str, *, quiet: bool = False) -> str:
		template = self.params.get(name)
		return render_value(template, self.config, quiet=quiet) if template else ""

	def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
		"""Sign the request; only ``Authorization`` and ``x-amz-*`` headers are added.

		A space in the query is sent as ``%20`` (not ``+``), the text SigV4 signs.
		"""
		s3_auth, v4_auth, aws_request, credentials = self._classes
		key, secret = self._param("access_key_id"), self._param("secret_access_key")
		if not key or not secret:
			raise ToolError(f"{self.iid}: the AWS access key id and secret must be configured")
		session = self._param("session_token")
		region = self._param("region") or "us-east-1"
		service = self._param("service") or "s3"
		if b"+" in request.url.query:
			# SigV4 signs the query as RFC 3986 text: a space is %20, as botocore sends it. The
			# engine writes a space as '+' (a literal '+' is always %2B), which S3 reads as
			# another string than the one signed.
			request.url = request.url.copy_with(query=request.url.query.replace(b"+", b"%20"))
		headers = {k: v for k, v in request.headers.items() if k.lower() not in _UNSIGNED}
		aws = aws_request(
			method=request.method, url=str(request.url), data=request.content, headers=headers
		)
		signer = (s3_auth if service == "s3" else v4_auth)(
			credentials(key, secret, session or None), service, region
		)
		signer.add_auth(aws)
		for name, value in aws.headers.items():
			if name.lower() == "authorization" or name.lower().startswith("x-amz-"):
				request.headers[name] = value
		yield request

	def secrets(self) -> set[str]:
		"""The secret values, for redaction; never raises."""
		values = (
			self._param("secret_access_key", quiet=True),
			self._param("session_token", quiet=True),
		)
		return {v for v in values if len(v) >= 6}


def sigv4_auth(
	credential: Any,
	config: Mapping[str, Any],
	iid: str,
	*,
	on_token_refresh: Callable[[dict[str, Any]], Any] | None,
	http: Callable[[], httpx.AsyncClient],
) -> httpx.Auth:
	"""The ``aws_sigv4`` `openmolt_core.integrations.extensions.AuthFactory`.

	Args:
		credential: The credential.
		config: The agent's credential config.
		iid: The integration id.
		on_token_refresh: Unused (AWS keys are not refreshed).
		http: Unused.

	Raises:
		IntegrationError: botocore is not installed.
	"""
	return AwsSigV4Auth(credential, config, iid)


AUTHS = {"aws_sigv4": sigv4_auth}
"""The ``auths`` of an integration that signs with AWS Signature V4."""


def sigv4_credential(
	service: str = "s3", region: str = '{{ config.region | default: "us-east-1" }}'
) -> AuthCredential:
	"""The ``aws_sigv4`` credential, reading the keys from the config.

	``config.accessKeyId`` and ``config.secretAccessKey``, and ``config.sessionToken`` for
	temporary credentials.

	Args:
		service: The AWS service name signed for (``s3``, ``execute-api``).
		region: The region, a template over the config.
	"""
	return AuthCredential(
		type="aws_sigv4",
		params={
			"access_key_id": "{{ config.accessKeyId }}",
			"secret_access_key": "{{ config.secretAccessKey }}",
			"session_token": "{{ config.sessionToken }}",
			"region": region,
			"service": service,
		},
		secret_params=["secret_access_key", "session_token"],
		optional_params=["session_token", "region", "service"],
	)


async def object_body(body: Any, request: EncodeRequest) -> EncodedBody:
	"""``s3-object``: a file's bytes, and ``metadata`` as ``x-amz-meta-*`` headers.

	Args:
		body: ``{"file": <file reference>, "metadata": {name: text}}`` (metadata optional).
		request: The file store.

	Raises:
		ToolError: The file cannot be read, or a metadata value is not text.
	"""
	if not isinstance(body, Mapping) or "file" not in body:
		raise ToolError('an s3-object body needs {"file": <file reference>}')
	stored = await request.open(body["file"], "the file")
	headers: dict[str, str] = {}
	metadata = body.get("metadata")
	if metadata not in (None, ""):
		if not isinstance(metadata, Mapping):
			raise ToolError(
				f"metadata needs an object of names to values, got {type(metadata).__name__}"
			)
		for key, value in metadata.items():
			if value is None:
				continue
			if isinstance(value, (Mapping, list, tuple)):
				raise ToolError(f"metadata {key!r} needs a text value, not a list or object")
			headers[f"x-amz-meta-{key}"] = str(value)
	return EncodedBody(stored.data, checked_media_type(stored), headers)


async def xml_body(body: Any, request: EncodeRequest) -> EncodedBody:
	"""``s3-xml``: an XML text body with its ``Content-MD5`` (base64 of the MD5 digest).

	Args:
		body: The rendered XML text.
		request: Unused.

	Raises:
		ToolError: The body is not text.
	"""
	if not isinstance(body, str):
		raise ToolError("an s3-xml body must render to XML text")
	content = body.encode()
	digest = hashlib.md5(content, usedforsecurity=False).digest()
	md5 = base64.b64encode(digest).decode("ascii")
	return EncodedBody(content, "application/xml", {"Content-MD5": md5})
