"""The images a request carries, kept within its API's limits: the newest ones, notes for the rest.

A browser or screenshot agent shows the model an image at most steps (a tool source's images go
with the results of their step: `openmolt_core.capabilities.sources`), and the run's history keeps
them all, so every later request carried every image. Past the API's limits per request (a count,
a size, a size rule) the request was refused with a 400 or a 413, and so was every later one:
compaction counts tokens, and images are cheap in tokens. Now each provider declares its limits as
data (`ImageLimits`), and `fit` keeps the newest images of the request that fit them all; each
older one is replaced, in its place, by a short note that says so (``[image of step 4 left out:
the request holds the newest 20 images]``), so the model knows. Only the request is cut: the run's
state keeps every image, and a request that fits is built exactly as before.

A request in which not even the newest image fits (one image too large for the request) is
refused before it is sent, with an error that names the limit (`UnreadableAttachment`: a
fallback model may take it).
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from openmolt_providers._attach import ANTHROPIC_IMAGE, GEMINI_INLINE, Parts, media, parts, refused

if TYPE_CHECKING:
	from openmolt_core.llm import Attachment, Message, ModelRequest
	from openmolt_providers._common import HTTPProvider

__all__ = [
	"ANTHROPIC",
	"ANTHROPIC_IMAGE",
	"AZURE_OPENAI",
	"GEMINI",
	"GEMINI_INLINE",
	"OPENAI",
	"ImageLimits",
	"Parts",
	"fit",
	"parts",
	"pixels",
]

_MB = 1_000_000
"""A megabyte where a vendor's page does not say which (the smaller: a request is never cut too
little); a limit the API states in bytes (Anthropic's 5 MB per image: 5,242,880) is given so."""


@dataclass(frozen=True, slots=True)
class ImageLimits:
	"""An API's limits on the images of one request, as its vendor's pages state them.

	Sizes are counted as the request carries them (the base64 text), which is never less than the
	image; a limit that is None does not apply.

	Args:
		api: The API's name, for errors (``Anthropic``).
		images: The most images a request may hold.
		image_bytes: The most base64 characters of images a request may hold.
		inline_bytes: The most base64 characters of attachments of any kind (images, PDFs,
			audio...) a request may hold; only images are left out to fit it.
		request_bytes: The most bytes a whole request body may hold (its text counted too).
		image_largest: The most base64 characters one image may hold: an older image over it is
			left out; the newest one is refused by the provider's own check, which says why.
		image_px: The longest side, in pixels, any image may have (only a size read from the
			image's header counts: one that cannot be read is left to the API, which says why).
		many: Past this many images in a request, each image's sides must be at most
			``many_px`` pixels (an image whose size cannot be read counts as larger).
		many_px: The largest side of each image when a request holds more than ``many``.
		source: Where the figures come from (the vendor's page and when it was read).
	"""

	api: str
	images: int
	image_bytes: int | None = None
	inline_bytes: int | None = None
	request_bytes: int | None = None
	image_largest: int | None = None
	image_px: int | None = None
	many: int | None = None
	many_px: int | None = None
	source: str = ""


ANTHROPIC = ImageLimits(
	api="Anthropic",
	images=100,
	request_bytes=32 * _MB,
	image_largest=ANTHROPIC_IMAGE,
	image_px=8000,
	many=20,
	many_px=2000,
	source=(
		"Claude docs, vision ('Images and vision', 2026-12): 100 images per request for models "
		"with a 200k-token window (600 for the others: 100 is kept for all), images over "
		"8000x8000 px refused and over 2000x2000 px once a request holds more than 20, and a "
		"32 MB request size limit (API overview, 'Request size limits': 413 request_too_large); "
		"5 MB per image, measured in base64"
	),
)
"""The Messages API's limits (`openmolt_providers.anthropic`)."""

OPENAI = ImageLimits(
	api="OpenAI",
	images=500,
	image_bytes=50 * _MB,
	source=(
		"OpenAI's images and vision guide, image input requirements (2026-12): up to 500 "
		"images and 50 MB of images per request, Responses and Chat Completions alike"
	),
)
"""The Responses and Chat Completions APIs' limits, on api.openai.com (`openmolt_providers.openai`)."""

AZURE_OPENAI = ImageLimits(
	api="Azure OpenAI",
	images=10,
	image_bytes=OPENAI.image_bytes,
	image_largest=20 * _MB * 4 // 3,
	source=(
		"Azure OpenAI's vision-enabled chat model concepts, input limitations (learn.microsoft"
		".com/azure/ai-foundry/openai/concepts/gpt-with-vision, read 2026-12; REST api-version "
		"2024-10-21 and /openai/v1): 'limited to 10 images per chat call' and 'the maximum size "
		"for input images is restricted to 20 MB' (here as base64: 4/3 of it); its total per "
		"request is not stated, OpenAI's 50 MB is kept"
	),
)
"""An Azure OpenAI resource's limits (`openmolt_providers.openai`, ``OpenAIProvider.azure``):
stricter than api.openai.com's, whose 500 images a request it refuses past 10."""

GEMINI = ImageLimits(
	api="Gemini",
	images=900,
	inline_bytes=GEMINI_INLINE,
	source=(
		"Google's 'Increased file size limits' (2026-01-12): inline data up to 100 MB per "
		"request, base64 (was 20 MB); images per request: 3,000 for Gemini 2.5 and 900 for "
		"Gemini 3 Pro (image understanding pages): 900 is kept for all"
	),
)
"""The Gemini API's limits, on Google's endpoint (`openmolt_providers.gemini`)."""


def _image(attachment: Attachment) -> bool:
	return media(attachment).startswith("image/")


def _text_bytes(request: ModelRequest, exact: bool) -> int:
	"""The bytes of a body's texts as JSON, and room for the fields around them.

	Exact (each text as the body's encoder writes it: `openmolt_providers._body`), or a bound
	that costs nothing to count (a character takes at most 6 bytes in JSON, escaped). The reply
	schema is counted as its own JSON; 64 KB are left for the other fields (tools, settings).
	"""
	texts = [request.system, *(m.content for m in request.messages)]
	if exact:
		from json.encoder import encode_basestring

		size = sum(len(encode_basestring(t).encode()) for t in texts)
	else:
		size = 6 * sum(len(t) for t in texts)
	schema = request.response_schema
	if schema is not None:
		import json

		size += len(json.dumps(schema))
	return size + 64 * 1024 + 64 * len(request.messages)


_COMPACTED = re.compile(r'"compacted":\{"note":"steps 1-(\d+) ')
"""The note a compacted first turn holds (`openmolt_core.compaction`: "steps 1-K of this run,
summarised; the steps after it follow verbatim"): the first step still in the request is K + 1."""


def _steps(messages: list[Message]) -> list[int]:
	"""The step whose turn each message is: 0 for the first turn, N for the results of step N.

	Each step is one model reply followed by the turn that answers it, so a turn's step is the
	number of replies before it, after the steps a compacted first turn summarises.
	"""
	found = _COMPACTED.search(messages[0].content[:200_000]) if messages else None
	replies = int(found.group(1)) if found else 0
	steps: list[int] = []
	for i, m in enumerate(messages):
		if m.role == "assistant":
			replies += 1
		steps.append(0 if i == 0 else replies)
	return steps


def _note(step: int, kept: int) -> str:
	of = "the input" if step == 0 else f"step {step}"
	holds = "the newest image" if kept == 1 else f"the newest {kept} images"
	return f"[image of {of} left out: the request holds {holds}]"


def fit(provider: HTTPProvider, request: ModelRequest, limits: ImageLimits) -> Parts:
	"""The attachments to send in place of each message's, so the request fits ``limits``.

	The newest images that fit every limit together are kept (the newest K: an image that does
	not fit stops the count, so the note's "newest K" is true); each older image becomes a note
	in its place. Attachments that are no image are always kept.

	Args:
		provider: The provider (for the error).
		request: The request.
		limits: The API's limits.

	Returns:
		The changed messages' attachments by index (`Parts`); empty when the request fits as it
		is, which is every request without images.

	Raises:
		ProviderError: Not even the newest image fits (an `UnreadableAttachment` naming the
			limit); nothing was sent.
	"""
	messages = request.messages
	found = [
		(i, j, a)
		for i, m in enumerate(messages)
		if m.attachments
		for j, a in enumerate(m.attachments)
		if _image(a)
	]
	if not found:
		return {}
	others = sum(
		len(a.data) for m in messages if m.attachments for a in m.attachments if not _image(a)
	)
	exact = False  # the texts' size is counted exactly only when its bound does not fit
	fixed = others + _text_bytes(request, exact) if limits.request_bytes is not None else 0
	kept = total = 0
	large = False  # a kept image's side is over many_px, or unknown
	read = limits.many is not None and limits.many_px is not None and len(found) > limits.many
	px = limits.image_px
	why = ""
	for _, _, a in reversed(found):
		size = len(a.data)
		side = _side(a.data) if read or px is not None else 0  # None: unknown
		big = read and (side is None or side > (limits.many_px or 0))
		over = limits.request_bytes is not None and fixed + total + size > limits.request_bytes
		if over and not exact:  # the bound does not fit: count the texts exactly
			exact = True
			fixed = others + _text_bytes(request, exact)
		if kept + 1 > limits.images:
			why = f"{limits.api} takes at most {limits.images} images in a request"
		elif limits.image_largest is not None and size > limits.image_largest:
			if kept == 0:  # the newest: the provider's own check refuses it and says why
				return {}
			why = f"{limits.api} takes no image over {limits.image_largest / 2**20:g} MB as base64"
		elif px is not None and side is not None and side > px:
			why = f"{limits.api} takes images of at most {px}x{px} px"
		elif limits.image_bytes is not None and total + size > limits.image_bytes:
			why = _sized(limits.api, "of images", limits.image_bytes, total + size)
		elif limits.inline_bytes is not None and others + total + size > limits.inline_bytes:
			why = _sized(limits.api, "of inline data", limits.inline_bytes, others + total + size)
		elif limits.request_bytes is not None and fixed + total + size > limits.request_bytes:
			why = _sized(limits.api, "in a request", limits.request_bytes, fixed + total + size)
		elif read and kept + 1 > (limits.many or 0) and (large or big):
			why = (
				f"{limits.api} takes images of at most {limits.many_px}x{limits.many_px} px "
				f"when a request holds more than {limits.many}"
			)
		if why:
			break
		large = large or big
		kept += 1
		total += size
	if kept == len(found):
		return {}
	if kept == 0:
		newest = found[-1][2]
		raise refused(
			provider,
			request.model,
			newest,
			f"not even the newest image fits the request: {why}",
			fix="send a smaller image, or fewer or smaller attachments",
		)
	steps = _steps(messages)
	left = {(i, j) for i, j, _ in found[: len(found) - kept]}
	out: Parts = {}
	for i in sorted({i for i, _ in left}):
		out[i] = [
			_note(steps[i], kept) if (i, j) in left else a
			for j, a in enumerate(messages[i].attachments)
		]
	return out


def _sized(api: str, what: str, limit: int, size: int) -> str:
	mb = 2**20 if limit % 2**20 == 0 else _MB  # as the limit is stated
	held = f"the request would hold {size / mb:.1f} MB"
	return f"{api} takes at most {limit / mb:g} MB {what}, and {held}"


_SIDES: dict[int, tuple[str, int | None]] = {}
"""``id(data)`` -> (the image's base64, its longer side): a run's images are the same strings at
every step, so each header is read once (at most `_SIDES_KEPT`, then the cache starts again)."""

_SIDES_KEPT = 4096


def _side(data: str) -> int | None:
	"""An image's longer side in pixels, from its header; None when it cannot be read."""
	kept = _SIDES.get(id(data))
	if kept is not None and kept[0] is data:
		return kept[1]
	size = pixels(data)
	side = None if size is None else max(size)
	if len(_SIDES) >= _SIDES_KEPT:
		_SIDES.clear()
	_SIDES[id(data)] = (data, side)
	return side


_HEADS = (4 * 1024, 256 * 1024)
"""How much of an image's base64 text is decoded to find its size: a little first, more for a
JPEG whose frame header comes after its metadata (a thumbnail in it, at most 64 KB)."""


def pixels(data: str) -> tuple[int, int] | None:
	"""An image's width and height from its first bytes (PNG, GIF, WebP, JPEG); None if unknown.

	Args:
		data: The image, as base64.
	"""
	for most in _HEADS:
		size = _read(data, most)
		if size is not None or len(data) <= most:
			return size
	return None


def _read(data: str, most: int) -> tuple[int, int] | None:
	try:
		head = base64.b64decode(data[:most])
	except (binascii.Error, ValueError):
		return None
	if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
		w, h = struct.unpack(">II", head[16:24])
		return int(w), int(h)
	if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
		w, h = struct.unpack("<HH", head[6:10])
		return int(w), int(h)
	if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
		return _webp(head)
	if head.startswith(b"\xff\xd8"):
		return _jpeg(head)
	return None


def _webp(head: bytes) -> tuple[int, int] | None:
	kind = head[12:16]
	if kind == b"VP8 " and len(head) >= 30:
		w, h = struct.unpack("<HH", head[26:30])
		return int(w) & 0x3FFF, int(h) & 0x3FFF
	if kind == b"VP8L" and len(head) >= 25:
		bits = int.from_bytes(head[21:25], "little")
		return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
	if kind == b"VP8X" and len(head) >= 30:
		w = int.from_bytes(head[24:27], "little") + 1
		h = int.from_bytes(head[27:30], "little") + 1
		return w, h
	return None


_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
"""The JPEG markers of a frame header (SOF0 to SOF15, less DHT, JPG and DAC)."""


def _jpeg(head: bytes) -> tuple[int, int] | None:
	at = 2
	while at + 4 <= len(head):
		if head[at] != 0xFF:
			return None
		marker = head[at + 1]
		if marker == 0xFF:  # fill byte
			at += 1
			continue
		if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length
			at += 2
			continue
		length = int.from_bytes(head[at + 2 : at + 4], "big")
		if marker in _SOF:
			if at + 9 > len(head):
				return None
			h, w = struct.unpack(">HH", head[at + 5 : at + 9])
			return int(w), int(h)
		at += 2 + length
	return None
