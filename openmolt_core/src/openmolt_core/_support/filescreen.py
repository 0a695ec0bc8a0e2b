"""A file's bytes screened for secrets: kept as they are, kept masked (a text), or withheld.

Every file OpenMolt keeps or hands on passes here: the file store's saves
(`openmolt_core.files.save_screened`, `openmolt_core.filestore.FileStore.save`), a run's input
files, the base64 of a file in a saved state or an A2A answer (`screened_base64`). A text file
(`textual`) is masked in its own encoding; any other file in which a secret shows is withheld,
since masked it would be broken. A library with no agent concept: bytes, a media type and the
secret values in, bytes or None out. `openmolt_core.files` re-exports its names.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

__all__ = ["masked_labels", "screen", "screened_base64", "textual"]


def textual(media_type: str) -> bool:
	"""Whether a media type is text, which stays whole once masked (JSON, XML, YAML, CSV too).

	Args:
		media_type: The media type, parameters allowed (``text/plain; charset=utf-16``).
	"""
	base = media_type.split(";")[0].strip().lower()
	return base.startswith("text/") or base.endswith(("json", "xml", "yaml", "csv"))


_BOMS = (
	(b"\xef\xbb\xbf", "utf-8"),
	(b"\xff\xfe", "utf-16-le"),
	(b"\xfe\xff", "utf-16-be"),
)


def _charset(data: bytes, media_type: str) -> tuple[bytes, str]:
	"""A text's byte-order mark (kept as it was) and encoding: the BOM's, the declared, or UTF-8."""
	for bom, codec in _BOMS:
		if data.startswith(bom):
			return bom, codec
	for param in media_type.split(";")[1:]:
		key, _, value = param.partition("=")
		if key.strip().lower() == "charset" and value.strip():
			import codecs

			try:
				info = codecs.lookup(value.strip().strip('"'))
			except LookupError:
				break
			# Not a codec a body may choose: base64 or zlib are no text encoding, and punycode
			# decodes in quadratic time (`openmolt_core.integrations._decode` refuses them too).
			if info._is_text_encoding and info.name not in ("punycode", "idna"):
				return b"", info.name
			break
	return b"", "utf-8"


def screen(data: bytes, media_type: str, secrets: frozenset[str]) -> bytes | None:
	"""What the file store keeps of a file: the bytes as given, masked, or nothing.

	Every save of the store goes through here (`openmolt_core.filestore.FileStore.save`), so a
	source of bytes (a binary HTTP reply, an image a service generated, an MCP blob, an upload)
	need not remember to mask them. A secret shows in any spelling `openmolt_core.secrets.mask`
	knows (raw, base64, hex, percent-encoded, UTF-16...). A text file (`textual`) is kept masked:
	read in its encoding (its byte-order mark, its ``charset``, else UTF-8), masked, and written
	back in it, so UTF-16 stays UTF-16; bytes that do not decode are masked byte for byte. Any
	other file in which a secret shows is not kept (None): masked, an image or an archive would be
	broken (a length field wrong), and kept whole, it would hand the secret on. A secret a format
	compresses (a PNG's pixels, a zip) cannot be seen, as in any text. Blocking: call it from a
	worker thread (masking reads a few MB a second of bytes that are not text).

	Args:
		data: The bytes.
		media_type: Their media type.
		secrets: The raw secret values.

	Returns:
		``data`` itself when it shows no secret; else its masked copy (text), or None.
	"""
	if not secrets or not data:
		return data
	from openmolt_core._support.masking import mask, mask_bytes

	if textual(media_type):
		bom, codec = _charset(data, media_type)
		try:
			text = data[len(bom) :].decode(codec)
			masked = mask(text, secrets)
			if masked != text:
				data = bom + masked.encode(codec)
		except (LookupError, UnicodeError):
			pass  # not in its encoding: masked byte for byte below
		# Then byte for byte: a secret spelled in another encoding than the text's.
		return mask_bytes(data, secrets)
	masked_bytes = mask_bytes(data, secrets)
	return data if masked_bytes is data else None


def masked_labels(name: str, media_type: str, secrets: frozenset[str]) -> tuple[str, str]:
	"""A file's name and media type as the store keeps and shows them: each secret masked.

	The labels of a file travel with it (the store's record on disk, the reference a tool and the
	model read, the name a provider is sent with an attachment, a session's item), and whoever
	made the file chose them: a tool names an export after a token, a caller's media type carries
	a parameter. They are masked with the secrets its bytes are screened with (`screen`).

	Args:
		name: The file's name (may be empty).
		media_type: Its media type.
		secrets: The raw secret values.

	Returns:
		The name and the media type, masked.
	"""
	if not secrets:
		return name, media_type
	from openmolt_core._support.masking import mask

	return (mask(name, secrets) if name else name), mask(media_type, secrets)


_CLEAN_KEPT = 256
"""How many files found clean are remembered (by digest), so a state or a task that carries the
same files is not screened again at each save and read (`screened_base64`)."""

_clean: OrderedDict[tuple[bytes, str, frozenset[str]], None] = OrderedDict()
_clean_lock = threading.Lock()  # screening runs in worker threads


def screened_base64(encoded: Any, media_type: str, secrets: frozenset[str]) -> str | None:
	"""A file's base64 as a store or an answer may hold it: screened as bytes, never as text.

	Masked as text, base64 whose bytes spell a secret would be base64 no more (a client, or a run
	resumed from it, would read a broken file). So the bytes are screened (`screen`): kept as
	they are, kept masked (a text, encoded again), or withheld. Bytes whose base64 the text
	masking would still change are withheld too: a spelling `screen` cannot see in the bytes (a
	secret that is itself base64, decoded in the file) never shows. Every place that holds a
	file's base64 where text is masked comes here: a saved state (`masked_state`: the run
	store, a durable journal) and an A2A task's file parts (``openmolt_serve``). Blocking, as
	`screen` is.

	Args:
		encoded: The file's base64 (standard alphabet, padded); anything else is not kept.
		media_type: The file's media type.
		secrets: The secrets to mask.

	Returns:
		``encoded`` itself when the file shows no secret, the masked text's base64, or None:
		withheld, or not base64.
	"""
	import base64
	import binascii

	if not isinstance(encoded, str):
		return None
	try:
		data = base64.b64decode(encoded, validate=True)
	except (binascii.Error, ValueError):
		return None
	if not secrets:
		return encoded
	import hashlib

	from openmolt_core._support.masking import mask

	key = (hashlib.sha256(data).digest(), media_type, secrets)
	with _clean_lock:
		if key in _clean:
			_clean.move_to_end(key)
			return encoded
	kept = screen(data, media_type, secrets)
	if kept is None:
		return None
	out = encoded if kept is data else base64.b64encode(kept).decode("ascii")
	if mask(out, secrets) != out:
		return None
	if kept is data:
		with _clean_lock:
			_clean[key] = None
			while len(_clean) > _CLEAN_KEPT:
				_clean.popitem(last=False)
	return out
