"""Which attachments each API takes, so one it cannot read fails before the request is sent.

An attachment an API does not take was sent anyway and refused with a 400 that read "check
model_config and provider_options"; now the error names the file's media type and what the API
takes, and is not retried (a fallback model that reads it may answer instead). From the vendors'
pages: OpenAI's images guide (PNG, JPEG, WEBP, non-animated GIF; up to 50 MB of images per
request) and file inputs (PDF), and Chat Completions' ``input_audio`` (WAV and MP3; the
Responses API takes no audio); Anthropic's vision and PDF support pages (JPEG, PNG, GIF, WEBP
images of at most 5 MB each; PDF, and any text file as a ``text`` document source of type
``text/plain``, its text decoded as UTF-8). Gemini reads
images, audio, video, PDF and text inline, of the types and sizes `openmolt_providers.gemini.
_inline` lists. Every API is sent the bare media type (`media`: no ``; charset=...``). OpenAI's file inputs
guide (2026-12): the Responses API's ``input_file`` reads PDF, text, code, documents and
spreadsheets, by the file name's extension; Chat Completions' ``file`` part reads PDF only, and a
text file goes as a text part holding its content, as the guide says. OpenAI's models without
vision (GPT-3.5, GPT-4 before GPT-4 Turbo with vision, o1-mini, o1-preview, o3-mini, the audio
models) take no image and no PDF, and Chat's ``input_audio`` goes to its audio models only
(`openmolt_providers.openai._models.sees` and ``hears``).
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Literal

from openmolt_core.errors import UnreadableAttachment

if TYPE_CHECKING:
	from collections.abc import Sequence

	from openmolt_core.llm import Attachment, Message, ModelRequest
	from openmolt_providers._common import HTTPProvider

__all__ = [
	"ANTHROPIC_IMAGE",
	"GEMINI_INLINE",
	"IMAGES",
	"Parts",
	"decoded_size",
	"filename",
	"fit_images",
	"media",
	"parts",
	"plain_text",
	"refused",
	"text_part",
	"textual",
	"wav_or_mp3",
]

IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The image types OpenAI and Anthropic both read."""

ANTHROPIC_IMAGE = 5 * 1024 * 1024
"""The largest image the Messages API takes (vision guide: 5 MB per image), measured as the API
measures it: the base64 text of ``source.data`` ("messages.0.content.1.image.source.base64: image
exceeds 5 MB maximum: 6405384 bytes > 5242880 bytes", the refusal of a 4.6 MB image), so about
3.75 MB of image."""

GEMINI_INLINE = 100 * 1024 * 1024
"""The most inline data (base64 characters) a Gemini request may carry ("Increased file size
limits", Google, 2026-01-12: from 20 MB to 100 MB, base64)."""

Parts = dict[int, list["Attachment | str"]]
"""The attachments of each message `fit_images` changed, by the message's index: the kept
attachments, and a note (a ``str``) in place of each image left out. A message not in it is sent
as it is."""


def fit_images(
	provider: HTTPProvider,
	request: ModelRequest,
	limits: Literal["OPENAI", "AZURE_OPENAI", "ANTHROPIC", "GEMINI"],
) -> Parts:
	"""The attachments to send in place of each message's, so the request fits an API's limits.

	`openmolt_providers._images.fit` with the limits of that module named ``limits``
	(``"OPENAI"``, ``"AZURE_OPENAI"``, ``"ANTHROPIC"``, ``"GEMINI"``). A request whose messages hold no attachment
	(every plain run's) fits as it is: {} at once, without loading `openmolt_providers._images`
	(its limits and image readers load with the first attachment).

	Args:
		provider: The provider (for the error).
		request: The request.
		limits: The name of the API's `openmolt_providers._images.ImageLimits`.

	Raises:
		ProviderError: Not even the newest image fits (`openmolt_providers._images.fit`).
	"""
	if not any(m.attachments for m in request.messages):
		return {}
	from openmolt_providers import _images

	found: _images.ImageLimits = getattr(_images, limits)
	return _images.fit(provider, request, found)


def parts(fitted: Parts, index: int, message: Message) -> Sequence[Attachment | str]:
	"""What to send of a message's attachments: `fit_images`' for it, else its own."""
	return fitted.get(index) or message.attachments


_AUDIO = {
	"audio/wav": "wav",
	"audio/x-wav": "wav",
	"audio/wave": "wav",
	"audio/mpeg": "mp3",
	"audio/mp3": "mp3",
}


def media(attachment: Attachment) -> str:
	"""The attachment's media type, lowercase and without parameters (``; charset=...``)."""
	return attachment.media_type.split(";", 1)[0].strip().lower()


def wav_or_mp3(attachment: Attachment) -> str | None:
	"""Chat Completions' ``input_audio`` format of an attachment (``wav`` or ``mp3``), or None."""
	return _AUDIO.get(media(attachment))


def decoded_size(attachment: Attachment) -> int:
	"""The attachment's size in bytes once decoded (from the base64 length, without decoding)."""
	data = attachment.data.rstrip("=")
	return len(data) * 3 // 4


def plain_text(provider: HTTPProvider, model: str, attachment: Attachment) -> str:
	"""The text of a text attachment, decoded as UTF-8 (a byte-order mark dropped).

	For an API that takes a text file as its text, not base64 (Anthropic's ``text`` document
	source, Chat Completions' text part).

	Raises:
		ProviderError: It is not base64 of UTF-8 text.
	"""
	try:
		return base64.b64decode(attachment.data, validate=True).decode("utf-8-sig")
	except (binascii.Error, ValueError):
		why = "it is sent as its text, and its data is not base64 of UTF-8 text"
		raise refused(
			provider, model, attachment, why, fix="save it as UTF-8 and attach it again"
		) from None


def textual(attachment: Attachment) -> bool:
	"""Whether an attachment is text (``text/*``, JSON, XML, YAML, CSV: `openmolt_core.files`)."""
	from openmolt_core.files import textual as is_text

	return is_text(media(attachment))


def filename(attachment: Attachment) -> str:
	"""The file name an API that reads a file by its extension is given (OpenAI's ``input_file``).

	OpenAI reads a file by its name's extension ("Expected context stuffing file type to be a
	supported format: .pdf but got .txt"): a name without one gets its media type's
	(``attachment.txt`` for an unnamed text file), so a text file is not read as a PDF.
	"""
	import mimetypes
	import posixpath

	name = attachment.name or "attachment"
	if posixpath.splitext(name)[1]:
		return name
	extension = mimetypes.guess_extension(media(attachment), strict=False)
	return name + (extension or "")


def text_part(provider: HTTPProvider, model: str, attachment: Attachment) -> str:
	"""A text file's content as the text of a turn, after a line that names it.

	Raises:
		ProviderError: It is not base64 of UTF-8 text.
	"""
	text = plain_text(provider, model, attachment)
	name = attachment.name or "attachment"
	return f"{name} ({media(attachment)}):\n{text}"


_FIX = "convert it, or use a model that reads it (a Gemini model reads audio, video and text too)"


def refused(
	provider: HTTPProvider, model: str, attachment: Attachment, why: str, *, fix: str = _FIX
) -> UnreadableAttachment:
	"""The error for an attachment the API cannot read, raised before anything is sent.

	An `UnreadableAttachment`: an agent with model fallback asks its next model, which may read
	it.

	Args:
		provider: The provider.
		model: The model name.
		attachment: The attachment.
		why: What the API takes instead, or what is wrong with it.
		fix: What to do about it (default: convert it, or use a Gemini model).
	"""
	name = f" {attachment.name!r}" if attachment.name else ""
	return UnreadableAttachment(
		f"the attachment{name} ({attachment.media_type}) cannot be sent: {why}; {fix}",
		provider=provider.name,
		model=model,
	)
