"""Attachments as Gemini's ``inlineData``: the media types it reads, within its inline limits.

From the Gemini API's pages: image understanding (PNG, JPEG, WEBP, HEIC, HEIF), audio
understanding (WAV, MP3, AIFF, AAC, OGG Vorbis, FLAC), video understanding (MP4, MPEG, MOV, AVI,
FLV, MPG, WEBM, WMV, 3GPP) and document understanding (PDF, read with vision; any other document
is read as plain text: HTML, CSS, JavaScript, Python, Markdown, CSV, XML, RTF, TXT are named).
Inline data may reach 100 MB in a request, base64 (Google's "Increased file size limits", 2026-01:
up from 20 MB), and a PDF 50 MB ("PDFs are limited to 50MB for this method", file input methods).

The type goes bare (``text/plain``, not ``text/plain; charset=utf-8``) and in the spelling those
pages list (``audio/mp3`` for ``audio/mpeg``, ``video/mov`` for ``video/quicktime``); a text file
of a type they do not name (JSON, YAML, Rust...) goes as ``text/plain``. Anything else fails
before the request is sent, naming the attachment and what Gemini reads. A server other than
Google's (a LiteLLM proxy) decides for itself: it gets the bare type as given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openmolt_providers._attach import GEMINI_INLINE, decoded_size, media, refused, textual

if TYPE_CHECKING:
	from openmolt_core.llm import Attachment
	from openmolt_providers.gemini import GeminiProvider

__all__ = ["MAX_INLINE", "MAX_PDF", "READS", "inline_parts"]

_TYPES = {
	# images
	"image/png": "image/png",
	"image/jpeg": "image/jpeg",
	"image/jpg": "image/jpeg",
	"image/pjpeg": "image/jpeg",
	"image/webp": "image/webp",
	"image/heic": "image/heic",
	"image/heif": "image/heif",
	# audio
	"audio/wav": "audio/wav",
	"audio/x-wav": "audio/wav",
	"audio/wave": "audio/wav",
	"audio/vnd.wave": "audio/wav",
	"audio/mp3": "audio/mp3",
	"audio/mpeg": "audio/mp3",
	"audio/mpeg3": "audio/mp3",
	"audio/x-mpeg-3": "audio/mp3",
	"audio/aiff": "audio/aiff",
	"audio/x-aiff": "audio/aiff",
	"audio/aac": "audio/aac",
	"audio/x-aac": "audio/aac",
	"audio/ogg": "audio/ogg",
	"audio/flac": "audio/flac",
	"audio/x-flac": "audio/flac",
	# video
	"video/mp4": "video/mp4",
	"video/mpeg": "video/mpeg",
	"video/mov": "video/mov",
	"video/quicktime": "video/mov",
	"video/avi": "video/avi",
	"video/x-msvideo": "video/avi",
	"video/x-flv": "video/x-flv",
	"video/mpg": "video/mpg",
	"video/webm": "video/webm",
	"video/wmv": "video/wmv",
	"video/x-ms-wmv": "video/wmv",
	"video/3gpp": "video/3gpp",
	# documents
	"application/pdf": "application/pdf",
	"text/plain": "text/plain",
	"text/html": "text/html",
	"text/css": "text/css",
	"text/javascript": "text/javascript",
	"application/x-javascript": "application/x-javascript",
	"text/x-python": "text/x-python",
	"application/x-python": "application/x-python",
	"text/markdown": "text/markdown",
	"text/md": "text/md",
	"text/csv": "text/csv",
	"text/xml": "text/xml",
	"text/rtf": "text/rtf",
}
"""Each media type Gemini reads (and its common other spellings) to the spelling its pages use."""

READS = (
	"PNG, JPEG, WEBP, HEIC and HEIF images; WAV, MP3, AIFF, AAC, OGG and FLAC audio; MP4, MPEG, "
	"MOV, AVI, FLV, MPG, WEBM, WMV and 3GPP video; PDF and text files"
)
"""What Gemini reads inline, for the error of an attachment it does not."""

MAX_INLINE = GEMINI_INLINE
"""The most inline data (base64 characters) a request may carry (`openmolt_providers._images.GEMINI`,
whose older images are left out first)."""

MAX_PDF = 50 * 1024 * 1024
"""The largest PDF (bytes) sent inline."""

_MB = 1024 * 1024


def inline_parts(
	provider: GeminiProvider, model: str, attachments: list[Attachment], sent: list[int]
) -> list[dict[str, Any]]:
	"""The ``inlineData`` parts of one turn's attachments.

	Args:
		provider: The provider (its ``official`` says whether Google's limits apply).
		model: The model asked.
		attachments: The turn's attachments.
		sent: The base64 characters of inline data the request holds so far (one item, updated).

	Raises:
		ProviderError: On Google's API: a type Gemini does not read, a PDF over 50 MB, or the
			request's inline data over 100 MB. Nothing has been sent.
	"""
	parts: list[dict[str, Any]] = []
	for a in attachments:
		kind = media(a)
		if provider.official:
			kind = _checked(provider, model, a, kind)
			sent[0] += len(a.data)
			if sent[0] > MAX_INLINE:
				why = (
					f"Gemini takes at most {MAX_INLINE // _MB} MB of inline data (base64) in a "
					f"request, and its attachments come to {sent[0] / _MB:.1f} MB with this one "
					"(the attachments of earlier turns are sent again at every step)"
				)
				raise refused(provider, model, a, why, fix="send fewer or smaller attachments")
		parts.append({"inlineData": {"mimeType": kind, "data": a.data}})
	return parts


def _checked(provider: GeminiProvider, model: str, attachment: Attachment, kind: str) -> str:
	"""The type Gemini is sent for an attachment it reads; an error for one it does not."""
	gemini = _TYPES.get(kind)
	if gemini is None and textual(attachment):
		gemini = "text/plain"  # Gemini reads a document that is no PDF as plain text
	if gemini is None:
		raise refused(
			provider,
			model,
			attachment,
			f"Gemini reads {READS}",
			fix="convert it to one of those, or use a model that reads it",
		)
	if gemini == "application/pdf":
		size = decoded_size(attachment)
		if size > MAX_PDF:
			why = (
				f"Gemini takes inline PDFs of at most {MAX_PDF // _MB} MB, and this one is "
				f"{size / _MB:.1f} MB"
			)
			raise refused(provider, model, attachment, why, fix="split it or make it smaller")
	return gemini
