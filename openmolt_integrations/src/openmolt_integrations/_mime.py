"""Gmail's ``rfc2822`` Liquid filter: an email message built from the tool input.

Gmail's ``messages.send`` and ``drafts.create`` take the whole message as base64url RFC 2822
text (``raw``). The filter builds it with the standard library's `email` package, which folds
and encodes headers and bodies correctly, rather than with string templates.
"""

from __future__ import annotations

from collections.abc import Mapping
from email.errors import MessageError
from email.message import EmailMessage
from email.policy import SMTP
from typing import Any

from openmolt_core.errors import ToolError

__all__ = ["rfc2822"]

# 7bit: bodies get a quoted-printable or base64 transfer encoding and non-ASCII headers become
# RFC 2047 encoded words, so the message is pure ASCII whatever the text.
_MAIL_POLICY = SMTP.clone(cte_type="7bit")


def _addresses(value: Any) -> str:
	return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)


def rfc2822(value: Any) -> str:
	"""An RFC 2822 message from ``to``, ``subject``, ``body`` (and ``cc``, ``bcc``, ``html``...).

	Args:
		value: The tool input: ``from``, ``to``, ``cc``, ``bcc`` (a string or a list),
			``subject``, ``body`` (plain text), ``html`` (an HTML alternative), ``inReplyTo`` and
			``references`` (for replies).

	Raises:
		ToolError: The value is not an object, or the message cannot be built.
	"""
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
		return msg.as_bytes().decode("ascii")
	except (ValueError, TypeError, IndexError, MessageError) as exc:
		raise ToolError(f"could not build the email: {exc}") from None
