"""Gmail's messages: the ``rfc2822`` Liquid filter and the ``gmail-message`` request format.

Gmail's ``messages.send`` and ``drafts.create`` take the whole message as base64url RFC 2822
text (``raw``). Both build it with the standard library's `email` package, which folds and
encodes headers and bodies correctly, rather than with string templates. The request format
also reads the input's ``attachments`` (file references) from the file store and adds each as
a part of a ``multipart/mixed`` message, which a Liquid filter cannot (it reads no files).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from email.errors import MessageError
from email.message import EmailMessage
from email.policy import SMTP
from typing import Any

from openmolt_core.errors import ToolError
from openmolt_core.files import StoredFile
from openmolt_core.integrations.extensions import EncodedBody, EncodeRequest

__all__ = ["MAX_ATTACHMENT_BYTES", "encode_message", "rfc2822"]

MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024
"""The most attachment bytes one message carries (Gmail's limit for attachments: 25 MB)."""

# 7bit: bodies get a quoted-printable or base64 transfer encoding and non-ASCII headers become
# RFC 2047 encoded words, so the message is pure ASCII whatever the text.
_MAIL_POLICY = SMTP.clone(cte_type="7bit")


def _addresses(value: Any) -> str:
	return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)


def _message(value: Any, attachments: Sequence[StoredFile] = ()) -> bytes:
	"""The message's RFC 2822 bytes (ASCII); a message that cannot be built is a `ToolError`."""
	if not isinstance(value, Mapping):
		raise ToolError("rfc2822 needs an object with to, subject and body")
	msg = EmailMessage(policy=_MAIL_POLICY)
	try:
		for key, header in (("from", "From"), ("to", "To"), ("cc", "Cc"), ("bcc", "Bcc")):
			if value.get(key):
				msg[header] = _addresses(value[key])
		msg["Subject"] = str(value.get("subject", ""))
		if value.get("inReplyTo"):
			msg["In-Reply-To"] = str(value["inReplyTo"])
		if value.get("references"):
			msg["References"] = _addresses(value["references"]).replace(",", "")
		msg.set_content(str(value.get("body", "")))
		if value.get("html"):
			msg.add_alternative(str(value["html"]), subtype="html")
		for n, stored in enumerate(attachments, 1):
			maintype, _, subtype = stored.media_type.partition("/")
			if not maintype or not subtype:
				maintype, subtype = "application", "octet-stream"
			msg.add_attachment(
				stored.data,
				maintype=maintype,
				subtype=subtype,
				filename=stored.name or f"attachment-{n}",
			)
		return msg.as_bytes()
	except (ValueError, TypeError, IndexError, MessageError) as exc:
		raise ToolError(f"could not build the email: {exc}") from None


def rfc2822(value: Any) -> str:
	"""An RFC 2822 message from ``to``, ``subject``, ``body`` (and ``cc``, ``bcc``, ``html``...).

	Args:
		value: The tool input: ``from``, ``to``, ``cc``, ``bcc`` (a string or a list),
			``subject``, ``body`` (plain text), ``html`` (an HTML alternative), ``inReplyTo`` and
			``references`` (for replies).

	Raises:
		ToolError: The value is not an object, or the message cannot be built.
	"""
	return _message(value).decode("ascii")


async def _raw(value: Mapping[str, Any], request: EncodeRequest) -> str:
	references = value.get("attachments") or []
	if not isinstance(references, list):
		raise ToolError("attachments must be a list of file references")
	files: list[StoredFile] = []
	total = 0
	for reference in references:
		stored = await request.open(reference, "attachment")
		total += len(stored.data)
		if total > MAX_ATTACHMENT_BYTES:
			raise ToolError(
				f"the attachments add up to more than {MAX_ATTACHMENT_BYTES // (1024 * 1024)} MB, "
				"Gmail's limit; share large files as links (e.g. Google Drive) instead"
			)
		files.append(stored)
	data = _message(value, files)
	# base64url without padding, as the ``base64url`` filter writes it for the rfc2822 filter.
	return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


async def encode_message(body: Any, request: EncodeRequest) -> EncodedBody:
	"""The ``gmail-message`` request format: a JSON body whose ``raw`` is built from the input.

	``raw`` (at the top, or in ``message`` for a draft) holds the tool input as an object
	(``"raw": "{{ input }}"``); it becomes the base64url RFC 2822 message, with each of the
	input's ``attachments`` (file references) read from the file store as a part.

	Args:
		body: The rendered body.
		request: The file store, for the attachments.

	Raises:
		ToolError: An attachment cannot be read, they exceed `MAX_ATTACHMENT_BYTES`, or the
			message cannot be built.
	"""
	if not isinstance(body, Mapping):
		raise ToolError("the gmail-message format needs an object body")
	out = dict(body)
	holder = out
	if isinstance(out.get("message"), Mapping):
		holder = out["message"] = dict(out["message"])
	if isinstance(holder.get("raw"), Mapping):
		holder["raw"] = await _raw(holder["raw"], request)
	content = json.dumps(out, separators=(",", ":"), ensure_ascii=False).encode()
	return EncodedBody(content, "application/json")
