"""The message for a file that is not UTF-8 text: which file, why, and how to save it."""

from __future__ import annotations

__all__ = ["not_utf8"]

_UTF16 = (b"\xff\xfe", b"\xfe\xff")
"""The byte-order marks of UTF-16, which Windows PowerShell's ``>`` and ``Out-File`` write."""


def not_utf8(name: str, exc: UnicodeDecodeError) -> str:
	"""Why ``name`` could not be read as UTF-8, and the fix (no content of the file is shown).

	Args:
		name: The file, as the message names it (its path, or ``--env-file .env``).
		exc: The decoding error.
	"""
	data = exc.object
	head = bytes(data[:2]) if isinstance(data, bytes | bytearray) else b""
	if head in _UTF16:
		why = "it is UTF-16 (as Windows PowerShell's > and Out-File write it)"
	else:
		why = f"the byte at offset {exc.start} is not UTF-8"
	return f"{name} is not UTF-8 text: {why}; save it as UTF-8"
