"""Every spelling a secret may take on the way out, and a check that none of them shows.

Written with the standard library alone (not `openmolt_core.secrets.spellings`), so a test that
uses it does not take the masking's own list as its oracle.
"""

from __future__ import annotations

import base64
import json
import re
from urllib.parse import quote, quote_plus

__all__ = ["leaks", "spellings"]


def spellings(secret: str) -> dict[str, str]:
	"""The spellings of ``secret`` no output may hold, by name.

	Raw, percent-encoded (each safe set, upper- and lower-case hex), base64 (standard and URL-safe,
	padded or not, and inside HTTP Basic's ``user:secret`` at each byte alignment), JSON-escaped
	(once and twice), hex, and a long piece of it (a text cut inside the secret shows its start).

	Args:
		secret: The secret.
	"""
	out = {"raw": secret, "start": secret[: max(8, len(secret) * 2 // 3)]}
	for safe in ("", "/"):
		for name, encoded in (
			(f"quote[{safe}]", quote(secret, safe=safe)),
			(f"quote_plus[{safe}]", quote_plus(secret, safe=safe)),
		):
			out[name] = encoded
			out[f"{name} lower"] = re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), encoded)
	data = secret.encode()
	for name, encode in (("b64", base64.b64encode), ("b64url", base64.urlsafe_b64encode)):
		out[name] = encode(data).decode()
		out[f"{name} nopad"] = encode(data).decode().rstrip("=")
		for user in ("u:", "us:", "use:"):  # the secret's own base64 characters, at each alignment
			encoded = encode(user.encode() + data).decode()
			out[f"{name} after {user}"] = encoded[(len(user) * 4 + 2) // 3 + 1 : -4]
	out["json"] = json.dumps(secret)[1:-1]
	out["json twice"] = json.dumps(json.dumps(secret))[3:-3]
	out["hex"] = data.hex()
	out["HEX"] = data.hex().upper()
	return out


def leaks(text: str | bytes, *secrets: str) -> list[tuple[str, str]]:
	"""Each ``(secret, spelling name)`` that shows in ``text`` (bytes are read as Latin-1).

	Args:
		text: What went out: a log, a store's bytes, an error's text, a model's request.
		*secrets: The secrets.
	"""
	if isinstance(text, bytes | bytearray):
		text = bytes(text).decode("latin-1")
	return [
		(secret, name)
		for secret in secrets
		for name, spelled in spellings(secret).items()
		if spelled and spelled in text
	]
