"""Files a caller sends with its words, as the model's attachments (`openmolt_core.llm.Attachment`).

A2A's file parts and AG-UI's media parts carry a file's bytes (or an address). The bytes of a
type every provider takes (`ATTACHABLE`: images and PDFs, see the attachments guide) go to the
model with the run's input; a text file's bytes are its text; the server never fetches an
address (the agent's own tools may), so an address reaches the agent as a reference.
"""

from __future__ import annotations

import base64

from openmolt_core.llm import Attachment

__all__ = ["ATTACHABLE", "TEXTUAL", "attachment"]

ATTACHABLE: tuple[str, ...] = (
	"image/png",
	"image/jpeg",
	"image/gif",
	"image/webp",
	"application/pdf",
)
"""The media types sent to the model as attachments."""

TEXTUAL: tuple[str, ...] = ("text/plain", "application/json")
"""The media types whose bytes are read as text."""


def attachment(media_type: str, data: bytes, name: str | None = None) -> Attachment:
	"""An attachment of bytes whose media type is `ATTACHABLE`.

	Args:
		media_type: The file's media type.
		data: Its bytes.
		name: Its file name, if the caller gave one.
	"""
	encoded = base64.b64encode(data).decode("ascii")
	return Attachment(media_type=media_type, data=encoded, name=name or None)
