r"""Mask a secret in every spelling it can take on the way out, in whole texts and in streamed pieces.

A secret is masked as is, stripped, percent-encoded (``quote`` and ``quote_plus``, the safe sets
of a query, a path and a URL, upper- and lower-case hex), base64 (standard and URL-safe, with and
without padding, and inside a longer base64 text such as HTTP Basic's ``user:secret``), base32
(upper or lower case, with or without padding: the secret whole, as TOTP and case-insensitive
transports write it), JSON-escaped and ``repr``-escaped (also as UTF-8 bytes, as an HTTP trace shows a header), and as
hex in either case (`spellings`); a secret of 8 characters or more holding a digit or a symbol
(or of 16 letters) in any case too (`_recased`: a server that echoes a token upper-cased). A
percent-encoded run the fixed spellings miss (another encoder's safe set; a URL inside a URL's query, encoded twice) is decoded and masked whole when
it holds a secret (`mask`), and so is a run of ``\u``/``\x`` escapes another encoder wrote
(every character escaped, upper-case hex, a byte string). Hex in mixed case, UTF-16 text (a
NUL beside each character, raw or escaped), HTML character references and base64 wrapped in
lines (MIME, PEM) are looked for behind a cheap check. A spelling another program cut short (its
first two thirds or more: a server that echoes a header up to a width) and a secret shown as its
start and end around an ellipsis (pydantic's ``input_value='sk-pro...j9Xz'``) are masked too
(`_masked_cuts`, `_masked_elided`). Text sent piece by piece holds back
what may start a secret (`held_back`, `StreamMask`), and a percent-encoded or escaped run until
it ends.

`RedactingFilter` is a ``logging.Filter`` installed on the loggers of OpenMolt, of the HTTP stack
it drives and of the MCP SDK (`LOGGERS`), and on the handlers the ``openmolt`` commands install,
at every level: a record's message, arguments, traceback and stack text are rendered and masked
before any handler sees them (and a handler that fails reports masked: `install_log_redaction`) (an argument that shows a secret is masked in place, so formatters
that read the arguments keep working; the ``bytes`` a record shows are searched for a secret
Huffman-coded too, as HTTP/2 header blocks are). It masks what its sources know
(`read_log_secrets`).

Which values are secrets, by their names: the values of environment variables named like
secrets (`environment_secrets`), the secret values of a provider's settings (`settings_secrets`)
and of a credential config (`secret_values`, and their keys: `secret_names`). One list of the
words a secret's name holds (`SECRET_HINTS`, read by `secret_name`) and of public names and
headers (`PUBLIC_NAMES`, `PUBLIC_HEADERS`) serves every such rule, and ``openmolt_mcp``'s for a
server's env, arguments and headers. A URL's secrets (`url_secrets`) are its userinfo, its query
values and the webhook or bot token in its path.

A library with no agent concept: the secrets come from the caller (`openmolt_core.secrets`
keeps an instance's, and re-exports these names).
"""

from __future__ import annotations

import base64
import copy
import json
import logging
import os
import re
import threading
from bisect import bisect_right
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import fields
from functools import lru_cache
from typing import Any, NamedTuple, TypeVar
from urllib.parse import quote, quote_plus, unquote, unquote_plus

from openmolt_core._support import LazyPattern

__all__ = [
	"LOGGERS",
	"MASK",
	"MIN_ENCODED",
	"MIN_KEY",
	"ONE_TIME_QUERY",
	"PUBLIC_ENV",
	"PUBLIC_HEADERS",
	"PUBLIC_NAMES",
	"SECRET_HINTS",
	"RedactingFilter",
	"StreamMask",
	"environment_secrets",
	"environment_secrets_now",
	"free_key",
	"header_secrets",
	"held_back",
	"install_log_redaction",
	"known_secrets",
	"live_secrets",
	"mask",
	"mask_bytes",
	"mask_deep",
	"mask_exception",
	"mask_fields",
	"mask_known",
	"mask_printed",
	"mask_url_fields",
	"mask_url_logins",
	"mask_url_logins_deep",
	"mask_urls",
	"masked_excerpt",
	"named_secrets",
	"one_time_query",
	"read_log_secrets",
	"redact_handler",
	"secret_name",
	"secret_names",
	"secret_values",
	"settings_secrets",
	"shown_url",
	"spellings",
	"url_secrets",
	"urls_secrets",
	"warn",
]

_T = TypeVar("_T")

MASK = "[redacted]"
"""What a secret is replaced with."""

MIN_ENCODED = 6
"""A secret shorter than this is masked as is only (its encodings would match ordinary text)."""

_SAFE = ("", "/", "!$&'()*+,;=:@/~", ":@")  # nothing, a path segment, a path (httpx), userinfo
_RUN_ENDS = frozenset("\"'<>\\&?#=,;")  # with whitespace, what ends a percent-encoded run
# A run is found from the encoded character it holds (a search for a literal ``%``), then taken
# whole: back to the last character that ends a run, on to the next one (`_runs_replaced`).
_PERCENT = LazyPattern(r"%[0-9A-Fa-f]{2}")
_PERCENT_RUN_START = LazyPattern(r"[\s\"'<>\\&?#=,;](?=[^\s\"'<>\\&?#=,;]*+\Z)")
_PERCENT_RUN_REST = LazyPattern(r"[^\s\"'<>\\&?#=,;]*+")
_MAX_HELD_RUN = 4096
"""The longest percent-encoded run a `StreamMask` holds back whole (a longer one is sent masked)."""


_HTML_SPECIAL = frozenset("&<>\"'")
"""What an HTML page writes as a named reference (``&amp;``, ``&quot;``...): see `spellings`."""


def _lower_hex(text: str) -> str:
	return re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), text)


def _b64_cores(data: bytes) -> set[str]:
	r"""The base64 text the secret's bytes always produce, at each of the 3 byte alignments.

	A secret inside a longer value (``user:secret`` for HTTP Basic) is encoded from an offset of
	0, 1 or 2 bytes modulo 3; the characters fully made of the secret's bits are the same
	whatever surrounds it, so masking them hides the secret. A secret that ends the value (HTTP
	Basic's ``user:secret``) ends in a character holding its last bits and the padding
	(``…Q==``): that longer spelling (also URL-safe, percent-encoded, ``/`` as ``\/``) is
	masked whole, so no character of the secret's end is left. The character before the core,
	shared with what precedes the secret, is not (a spelling of it would match a neighbour by
	chance, as would the last character without its padding).
	"""
	out: set[str] = set()
	for offset in range(3):
		encoded = base64.b64encode(b"\0" * offset + data).decode("ascii")
		start = -(-8 * offset // 6)  # ceil: the first character made of the secret's bits only
		end = 8 * (offset + len(data)) // 6
		core = encoded[start:end]
		if len(core) < MIN_ENCODED:  # a 6-byte secret's core is 7 characters at offsets 1 and 2
			continue
		out.update((core, core.replace("+", "-").replace("/", "_")))
		last = encoded[start:]  # the secret last: its last bits' character, and the padding
		if last != core:  # padded only: unpadded, the character may be a neighbour's by chance
			for form in (last, last.replace("+", "-").replace("/", "_")):
				quoted = quote(form, safe="")  # ``%3D``: the value in a query or a form
				out.update((form, quoted, _lower_hex(quoted), form.replace("/", "\\/")))
	return out


def _b64_of_encoded(value: str) -> set[str]:
	"""Base64 of the secret another encoder wrote first: percent-encoded, or JSON-escaped.

	OAuth2's client authentication form-encodes the id and the secret before HTTP Basic's base64
	(RFC 6749, 2.3.1: ``base64(quote_plus(id) + ":" + quote_plus(secret))``, as authlib and
	oauthlib send it), and a JWT's payload is base64 of JSON. Only the encodings that change
	the secret (a ``/``, ``+``, ``=``, ``@``, ``"``, a non-ASCII letter) add spellings.
	"""
	encoded = {quote(value, safe=safe) for safe in ("", "/")} | {quote_plus(value)}
	encoded |= {json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
	out: set[str] = set()
	for text in encoded - {value}:
		data = text.encode("utf-8")
		std = base64.b64encode(data).decode("ascii")
		url = base64.urlsafe_b64encode(data).decode("ascii")
		out.update((std, std.rstrip("="), url, url.rstrip("=")))
		out.update(_b64_cores(data))
	return out


@lru_cache(maxsize=4096)
def spellings(secret: str) -> frozenset[str]:
	"""Every spelling of a secret to mask: as is, percent-encoded, base64, base32, escaped, hex.

	Escaped: for JSON, ``repr`` and, when it holds ``&<>"'``, an HTML page (``&amp;``).

	Args:
		secret: The secret value.

	Returns:
		The non-empty spellings (the raw value always among them).
	"""
	out = {secret}
	stripped = secret.strip()
	values = {secret, stripped}
	if not stripped.isascii():  # composed or decomposed: macOS names, a normalising server
		import unicodedata

		values.update(unicodedata.normalize(form, stripped) for form in ("NFC", "NFD"))
	for value in values:
		if len(value) < MIN_ENCODED:
			continue
		out.add(value)
		for safe in _SAFE:
			for encoded in (quote(value, safe=safe), quote_plus(value, safe=safe)):
				out.update((encoded, _lower_hex(encoded)))
		for escaped in (
			json.dumps(value)[1:-1],
			json.dumps(value, ensure_ascii=False)[1:-1],
			json.dumps(json.dumps(value))[3:-3],  # a JSON text inside a JSON string
			repr(value)[1:-1],
			repr(value.encode("utf-8"))[2:-1],  # bytes in a trace (httpcore, hpack): b'...\xc3'
		):
			out.update((escaped, escaped.replace("/", "\\/")))  # some encoders write \/
		if not _HTML_SPECIAL.isdisjoint(value):  # a page's named references: ``&amp;``
			import html

			for text in (
				value,
				json.dumps(value)[1:-1],
				json.dumps(value, ensure_ascii=False)[1:-1],
			):
				both = html.escape(text)
				out.update((both, both.replace("&#x27;", "&#39;"), html.escape(text, quote=False)))
		data = value.encode("utf-8")
		std = base64.b64encode(data).decode("ascii")
		url = base64.urlsafe_b64encode(data).decode("ascii")
		out.update((std, std.rstrip("="), url, url.rstrip("=")))
		out.update(_b64_cores(data))
		out.update(_b64_of_encoded(value))
		b32 = base64.b32encode(data).decode("ascii")  # TOTP, case-insensitive transports
		out.update((b32, b32.rstrip("="), b32.lower(), b32.lower().rstrip("=")))
		out.update((data.hex(), data.hex().upper()))  # a hex dump, in either case
	# Some JSON encoders write every ``/`` as ``\/`` (PHP's json_encode, an API echoing a
	# header): so is each spelling holding one (base64's, a path left unencoded), not only the
	# raw value's.
	out.update([s.replace("/", "\\/") for s in out if "/" in s and "\\/" not in s])
	out.update(_key_lines(secret))
	return frozenset(s for s in out if s)


_LINE_BREAK = LazyPattern(r"\\r\\n|\\n|\r\n|\n|\r")
"""What ends a line of a secret: a break, or one written out (``\\n``, as ``.env`` keeps a key)."""

_MIN_KEY_LINE = 16
"""The shortest line of a multi-line secret masked on its own (a PEM key's are 64 characters)."""


def _key_lines(secret: str) -> set[str]:
	r"""The lines of a secret that spans lines (a PEM private key), each a spelling of its own.

	A program may show the key with other line ends (CRLF, ``\n`` written out), indented, or
	only its body: no whole spelling is there, yet each of its lines is part of the secret. A
	line of words (``-----BEGIN PRIVATE KEY-----``: it holds spaces) or a short one is not.
	"""
	if "\n" not in secret and "\r" not in secret and "\\n" not in secret:
		return set()
	parts = _LINE_BREAK().split(secret)
	if len(parts) < 2:
		return set()
	lines = (part.strip() for part in parts)
	return {line for line in lines if len(line) >= _MIN_KEY_LINE and not _SPACE().search(line)}


_SPACE = LazyPattern(r"\s")


Probes = tuple[tuple[str, tuple[str, ...]], ...]
_Cut = tuple[str, tuple[str, ...]]  # a spelling's start (`_start`), and the rests it may go on with
Cuts = tuple[_Cut, ...]


@lru_cache(maxsize=256)
def _patterns(secrets: frozenset[str]) -> tuple[Probes, frozenset[str]]:
	"""What to look for: each spelling no other one contains, with the spellings containing it.

	Only the probes are searched (a padded base64 text contains its core, so searching the core
	is enough); when one is found, the longer spellings around it are replaced first.
	"""
	hexes = {
		h for s in secrets for h in _hex_of(s)
	}  # found in any case (`_masked_other_spellings`)
	every = sorted(set().union(*(spellings(s) for s in secrets)) - hexes, key=len, reverse=True)
	probes = []
	for spelling in every:
		if not any(other != spelling and other in spelling for other in every):
			around = tuple(other for other in every if spelling in other)  # longest first
			probes.append((spelling, around))
	decoded = frozenset(s for s in secrets if len(s.strip()) >= MIN_ENCODED)
	return tuple(sorted(probes, key=lambda p: len(p[0]), reverse=True)), decoded


def mask(text: str, secrets: frozenset[str]) -> str:
	"""Return the text with every spelling of every secret replaced by ``[redacted]``.

	Args:
		text: The text.
		secrets: The raw secret values (`spellings` are derived, and cached).
	"""
	return _mask(text, secrets, escapes=True)


def _mask(text: str, secrets: frozenset[str], *, escapes: bool, cuts: bool = True) -> str:
	r"""`mask`, reading ``\u``/``\x``-escaped runs only when ``escapes`` is true.

	A run already decoded is read without (`_run_unescaped_masked`): it is decoded no further.
	``cuts``: also mask a spelling's start that another program cut short (`_masked_cuts`).
	"""
	if not secrets:
		return text
	long, short = _by_length(secrets)
	if long:
		decoded = _patterns(long)[1]
		# One scan for whole spellings and their cuts: each holds one of these (most texts, none).
		scan = _scan(long)
		found = list(filter(text.__contains__, scan.needles)) if len(text) >= scan.shortest else []
		if found:
			for probe, around in _chosen(scan.probes, scan.probes_by, found, scan.apart):
				if probe in text:
					for spelling in around:
						if spelling in text:
							text = text.replace(spelling, MASK)
		if "\n" in text:  # before the cuts: a line's end that starts a secret is read whole
			text = _masked_split(text, long)
		scanned = text
		if decoded and "%" in text:
			text = _runs_replaced(
				text,
				(_PERCENT(), _PERCENT_RUN_START(), _PERCENT_RUN_REST()),
				_masked_run,
				decoded,
			)
		if (
			escapes
			and decoded
			and "\\" in text
			and ("\\u" in text or "\\x" in text or "\\U" in text)
		):
			text = _masked_escapes(text, decoded)
		if decoded:
			text = _masked_other_spellings(text, decoded)
		if cuts and (found or text != scanned):  # last: another family reads a whole run first
			# Those the scan found, unless another family changed the text: then every one.
			every = text != scanned or not scan.apart
			chosen = None if every else _chosen(scan.cuts, scan.cuts_by, found)
			text = _masked_cuts(text, long, chosen)
	if short is not None:
		text = short.sub(MASK, text)
	return text


_BREAK = LazyPattern(r"\r?\n[ \t]*")
"""A line break, with the indentation a wrapped line's rest may carry."""


def _masked_split(text: str, secrets: frozenset[str]) -> str:
	"""A secret a line break cuts in two (a tool's output wrapped at a width), masked whole.

	The text is read with its breaks (and the indentation after them) taken out; a secret found
	there spans a break (the whole ones were masked before), and its two parts, break and all,
	become one ``[redacted]``. Only the secrets as they are, of `MIN_KEY` characters or more.
	"""
	# Cut in two, a secret leaves one of its halves whole on one side of the break.
	raw = [
		v
		for v in secrets
		if len(v) >= MIN_KEY
		and "\n" not in v
		and (v[: len(v) // 2] in text or v[len(v) // 2 :] in text)
	]
	if not raw:
		return text
	breaks = list(_BREAK().finditer(text))
	if not breaks:
		return text
	joined = _BREAK().sub("", text)
	hits = [v for v in raw if v in joined]
	if not hits:
		return text
	# Where each kept stretch of the text starts, in the joined text and in the text.
	starts_joined: list[int] = [0]
	starts_text: list[int] = [0]
	removed = 0
	for found in breaks:
		removed += found.end() - found.start()
		starts_joined.append(found.end() - removed)
		starts_text.append(found.end())

	def at(j: int) -> int:
		k = bisect_right(starts_joined, j) - 1
		return starts_text[k] + j - starts_joined[k]

	spans: list[tuple[int, int]] = []
	for secret in hits:
		j = joined.find(secret)
		while j != -1:
			spans.append((at(j), at(j + len(secret) - 1) + 1))
			j = joined.find(secret, j + 1)
	out: list[str] = []
	done = 0
	for begin, end in sorted(spans):
		if begin < done:  # overlaps the one masked before: one mask for both
			done = max(done, end)
			continue
		out += (text[done:begin], MASK)
		done = end
	return "".join(out) + text[done:]


def _start(spelling: str) -> str | None:
	"""The start of a spelling that tells it, or None for a spelling too short to cut.

	Its first two thirds, at least `MIN_KEY` characters (what ``tests/_leaks.py`` calls a
	leak of the secret).
	"""
	keep = max(MIN_KEY, -(-2 * len(spelling) // 3))
	return spelling[:keep] if keep < len(spelling) else None


class _Scan(NamedTuple):
	"""What `_mask` looks for first in a text (`_scan`)."""

	needles: tuple[str, ...]
	"""What a text holds when it shows a spelling, whole or cut."""
	shortest: int
	"""The shortest needle's length (a shorter text holds none)."""
	probes: Probes
	"""The probes (`_patterns`)."""
	probes_by: Mapping[str, tuple[int, ...]]
	"""By needle: the probes that hold it (where in ``probes``)."""
	cuts: Cuts
	"""The cuts (`_cuts`)."""
	cuts_by: Mapping[str, tuple[int, ...]]
	"""By needle: the cuts that hold it (where in ``cuts``)."""
	apart: bool
	"""Whether no spelling can run into a mask put in the text: masking one spelling then shows
	no other that was not there before, so the needles found at first tell which to look for."""


@lru_cache(maxsize=256)
def _scan(secrets: frozenset[str]) -> _Scan:
	"""What a text holds when it shows a spelling whole or cut (`_cuts`), and what each tells.

	Every spelling (but hex, read apart) starts with its cut, or is too short to cut: the
	shortest of those cuts and short spellings are enough (a longer one holds one of them), so a
	text holding none shows no spelling, whole or cut, and `_mask` reads it once, not once for
	the whole spellings and again for the cuts; in one that holds some, only the spellings and
	cuts holding those are looked for.
	"""
	hexes = {h for s in secrets for h in _hex_of(s)}
	whole = set().union(*(spellings(s) for s in secrets)) - hexes
	needles: list[str] = []
	for start in sorted({_start(s) or s for s in whole}, key=len):
		if not any(needle in start for needle in needles):
			needles.append(start)
	probes, cuts = _patterns(secrets)[0], _cuts(secrets)
	return _Scan(
		tuple(needles),
		len(needles[0]) if needles else 0,
		probes,
		{n: tuple(k for k, (probe, _) in enumerate(probes) if n in probe) for n in needles},
		cuts,
		{n: tuple(k for k, (cut, _) in enumerate(cuts) if n in cut) for n in needles},
		not any("[" in w or "]" in w or w in MASK for w in whole),
	)


def _chosen(
	items: Sequence[_T], by: Mapping[str, tuple[int, ...]], found: list[str], apart: bool = True
) -> Sequence[_T]:
	"""The items (in their order) that the found needles tell, or all of them unless ``apart``."""
	if not apart:
		return items
	return [items[k] for k in sorted({k for needle in found for k in by[needle]})]


@lru_cache(maxsize=256)
def _cuts(secrets: frozenset[str]) -> Cuts:
	"""The start of each spelling (`_start`), with the rests of the spellings it starts."""
	hexes = {h for s in secrets for h in _hex_of(s)}
	whole = set().union(*(spellings(s) for s in secrets)) - hexes
	rests: dict[str, set[str]] = {}
	for spelling in whole:
		if cut := _start(spelling):
			rests.setdefault(cut, set()).add(spelling[len(cut) :])
	found = [(cut, tuple(rest)) for cut, rest in rests.items() if cut not in whole]
	return tuple(sorted(found, key=lambda c: len(c[0]), reverse=True))


def _masked_cuts(text: str, secrets: frozenset[str], only: Sequence[_Cut] | None = None) -> str:
	"""A spelling another program cut short: its start masked, with what follows of it.

	A server that echoes a header up to 200 characters, a log line cut to a width, a display
	that shortens a value: the text shows a spelling's first two thirds or more, and no whole
	spelling (those were masked before). ``only``: the cuts to look for (some of `_cuts`, in
	its order), when the others are known not to be there.
	"""
	cuts = _cuts(secrets)
	if not cuts or len(text) < len(cuts[-1][0]):  # shorter than every cut (most values)
		return text
	for cut, rests in cuts if only is None else only:
		if cut not in text:
			continue
		out: list[str] = []
		done = 0
		at = text.find(cut)
		while at != -1:
			end = at + len(cut)
			more = max(_common_start(rest, text, end) for rest in rests)
			out += (text[done:at], MASK)
			done = end + more
			at = text.find(cut, done)
		text = "".join(out) + text[done:]
	return text


def _common_start(rest: str, text: str, at: int) -> int:
	"""How many first characters of ``rest`` the text holds from ``at`` on."""
	k = 0
	for want, got in zip(rest, text[at : at + len(rest)], strict=False):
		if want != got:
			break
		k += 1
	return k


_ELLIPSES = ("...", "\u2026", "\\u2026")  # three dots, the character, JSON's escape
_ELIDED_SIDE = 4
"""The fewest characters of a secret each side of an ellipsis shows for `_masked_elided` to
read it as that secret (a display shows far more: pydantic 24 each side)."""


def _elided_at(text: str, at: int, end: int, secret: str) -> tuple[int, int]:
	"""How much of the secret's start ends at ``at`` and of its end begins at ``end``.

	Each is a proper part (the whole secret was masked before); ``(0, 0)`` when either is none.
	"""
	n = len(secret)
	head = 0
	j = text.find(secret[0], max(0, at - n + 1), at)
	while j != -1:  # the leftmost start that reaches ``at`` is the longest
		if text.startswith(secret[: at - j], j):
			head = at - j
			break
		j = text.find(secret[0], j + 1, at)
	if not head:
		return 0, 0
	tail = 0
	if end < len(text):
		i = secret.find(text[end], 1)
		while i != -1:  # the leftmost in the secret is the longest end
			if text.startswith(secret[i:], end):
				tail = n - i
				break
			i = secret.find(text[end], i + 1)
	return head, tail


def _masked_elided(text: str, secrets: frozenset[str]) -> str:
	"""A secret shown with its middle cut out: pydantic's ``input_value='sk-pro...j9Xz'``.

	pydantic (a validation error's input), ``reprlib`` and other displays shorten a long value
	to its start and end around an ellipsis; when the two together show two thirds of a secret
	(at least `MIN_KEY` characters, and `_ELIDED_SIDE` each), both are masked with the ellipsis.
	"""
	for mark in _ELLIPSES:
		if mark not in text:
			continue
		for secret in secrets:
			need = max(MIN_KEY, -(-2 * len(secret) // 3))
			at = text.find(mark)
			while at != -1:
				end = at + len(mark)
				head, tail = _elided_at(text, at, end, secret)
				if min(head, tail) >= _ELIDED_SIDE and head + tail >= need:
					text = text[: at - head] + MASK + text[end + tail :]
					at = text.find(mark, at - head + len(MASK))
				else:
					at = text.find(mark, end)
	return text


def _masked_other_spellings(text: str, secrets: frozenset[str]) -> str:
	"""The spellings that cost a search only when a cheap check says they may be there.

	The secret re-cased (`_recased`), hex in mixed case, UTF-16 text (LE or BE: a NUL beside every ASCII character, raw or
	escaped), HTML character references (``&#115;k-...``, ``&#x73;``) and base64 wrapped in
	lines (a MIME body at 76 characters, PEM at 64).
	"""
	# A character first, then the longer marks (a search for a short one reads the whole text).
	if "\u2026" in text or ("." in text and "..." in text) or ("\\" in text and "\\u2026" in text):
		text = _masked_elided(text, secrets)
	recased = _recased(secrets)[0]
	if recased is not None and recased.search(text):  # one read, whatever the secrets
		text = recased.sub(MASK, text)
	wide, hexes = _wide_and_hex(secrets)
	# A hex dump in any case, mixed too; the text is lower-cased only when the digits of a hex
	# spelling (the same in every case) are in it, and those are looked for when their first
	# digits are.
	if any(map(text.__contains__, _hex_first_digits(hexes))) and any(
		map(text.__contains__, _hex_digits(hexes))
	):
		lowered = text.lower()
		if any(h in lowered for h in hexes):
			text = re.sub("|".join(hexes), MASK, text, flags=re.IGNORECASE)
	if "\x00" in text or ("\\" in text and ("x00" in text or "u0000" in text)):  # NUL, escaped
		for spelling in wide:
			if spelling in text:
				text = text.replace(spelling, MASK)
	if "&" in text and ("&#" in text or "&amp;#" in text):  # one character first: the cheapest
		text = _runs_replaced(
			text,
			(_HTML_REF(), _HTML_RUN_START(), _HTML_RUN_REST()),
			_masked_html,
			secrets,
		)
	for newline, cr in (("\n", "\r"), ("\\n", "\\r")):  # real line breaks, or JSON's escapes
		if newline[0] in text and newline in text:
			text = _masked_wrapped(text, newline, cr, secrets)
	return text


@lru_cache(maxsize=256)
def _hex_digits(hexes: tuple[str, ...]) -> tuple[str, ...]:
	"""What a text holding one of the hex spellings, in any case, holds as is.

	Each spelling's longest run of digits (no letter changes case in it; no other character
	lower-cases to a digit); an empty string, which every text holds, for a spelling with none.
	"""
	return tuple(max(re.findall("[0-9]+", h), key=len, default="") for h in hexes)


@lru_cache(maxsize=256)
def _hex_first_digits(hexes: tuple[str, ...]) -> tuple[str, ...]:
	"""The first character of each of `_hex_digits` (a search for one character is the cheapest)."""
	return tuple({digits[:1] for digits in _hex_digits(hexes)})


def _hex_of(secret: str) -> set[str]:
	"""The hex spellings of a secret (`spellings`), in lower and upper case."""
	return {
		case(value.encode("utf-8").hex())
		for value in {secret, secret.strip()}
		if len(value) >= MIN_ENCODED
		for case in (str.lower, str.upper)
	}


_MIN_RECASED = 8
"""The shortest secret (with a digit or a symbol) masked in any case (`_recased`)."""
_CASELESS = LazyPattern(r"[\W\d_]")
"""A character no case change alters: a digit, a symbol, an underscore."""


@lru_cache(maxsize=256)
def _recased(secrets: frozenset[str]) -> tuple[re.Pattern[str] | None, tuple[str, ...]]:
	"""The pattern that masks these secrets in any case (a token echoed upper-cased), and them.

	A token's case is part of it, yet a program may re-case what it quotes (an error upper-
	cased, a hex key in capitals, a header lower-cased). Matched in any case: a secret of
	`_MIN_RECASED` characters or more holding a digit or a symbol (a character with no case),
	or one of `_MIN_KEY_LINE` or more of letters only. A shorter one of letters only may be a
	word (``password``, ``changeme``): re-cased, it would mask the word in prose, so it is
	masked as written only. One pattern for all: a text is read once, whatever their number.
	"""
	chosen = {
		value
		for value in (secret.strip() for secret in secrets)
		if len(value) >= _MIN_KEY_LINE or (len(value) >= _MIN_RECASED and _CASELESS().search(value))
	}
	if not chosen:
		return None, ()
	values = tuple(sorted(chosen, key=len, reverse=True))
	return re.compile("|".join(map(re.escape, values)), re.IGNORECASE), values


@lru_cache(maxsize=64)
def _recased_prefixes(secrets: frozenset[str]) -> tuple[frozenset[str], int]:
	"""The lower-cased proper prefixes of the secrets `_recased` masks in any case, the longest."""
	values = _recased(_by_length(secrets)[0])[1]
	prefixes = frozenset(v.lower()[:i] for v in values for i in range(1, len(v)))
	return prefixes, max(map(len, prefixes), default=0)


@lru_cache(maxsize=256)
def _wide_and_hex(secrets: frozenset[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
	r"""Each secret as UTF-16 (LE and BE, raw, ``\x00``- and ``\u0000``-escaped) and as hex."""
	wide: set[str] = set()
	hexes: set[str] = set()
	for secret in secrets:
		value = secret.strip()
		for codec in ("utf-16-le", "utf-16-be"):
			raw = value.encode(codec).decode("latin-1")
			wide.update((raw, raw.replace("\x00", "\\x00"), raw.replace("\x00", "\\u0000")))
		hexes.update(h.lower() for h in _hex_of(secret))
	return tuple(sorted(wide, key=len, reverse=True)), tuple(sorted(hexes, key=len, reverse=True))


_HTML_REF = LazyPattern(r"&(?:amp;)?#(?:[0-9]+|[xX][0-9A-Fa-f]+)")
_HTML_RUN_START = LazyPattern(r"[\s\"'<>](?=[^\s\"'<>]*+\Z)")
_HTML_RUN_REST = LazyPattern(r"[^\s\"'<>]*+")
_MIN_WRAPPED = 40
"""The shortest first line of a base64 text wrapped in lines that is joined and checked."""
_B64_LINE = LazyPattern(r"[A-Za-z0-9+/_=-]+")


def _masked_html(run: str, secrets: frozenset[str]) -> str:
	"""A run with HTML character references, masked whole when it decodes to a secret."""
	stripped, shortest = _stripped(secrets)
	if len(run) < shortest:  # a reference is never shorter than what it stands for
		return run
	import html

	decoded = run
	for _ in range(2):  # ``&amp;#115;``: encoded twice
		decoded = html.unescape(decoded)
		if any(s in decoded for s in stripped):
			return MASK
		if "&" not in decoded:
			break
	return run


def _masked_wrapped(text: str, newline: str, cr: str, secrets: frozenset[str]) -> str:
	"""Base64 wrapped in lines, masked whole when the joined text holds a secret's spelling.

	A block is a longest run of base64 lines (4+ characters each), from its first line of 40+
	characters on: a short word before it ("Hello", "MIME") has the same characters, and would
	else hide the block behind it. Only such a line starts a block, so the lines are read on
	from each of those alone.
	"""
	lines = text.split(newline)
	b64 = _B64_LINE().fullmatch
	starts = [
		n
		for n, line in enumerate(lines)
		if len(line) >= _MIN_WRAPPED
		and " " not in line  # prose: the cheapest check first
		and len(line.removesuffix(cr)) >= _MIN_WRAPPED
		and b64(line.removesuffix(cr))
	]
	out: list[str] = []
	copied = 0  # the lines copied to out
	read = 0  # where the last block read ended
	known = set(starts)
	for k in starts:
		if k < read:  # a long line inside the block already read
			continue
		j = k + 1
		while j < len(lines) and (
			j in known or (len(lines[j]) >= 4 and b64(lines[j].removesuffix(cr)))
		):
			j += 1
		read = j
		if j - k >= 2:
			joined = "".join(line.removesuffix(cr) for line in lines[k:j])
			if mask(joined, secrets) != joined:
				out.extend(lines[copied:k])
				out.append(MASK + (cr if lines[j - 1].endswith(cr) else ""))
				copied = j
	if not out:
		return text
	out.extend(lines[copied:])
	return newline.join(out)


def mask_bytes(data: bytes, secrets: frozenset[str]) -> bytes:
	"""Bytes with every spelling of every secret masked, as `mask` masks text.

	For bytes from outside that are kept or handed on (a file a tool returned): the bytes are
	read as Latin-1, one character per byte whatever the byte, so each spelling `mask` knows
	(raw, percent-encoded, base64, hex, UTF-16, escaped) is found wherever it stands, in text
	or not, and replaced by ``[redacted]``; a secret with characters beyond ASCII is looked for
	as its UTF-8 bytes too. A file that is not text is no longer what it was once masked (an
	image's length fields are wrong): the caller decides whether to keep it. A secret a format
	compresses (a PNG's image data, a zip) cannot be seen, as in any text.

	Args:
		data: The bytes.
		secrets: The raw secret values.

	Returns:
		``data`` itself when nothing was masked, else the masked bytes.
	"""
	if not secrets or not data:
		return data
	view = data.decode("latin-1")
	utf8 = {s.encode("utf-8").decode("latin-1") for s in secrets if not s.isascii()}
	masked = mask(view, secrets | frozenset(utf8) if utf8 else secrets)
	if masked == view:
		return data
	# Every character left is one of the view's (a byte) or of the mask (ASCII).
	return masked.encode("latin-1", errors="replace")


def mask_deep(value: Any, secrets: frozenset[str]) -> Any:
	"""A copy of a JSON-like value with every secret masked in every string (and key).

	Two keys of an object that mask alike are both kept, the later numbered (``[redacted] 2``).
	Any other object (a dataclass, a pydantic model, bytes, a set, an exception) is kept as is
	when neither its data nor its ``repr`` shows a secret; else it becomes its data masked (a
	dataclass's or model's fields), or its ``repr`` masked.

	Args:
		value: Strings, dicts, lists and tuples (as lists), numbers, other objects.
		secrets: The raw secret values.
	"""
	if isinstance(value, str):
		return mask(value, secrets)
	if isinstance(value, dict):
		out = {
			(mask(k, secrets) if isinstance(k, str) else k): mask_deep(v, secrets)
			for k, v in value.items()
		}
		return out if len(out) == len(value) else _numbered_keys(value, secrets)
	if isinstance(value, (list, tuple)):
		return [mask_deep(v, secrets) for v in value]
	if value is None or isinstance(value, int | float):
		return value
	return _masked_object(value, secrets)


def mask_fields(
	obj: Any,
	text: Callable[[str], str],
	deep: Callable[[Any], Any],
	*,
	skip: Collection[str] = (),
) -> None:
	"""Mask the secrets in what a dataclass instance holds, in place (a frozen one too).

	Its fields and the attributes set beside them are read. Text, dicts, lists and tuples are
	masked as they are (``deep``); a value ``deep`` cannot walk (an object, a set, bytes, inside
	them too) whose text still shows a secret becomes its JSON data (such a value as its text),
	masked: fail closed. Numbers, booleans and None are left as they are.

	Args:
		obj: The dataclass instance.
		text: Masks the secrets in a text.
		deep: Masks the secrets in a JSON-like value, returning a copy (`mask_deep`).
		skip: The names of the fields left as they are.
	"""
	names = [f.name for f in fields(obj)]
	names += [n for n in getattr(obj, "__dict__", ()) if n not in names]
	for name in names:
		value = getattr(obj, name)
		if name in skip or value is None or isinstance(value, bool | int | float):
			continue
		masked = deep(value)
		if isinstance(value, tuple):
			masked = tuple(masked)
		shown = repr(masked)
		if text(shown) != shown:  # what deep could not reach shows a secret
			masked = deep(json.loads(json.dumps(masked, default=repr)))
		if masked is not value:
			object.__setattr__(obj, name, masked)


def _numbered_keys(value: dict[Any, Any], secrets: frozenset[str]) -> dict[Any, Any]:
	"""`mask_deep` of an object two of whose keys mask alike: the later ones numbered, none lost.

	``{"sk-a…": 1, "sk-b…": 2}`` is ``{"[redacted]": 1, "[redacted] 2": 2}``.
	"""
	out: dict[Any, Any] = {}
	for k, v in value.items():
		out[free_key(mask(k, secrets), out) if isinstance(k, str) else k] = mask_deep(v, secrets)
	return out


def free_key(key: str, taken: Mapping[Any, Any]) -> str:
	"""A key that no other key of its object has taken: ``key``, else ``key 2``, ``key 3``...

	For an object whose keys are rewritten (masked, redacted): two that come out alike are both
	kept, and no value is lost.

	Args:
		key: The rewritten key.
		taken: The object's keys so far.
	"""
	if key not in taken:
		return key
	n = 2
	while f"{key} {n}" in taken:
		n += 1
	return f"{key} {n}"


def mask_exception(error: BaseException, secrets: frozenset[str]) -> None:
	"""Mask, in place, the secrets an exception and its chain show, as ``traceback`` prints them.

	The chain is what ``traceback`` prints (``__cause__``, ``__context__``, a group's
	exceptions). Each exception's arguments, notes, public attributes of JSON-like values (a
	text built from one: an SDK's ``body``) and an ``OSError``'s file names are masked; each
	keeps its type, so code that inspects the cause still can. A cause whose text still shows a
	secret (pydantic's ``ValidationError`` repeats each ``input_value``; a ``__str__`` reading an
	object) is replaced in the chain by a masked one of its type (`_stand_in`).

	Args:
		error: The exception.
		secrets: The raw secret values.
	"""
	seen: dict[int, BaseException] = {}
	todo: list[BaseException | None] = [error]
	while todo:
		exc = todo.pop()
		if exc is None or id(exc) in seen:
			continue
		seen[id(exc)] = exc
		_mask_own(exc, secrets)
		todo += (exc.__cause__, exc.__context__)
		if isinstance(exc, BaseExceptionGroup):
			todo += exc.exceptions
	_relink(error, secrets)


def _relink(error: BaseException, secrets: frozenset[str]) -> None:
	"""Link a masked stand-in in place of each exception of the chain that still shows a secret.

	Innermost first, so a stand-in carries links already relinked; a group whose member was
	replaced is rebuilt (`_regrouped`: its ``exceptions`` cannot change in place). ``error``
	itself is kept (the caller holds it), masked in place only.
	"""
	linked: dict[int, BaseException] = {}  # id of an exception: what to link in its place
	entered: set[int] = set()
	todo: list[tuple[BaseException, bool]] = [(error, False)]
	while todo:
		exc, ready = todo.pop()
		if id(exc) in linked:
			continue
		group = exc.exceptions if isinstance(exc, BaseExceptionGroup) else ()
		if not ready:
			if id(exc) in entered:
				continue  # a chain that loops: relinked where it was entered first
			entered.add(id(exc))
			todo.append((exc, True))
			for inner in (exc.__cause__, exc.__context__, *group):
				if inner is not None and id(inner) not in entered:
					todo.append((inner, False))
			continue
		for name in ("__cause__", "__context__"):
			inner = getattr(exc, name)
			if inner is not None and linked.get(id(inner), inner) is not inner:
				suppressed = exc.__suppress_context__  # setting __cause__ would set it
				setattr(exc, name, linked[id(inner)])
				exc.__suppress_context__ = suppressed
		made = exc
		if exc is not error:
			if isinstance(exc, BaseExceptionGroup):
				members = [linked.get(id(m), m) for m in group]
				if any(m is not o for m, o in zip(members, group, strict=True)) or _shows(
					exc, secrets
				):
					made = _regrouped(exc, members, secrets)
			elif _shows(exc, secrets):
				made = _stand_in(exc, secrets)
		linked[id(exc)] = made


def _regrouped(
	group: BaseExceptionGroup[Any], members: list[Any], secrets: frozenset[str]
) -> BaseException:
	"""A group rebuilt with its members' stand-ins, of its type where it can be (``derive``)."""
	made: BaseException | None
	try:
		made = group.derive(members)
	except Exception:  # a subclass whose derive needs more
		made = None
	if made is None or _shows(made, secrets):
		made = BaseExceptionGroup(mask(group.message, secrets), members)
	_carry(group, made, secrets)
	return made


def _carry(exc: BaseException, made: BaseException, secrets: frozenset[str]) -> None:
	"""Give a stand-in the traceback, links and (masked) notes of the exception it replaces."""
	made.__traceback__ = exc.__traceback__
	made.__cause__, made.__context__ = exc.__cause__, exc.__context__
	made.__suppress_context__ = exc.__suppress_context__
	notes = getattr(exc, "__notes__", None)
	if isinstance(notes, list):
		made.__notes__ = [mask(n, secrets) if isinstance(n, str) else n for n in notes]


def _mask_own(exc: BaseException, secrets: frozenset[str]) -> None:
	"""Mask an exception's arguments, notes, JSON-like public attributes and file names."""
	try:
		args = list(exc.args)
		masked = mask_deep(args, secrets)
		if masked != args:
			exc.args = tuple(masked)
		notes = getattr(exc, "__notes__", None)
		if isinstance(notes, list) and notes:
			exc.__notes__ = [mask(n, secrets) if isinstance(n, str) else n for n in notes]
	except Exception:  # an exception that refuses new arguments keeps its own
		pass
	if isinstance(exc, OSError):  # printed beside its arguments: [Errno 2] ...: '/path'
		for name in ("filename", "filename2"):
			value = getattr(exc, name, None)
			if isinstance(value, str) and (kept := mask(value, secrets)) != value:
				setattr(exc, name, kept)
	for name, value in list(getattr(exc, "__dict__", {}).items()):
		if name.startswith("_") or not isinstance(value, str | dict | list | tuple):
			continue  # an object (a response, a result) is kept: code reads it
		try:
			kept = mask_deep(value, secrets)
			if kept != value:
				setattr(exc, name, tuple(kept) if isinstance(value, tuple) else kept)
		except Exception:  # read-only, or values that cannot be compared: its text is checked
			continue


def _text(exc: BaseException) -> str:
	"""What ``traceback`` prints of an exception itself: its type, its text and its notes."""
	import traceback

	return "".join(traceback.format_exception_only(exc))


def _shows(exc: BaseException, secrets: frozenset[str]) -> bool:
	"""Whether an exception, masked in place, still prints a secret."""
	text = _text(exc)
	return mask(text, secrets) != text


class MaskedError(Exception):
	"""Stands in a chain for an exception that still showed a secret (`mask_exception`).

	Used when it could be neither masked in place nor made again as its own type; its text
	names that type.
	"""


def _stand_in(exc: BaseException, secrets: frozenset[str]) -> BaseException:
	"""An exception to link instead of ``exc``, which still prints a secret: masked, same type.

	A pydantic ``ValidationError`` is rebuilt from its errors, their input hidden and masked;
	another exception becomes an instance of a subclass of its type (its name and module)
	whose text is its own masked. Its traceback, chain and notes go with it. When neither
	can be made, a `MaskedError` naming the type stands there.
	"""
	said = mask(_said(exc), secrets)
	made: BaseException | None = _rebuilt_validation(exc, secrets)
	if made is None:
		try:
			kind = _stand_in_type(type(exc))
			made = kind.__new__(kind)
			made.args = (said,)
			made.__dict__.update(getattr(exc, "__dict__", {}))
			made._openmolt_said = said  # type: ignore[attr-defined]
		except Exception:  # a type that cannot be made so (a C type's own constructor)
			made = None
	if made is None or _shows(made, secrets):
		made = MaskedError(f"{type(exc).__module__}.{type(exc).__qualname__}: {said}")
	_carry(exc, made, secrets)
	return made


def _said(exc: BaseException) -> str:
	try:
		return str(exc)
	except Exception:  # a broken __str__: traceback prints this too
		return "<exception str() failed>"


_MASKED_TYPES: dict[type[BaseException], type[BaseException]] = {}


def _stand_in_type(kind: type[BaseException]) -> type[BaseException]:
	"""A subclass of ``kind`` that prints the masked text it was given, under ``kind``'s name."""
	made = _MASKED_TYPES.get(kind)
	if made is None:
		made = _MASKED_TYPES[kind] = _subclass(kind)
	return made


def _subclass(kind: type[BaseException]) -> type[BaseException]:

	def text(self: BaseException) -> str:
		return str(getattr(self, "_openmolt_said", ""))

	def shown(self: BaseException) -> str:
		return f"{kind.__qualname__}({text(self)!r})"

	namespace = {
		"__module__": kind.__module__,
		"__qualname__": kind.__qualname__,
		"__str__": text,
		"__repr__": shown,
		"__doc__": kind.__doc__,
	}
	return type(kind.__name__, (kind,), namespace)


def _rebuilt_validation(exc: BaseException, secrets: frozenset[str]) -> BaseException | None:
	"""A pydantic ``ValidationError`` rebuilt with its inputs masked and hidden (None: not one)."""
	build = getattr(type(exc), "from_exception_data", None)
	errors = getattr(exc, "errors", None)
	if build is None or not callable(errors):
		return None
	try:
		details = []
		for error in errors():
			detail = {
				"type": error["type"],
				"loc": tuple(mask_deep(list(error["loc"]), secrets)),
				"input": mask_deep(error.get("input"), secrets),
			}
			context = error.get("ctx")
			if context:
				cause = context.get("error")
				if isinstance(cause, BaseException):
					mask_exception(cause, secrets)
				detail["ctx"] = {
					k: v if isinstance(v, BaseException) else mask_deep(v, secrets)
					for k, v in context.items()
				}
			details.append(detail)
		made: BaseException = build(str(getattr(exc, "title", "")), details, hide_input=True)
	except Exception:  # an error type it cannot rebuild (a custom one): stood in otherwise
		return None
	return made


def _masked_object(value: Any, secrets: frozenset[str]) -> Any:
	"""An object that is not JSON-like, as is or masked (`mask_deep`)."""
	data = _data_of(value)
	if data is not None:
		masked = mask_deep(data, secrets)
		if masked != data:
			return masked
	try:
		shown = repr(value)
	except Exception:  # a broken repr shows nothing
		return value
	masked_text = mask(shown, secrets)
	return value if masked_text == shown else masked_text


def _data_of(value: Any) -> Any:
	"""The data an object holds as JSON-like values, or None (its repr is all there is)."""
	import dataclasses

	try:
		if isinstance(value, bytes | bytearray):
			return bytes(value).decode("utf-8", "replace")
		if isinstance(value, set | frozenset):
			return list(value)
		if dataclasses.is_dataclass(value) and not isinstance(value, type):
			return dataclasses.asdict(value)
		dump = getattr(value, "model_dump", None)
		if callable(dump) and not isinstance(value, type):
			return dump(mode="json")
	except Exception:  # an object that cannot give its data: its repr is checked
		return None
	return None


def _runs_replaced(
	text: str,
	patterns: tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]],
	replaced: Callable[[str, frozenset[str]], str],
	secrets: frozenset[str],
) -> str:
	"""The text with each run holding an encoded character replaced as ``replaced`` says.

	A run is a longest stretch of characters that end none (a percent-encoded run ends at
	whitespace or a quote, a ``&``, a ``?``...). The encoded characters are searched for (a
	literal first: fast), and each run around one is taken once: back to the last character
	that ends a run before it, on to the next after it. Linear in the text, where a pattern for
	the whole run tries every run, backtracking through each (slow on bytes that are not text).

	Args:
		text: The text.
		patterns: The encoded character; a character that ends a run followed by none up to
			the end (searched for before the encoded character: the last one); the characters
			that go on a run.
		replaced: A run's replacement, given the run and ``secrets`` (the run itself to keep it).
		secrets: The raw secret values.
	"""
	encoded, start_of, rest = patterns
	pieces: list[str] = []
	done = 0  # what is copied to pieces
	scanned = 0  # where the last run ended (a character that ends a run, or the text's end)
	while found := encoded.search(text, scanned):
		at = found.start()
		# The last end before it: in the characters just before it (a run is short), else in
		# all since the last run (read once: the next run starts after it).
		near = at - 64 if at - 64 > scanned else scanned
		before = start_of.search(text, near, at)
		if before is None and near > scanned:
			before = start_of.search(text, scanned, near)
		start = before.end() if before else scanned
		end = rest.match(text, found.end()).end()  # type: ignore[union-attr]
		scanned = end
		run = text[start:end]
		new = replaced(run, secrets)
		if new != run:
			pieces += (text[done:start], new)
			done = end
	if not pieces:
		return text
	pieces.append(text[done:])
	return "".join(pieces)


@lru_cache(maxsize=256)
def _by_length(secrets: frozenset[str]) -> tuple[frozenset[str], re.Pattern[str] | None]:
	"""The secrets masked wherever they stand, and a pattern for the very short ones.

	A secret shorter than `MIN_ENCODED` characters (a 2-letter value some test or setting calls
	a password) is masked where it stands alone, never inside a longer word or number: masked
	everywhere, ``es`` would turn every log line, event and error into noise.
	"""
	short = sorted((v for v in secrets if len(v.strip()) < MIN_ENCODED), key=len, reverse=True)
	if not short:
		return secrets, None
	alone = "|".join(re.escape(v) for v in short)
	pattern = re.compile(rf"(?<![0-9A-Za-z_])(?:{alone})(?![0-9A-Za-z_])")
	return secrets - frozenset(short), pattern


def _masked_run(run: str, secrets: frozenset[str]) -> str:
	"""A percent-encoded run, masked whole when it decodes to something holding a secret.

	It is decoded up to three times: a URL inside another URL's query (an OAuth2 redirect) has
	its secret percent-encoded twice (``%252F``). Decoding never lengthens a text, so a run
	shorter than every secret is kept unread; and ``unquote_plus`` reads the same as ``unquote``
	when no step it would decode holds a ``+``. Each decoding is read as the other encoders
	that wrap one another write it (`_decoded_holds`): re-cased, and JSON-escaped.
	"""
	stripped, shortest = _stripped(secrets)
	if len(run) < shortest:
		return run
	lowered = _recased_lower(secrets)
	plus = False  # whether a text the first decoder read holds a "+"
	for decode in (unquote, unquote_plus):
		decoded = run
		for _ in range(3):
			plus = plus or "+" in decoded
			decoded = decode(decoded)
			if _decoded_holds(decoded, stripped, lowered):
				return MASK
			if "%" not in decoded:
				break
		if not plus:
			break
	return run


def _decoded_holds(decoded: str, stripped: tuple[str, ...], lowered: tuple[str, ...]) -> bool:
	r"""Whether a decoded run holds a secret: as is, re-cased, or JSON-escaped inside it.

	A percent-encoded text an echo re-cased whole (``SK-PROJ-ABC123%2FXYZ``: the secrets
	`_recased` masks in any case), and a JSON text sent in a form (``payload=%7B%22k%22%3A...``:
	Slack's, whose secret holding a ``"`` or a non-ASCII letter is JSON-escaped, ``é``).
	"""
	readings = (decoded, _unescaped(decoded)) if "\\" in decoded else (decoded,)
	return any(
		any(s in text for s in stripped) or (lowered and any(s in text.lower() for s in lowered))
		for text in readings
	)


@lru_cache(maxsize=256)
def _recased_lower(secrets: frozenset[str]) -> tuple[str, ...]:
	"""The secrets `_recased` masks in any case, lower-cased (a decoded run is read so)."""
	return tuple(v.lower() for v in _recased(secrets)[1])


@lru_cache(maxsize=256)
def _stripped(secrets: frozenset[str]) -> tuple[tuple[str, ...], int]:
	"""The secrets stripped (as a decoded run is searched for them), and the shortest's length."""
	stripped = tuple(s.strip() for s in secrets)
	return stripped, min(map(len, stripped), default=0)


_ESCAPE = LazyPattern(r"\\(?:u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|x[0-9A-Fa-f]{2})")
_UNESCAPE = LazyPattern(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|x[0-9A-Fa-f]{2}|.)", re.DOTALL)
_ODD_ESCAPE = LazyPattern(r"\\[^\\'\"abfnrtvxuU]")
"""An escape the codec does not know (it warns of it), or an octal one: decoded by hand."""
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "0": "\0"}
_ESCAPED_RUN_ENDS = '"<>\n\r\t\v\f'
_ESCAPED_RUN = LazyPattern(r'(?:[^"<>\n\r\t\v\f\\]++|\\.)*+', re.DOTALL)
"""What ends an escaped run: a JSON string's quote, a tag, a line. Not a space (JSON writes it as
is, inside a secret too), nor ``'`` (a JSON string holds it as is)."""
_OPEN_ESCAPE = LazyPattern(r"\\(?:u[0-9A-Fa-f]{0,3}|U[0-9A-Fa-f]{0,7}|x[0-9A-Fa-f]?)?$")


def _escaped_run_ends(char: str) -> bool:
	return char in _ESCAPED_RUN_ENDS


def _masked_escapes(text: str, secrets: frozenset[str]) -> str:
	r"""The text with each run of ``\u``/``\x``-escaped characters masked when it holds a secret.

	The fixed spellings are what ``json.dumps`` and ``repr`` write; another encoder escapes
	other characters (an HTML-safe JSON's ``\u003c``, every character, upper-case hex
	``\u00E9``, a byte string's ``\xc3\xa9``), and a model may escape a few letters of a
	JSON string. A run (up to a double quote, a tag's bracket or a line end) holding such an
	escape is decoded, twice when it is escaped twice, and masked when what it decodes to shows
	a secret in any spelling (`_run_unescaped_masked`).
	"""
	pieces: list[str] = []
	done = 0  # what is copied to pieces
	scanned = 0  # where the last run ended: an escape before it belongs to a run already read
	while found := _ESCAPE().search(text, scanned):
		start = max(
			scanned, *(text.rfind(c, scanned, found.start()) + 1 for c in _ESCAPED_RUN_ENDS)
		)
		end = _ESCAPED_RUN().match(text, found.start()).end()  # type: ignore[union-attr]
		scanned = max(end, found.end())
		run = text[start:end]
		masked = _run_unescaped_masked(run, secrets)
		if masked is not run:
			pieces += (text[done:start], masked)
			done = end
	if not pieces:
		return text
	pieces.append(text[done:])
	return "".join(pieces)


def _run_unescaped_masked(run: str, secrets: frozenset[str]) -> str:
	r"""An escaped run masked: itself when what it decodes to (once or twice) shows no secret.

	A secret in any spelling `mask` knows counts (the base64, percent-encoded or hex text of a
	key, a few of its letters ``\u``-escaped in a JSON string: a JSON reader decodes them).
	When the decoded text shows it as text (not only as UTF-16 or as UTF-8 bytes), the run is
	that text masked and escaped again as JSON as often as it was decoded, so a JSON string
	reads as the same words with ``[redacted]`` where the secret was (as its streamed pieces,
	decoded first, do); otherwise the run is masked whole.
	"""
	decoded = run
	for times in (1, 2):
		decoded = _unescaped(decoded)
		readings = _readings(decoded)
		if not any(s.strip() in r for s in secrets for r in readings) and all(
			_mask(r, secrets, escapes=False) == r for r in readings
		):
			if "\\" not in decoded:
				break
			continue
		plain = _joined_pairs(decoded)
		# Whole in the plain text, or the run is masked whole: a secret shown whole in another
		# reading only (UTF-8 bytes of a key with an 'é'), whose plain reading shows but a cut.
		masked = _mask(plain, secrets, escapes=False, cuts=False)
		if masked == plain:
			return MASK  # shown in another reading only
		for _ in range(times):  # a lone surrogate stays an escape: the text must encode
			masked = _LONE().sub(_escape_lone, json.dumps(masked, ensure_ascii=False)[1:-1])
		return masked if _mask(masked, secrets, escapes=False) == masked else MASK
	return run


_LONE = LazyPattern("[\ud800-\udfff]")


def _escape_lone(found: re.Match[str]) -> str:
	return f"\\u{ord(found[0]):04x}"


def _joined_pairs(decoded: str) -> str:
	r"""The decoded text with its surrogate pairs joined (as JSON reads ``\ud83d\ude00``)."""
	try:
		return decoded.encode("utf-16", "surrogatepass").decode("utf-16")
	except UnicodeError:
		return decoded


def _readings(decoded: str) -> set[str]:
	r"""A decoded run as is, and as other text it may be.

	With its surrogate pairs joined, its ``\x`` bytes read as UTF-8, and without the NULs of
	UTF-16 text (``h\x00\xe9\x00``: a byte string of UTF-16, LE or BE).
	"""
	out = {decoded}
	if "\x00" in decoded:
		out.add(decoded.replace("\x00", ""))
	try:
		out.add(decoded.encode("utf-16", "surrogatepass").decode("utf-16"))  # \\ud83d\\ude00
	except UnicodeError:
		pass
	try:
		out.add(decoded.encode("latin-1").decode("utf-8"))  # a byte string's \\xc3\\xa9
	except UnicodeError:
		pass
	return out


def _unescaped(run: str) -> str:
	"""The run with its backslash escapes decoded (by the codec; a malformed one by hand)."""
	run = run.replace("\\/", "/")
	if not _ODD_ESCAPE().search(run):  # the codec warns of an escape it does not know
		try:
			return run.encode("latin-1", "backslashreplace").decode("unicode_escape")
		except UnicodeDecodeError:  # ``C:\\xyz``: a backslash that starts no escape
			pass
	return _UNESCAPE().sub(_unescape, run)


def _unescape(escape: re.Match[str]) -> str:
	code = escape[1]
	if len(code) == 1:
		return _SIMPLE_ESCAPES.get(code, code)
	try:
		return chr(int(code[1:], 16))
	except (ValueError, OverflowError):  # beyond U+10FFFF
		return escape[0]


@lru_cache(maxsize=64)
def _prefixes(
	secrets: frozenset[str],
) -> tuple[frozenset[str], int, frozenset[str], int, frozenset[str]]:
	"""What a held-back tail may be: the start of a spelling, and of a hex spelling in any case.

	Every proper prefix of every spelling of the secrets and of their UTF-16 text (a NUL beside
	each character), and a short secret whole (the next character says whether it stands alone);
	the lower-cased prefixes of the hex spellings (`mask` finds them in any case, mixed too); the
	longest of each; and the characters they are made of (a tail is read back to the first
	character that is none of them: ordinary text's last space).
	"""
	long = _by_length(secrets)[0]
	short = secrets - long
	every: set[str] = set().union(*(spellings(s) for s in long)) if long else set()
	every |= {w for w in _wide_and_hex(long)[0] if "\x00" in w} if long else set()
	prefixes = {sp[:i] for sp in every | short for i in range(1, len(sp))} | short
	hexes = _wide_and_hex(long)[1] if long else ()
	lowered = frozenset(h[:i] for h in hexes for i in range(1, len(h)))
	return (
		frozenset(prefixes),
		max(map(len, prefixes), default=0),
		lowered,
		max(map(len, lowered), default=0),
		frozenset("".join(prefixes)) | (_HEX_DIGITS if hexes else frozenset()),
	)


_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def held_back(text: str, secrets: frozenset[str]) -> int:
	"""How many trailing characters of ``text`` could be the start of a secret's spelling.

	Text that is sent piece by piece (a streamed reply) must hold them back until the next piece
	says whether a secret follows: masking each piece alone would let a secret split across two
	pieces through. A spelling `mask` finds by decoding a run (percent-encoded, escaped, HTML
	references, base64 wrapped in lines) is held by `StreamMask` until the run ends.

	Args:
		text: The text not yet sent.
		secrets: The raw secret values.
	"""
	if not secrets or not text:
		return 0
	prefixes, longest, hexes, longest_hex, alphabet = _prefixes(secrets)
	tail, most = 0, min(max(longest, longest_hex), len(text))
	while tail < most and text[-1 - tail] in alphabet:  # how far back a spelling's characters go
		tail += 1
	found = 0
	for k in range(min(longest, tail), 0, -1):
		if text[-k:] in prefixes:
			found = k
			break
	if hexes:  # hex in any case: the trailing hex digits, lower-cased
		digits = 0
		most = min(longest_hex, tail)
		while digits < most and text[-1 - digits] in _HEX_DIGITS:
			digits += 1
		for k in range(digits, found, -1):
			if text[-k:].lower() in hexes:
				found = k
				break
	recased, longest_recased = _recased_prefixes(secrets)  # the secret in any case
	for k in range(min(longest_recased, len(text)), found, -1):
		if text[-k:].lower() in recased:
			return k
	return found


class StreamMask:
	r"""Masks secrets in text that arrives in pieces, holding back what may start a secret.

	What is sent of the stream is what `mask` makes of the whole text: a tail that may start a
	spelling is held back (`held_back`), and so is a run `mask` decodes whole (percent-encoded,
	``\u``/``\x``-escaped, with HTML character references, base64 wrapped in lines) until it
	ends. Ordinary text is held back by a character or two.

	Args:
		secrets: Returns the raw secret values (asked at each piece: tokens may be new).
	"""

	__slots__ = ("_before", "_held", "_secrets")

	def __init__(self, secrets: Callable[[], Iterable[str]]) -> None:
		self._secrets = secrets
		self._held = ""
		self._before = ""  # the last characters sent: a short secret is masked only alone

	def feed(self, piece: str) -> str:
		"""The masked text that can be sent now (possibly empty)."""
		text = self._held + piece
		secrets = frozenset(self._secrets())
		keep = max(
			held_back(text, secrets),
			_open_run(text, secrets),
			_open_escaped_run(text, secrets),
			_open_html_run(text, secrets),
			_open_elided(text, secrets),
			_open_split(text, secrets),
			# with the last characters sent: where a line starts (a break may be split)
			min(_open_wrapped(self._before + text, secrets, fresh=not self._before), len(text)),
		)
		cut = _uncrossed(text, len(text) - keep, secrets) if keep else len(text)
		self._held = text[cut:]
		return self._masked(text[:cut], secrets, text[cut : cut + 1]) if cut else ""

	def flush(self) -> str:
		"""The masked rest, once no more pieces come."""
		text, self._held = self._held, ""
		return self._masked(text, frozenset(self._secrets())) if text else ""

	def _masked(self, text: str, secrets: frozenset[str], after: str = "") -> str:
		"""The text masked, read between the character sent before it and the one held after.

		A short secret is masked only where it stands alone (`_by_length`): its edges are
		read in the whole stream, not in the part sent now (``umbre`` sent while the ``l`` of
		``umbrella`` is held for another secret's sake is inside a word).
		"""
		before, self._before = self._before[-1:], (self._before + text)[-2:]
		if (before or after) and _by_length(secrets)[1] is not None:
			masked = mask(before + text + after, secrets)
			if masked.startswith(before) and masked.endswith(after):
				return masked[len(before) : len(masked) - len(after)]
			if before:  # the held character is masked with what follows it: read without it
				masked = mask(before + text, secrets)
				if masked.startswith(before):
					return masked[len(before) :]
		return mask(text, secrets)


def _uncrossed(text: str, cut: int, secrets: frozenset[str]) -> int:
	"""The cut moved back to the start of any spelling of a secret it would split.

	A run held back from the middle of a secret (``SECRET%41``: the percent-encoded run starts
	after the secret's ``=``) would send the secret's first part now and its rest later, neither
	masked; so would a tail held back for another spelling's sake inside a hex dump in mixed
	case or UTF-16 text.
	"""
	every, hexes, alphabet = _every_spelling(secrets)
	if not (0 < cut < len(text) and text[cut - 1] in alphabet and text[cut] in alphabet):
		return cut  # a spelling across the cut would hold the characters on both sides of it
	folded = text.translate(_ASCII_LOWER) if hexes else text
	moved = True
	while moved and cut:
		moved = False
		for spelling, where in (*((s, text) for s in every), *((h, folded) for h in hexes)):
			start = where.find(spelling, max(0, cut - len(spelling) + 1), cut + len(spelling) - 1)
			if start != -1 and start < cut:
				cut, moved = start, True
	return cut


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


@lru_cache(maxsize=64)
def _every_spelling(
	secrets: frozenset[str],
) -> tuple[tuple[str, ...], tuple[str, ...], frozenset[str]]:
	"""The spellings a held-back tail must not split, and the characters they are made of.

	The fixed ones, UTF-16 text and a short secret as is; the hex ones and the secrets masked
	in any case (`_recased`) in lower case (ASCII: they are searched in the text so folded).
	"""
	long = _by_length(secrets)[0]
	if not long:
		return (), (), frozenset()
	wide, hexes = _wide_and_hex(long)
	every = set().union(*(spellings(s) for s in long)) | {w for w in wide if "\x00" in w}
	every |= secrets - long  # a short secret, as is
	recased = _recased(long)[1]
	folded = hexes + tuple(v.translate(_ASCII_LOWER) for v in recased)
	cased = "".join(recased)
	alphabet = frozenset("".join(every) + cased.lower() + cased.upper()) | _HEX_DIGITS
	return tuple(every), folded, alphabet


def _open_split(text: str, secrets: frozenset[str]) -> int:
	r"""How many trailing characters of ``text`` may be a secret a line break cuts in two.

	`mask` masks a secret split by a break (`_masked_split`): a line that ends with a secret's
	start, the break (or its ``\r``), and what of the next line may go on with the secret's
	rest, are held until what follows the rest is there, or the line is not the secret's.
	"""
	if "\n" not in text and not text.endswith("\r"):
		return 0
	if text.endswith("\r"):  # a CRLF whose LF is still to come
		brk, after = len(text) - 1, ""
	else:
		nl = text.rfind("\n")
		brk = nl - 1 if nl > 0 and text[nl - 1] == "\r" else nl
		after = text[nl + 1 :].lstrip(" \t")
		if "\r" in after:
			return 0
	before = text[:brk]
	last = before[-1:]
	if not last:
		return 0
	held = 0
	for secret in secrets:
		if len(secret) < MIN_KEY or "\n" in secret or len(after) >= len(secret):
			continue
		# Its rest whole at the end is held too: a hold of what follows must not cut it.
		most = min(len(before), len(secret) - len(after))
		at = secret.find(last, 0, most)  # the line's last character ends the secret's start
		while at != -1:
			p = at + 1
			if secret[p:].startswith(after) and before.endswith(secret[:p]):
				held = max(held, len(text) - brk + p)
			at = secret.find(last, p, most)
	return held


def _open_elided(text: str, secrets: frozenset[str]) -> int:
	"""How many trailing characters of ``text`` may be a secret with its middle cut out.

	`mask` masks a secret's start and end around an ellipsis when together they tell it
	(`_masked_elided`); sent before the end came, the start would go out alone. Held: a
	secret's start, then an ellipsis (or its first characters) and what may begin its end.
	"""
	long, alphabet, longest = _elided_secrets(secrets)
	if not long:
		return 0
	window = max(0, len(text) - 2 * longest - 8)
	ats = []
	for mark in _ELLIPSES:
		at = text.rfind(mark, window)
		if at != -1:
			after = text[at + len(mark) :]
			if len(after) < longest and all(c in alphabet for c in after):  # its end may come
				ats.append((at, after))
		for k in range(len(mark) - 1, 0, -1):  # the mark itself may be coming
			if text.endswith(mark[:k]):
				ats.append((len(text) - k, ""))
				break
	held = 0
	for at, after in ats:
		for secret in long:
			if after in secret[1:]:
				head = _elided_at(text, at, len(text), secret)[0]
				if head >= _ELIDED_SIDE:
					held = max(held, len(text) - at + head)
	return held


@lru_cache(maxsize=64)
def _elided_secrets(secrets: frozenset[str]) -> tuple[tuple[str, ...], frozenset[str], int]:
	"""The secrets `_masked_elided` looks for, the characters they hold, and the longest's length."""
	long = tuple(s for s in secrets if len(s.strip()) >= MIN_ENCODED)
	return long, frozenset("".join(long)), max(map(len, long), default=0)


def _open_run(text: str, secrets: frozenset[str]) -> int:
	"""How many trailing characters of ``text`` are a percent-encoded run that may go on.

	`mask` decodes such a run whole (an encoder's safe set the fixed spellings miss, every
	character encoded); sent in parts, no part would decode to the secret.
	"""
	if "%" not in text or not any(len(s.strip()) >= MIN_ENCODED for s in secrets):
		return 0
	start = len(text)
	while start and not (text[start - 1] in _RUN_ENDS or text[start - 1].isspace()):
		start -= 1
		if len(text) - start > _MAX_HELD_RUN:
			return _long_run_tail(text[start:], secrets, _PERCENT_READINGS, _OPEN_PERCENT())
	return len(text) - start if "%" in text[start:] else 0


def _long_run_tail(
	run: str,
	secrets: frozenset[str],
	readings: tuple[Callable[[str], str], ...],
	opened: re.Pattern[str],
) -> int:
	"""How much of a run too long to hold whole a stream holds back: what may start a secret.

	``run`` is the last `_MAX_HELD_RUN` + 1 characters of the run; what is held is the encoded
	text of what, decoded, may start a secret (`held_back`). The rest goes out, and what `mask` makes of it alone: cut anywhere else, the first part of
	a secret encoded in the run would go now and its rest later, neither decoding to it. The
	cut falls where each reading (``readings``: the decodings `mask` tries) of the two parts
	joins to the reading of the whole, so no part of the run's text is read otherwise.

	Args:
		run: The run's end.
		secrets: The raw secret values.
		readings: How `mask` decodes such a run (once, twice...).
		opened: What ends a reading that stops inside an encoded character (``%4``): held
			with what comes before it.
	"""
	keep = 0
	for read in readings:
		end = len(run)  # where the run's text stops being read whole: an open escape is held
		while end > len(run) - _MAX_OPEN and (
			opened.search(run, 0, end) or opened.search(read(run[:end]))
		):
			end -= 1
		whole = read(run[:end])
		need = held_back(whole, secrets)
		if not need:
			keep = max(keep, len(run) - end)
			continue
		for cut in range(end - 1, -1, -1):
			rest = read(run[cut:end])
			if len(rest) >= need and whole.endswith(rest) and read(run[:cut]) + rest == whole:
				keep = max(keep, len(run) - cut)
				break
		else:
			return len(run)
	return keep


_MAX_OPEN = 16
"""The most characters of an encoded character a run may end inside (``&#x10FFFF``, ``\\U0010FF``)."""
_OPEN_PERCENT = LazyPattern(r"%[0-9A-Fa-f]?$")
_OPEN_HTML_TAIL = LazyPattern(
	r"&(?:a(?:m(?:p(?:;(?:#(?:[0-9]*|[xX][0-9A-Fa-f]*))?)?)?)?|#(?:[0-9]*|[xX][0-9A-Fa-f]*))?$"
)
"""A reference that may go on (``&#11`` before the ``5;`` of ``&#115;``: read alone, another)."""


def _twice(read: Callable[[str], str]) -> Callable[[str], str]:
	return lambda text: read(read(text))


def _html_unescape(text: str) -> str:
	import html

	return html.unescape(text)


_PERCENT_READINGS = (unquote, _twice(unquote), _twice(_twice(unquote)), unquote_plus)
_HTML_READINGS = (_html_unescape, _twice(_html_unescape))
_ESCAPED_READINGS = (_unescaped, _twice(_unescaped))

_OPEN_HTML_REF = LazyPattern(r"&(?:a(?:m(?:p(?:;(?:#[xX]?)?)?)?)?|#[xX]?)?$")
_HTML_RUN_ENDS = frozenset("\"'<>")


def _open_html_run(text: str, secrets: frozenset[str]) -> int:
	"""How many trailing characters of ``text`` are a run with HTML character references.

	`mask` decodes such a run whole (``&#115;k-...``: no fixed spelling is in it); a run that
	ends with what may start a reference (``&``, ``&am``, ``&#x``) is held too.
	"""
	if "&" not in text or not _by_length(secrets)[0]:
		return 0
	start = len(text)
	while start and not (text[start - 1] in _HTML_RUN_ENDS or text[start - 1].isspace()):
		start -= 1
		if len(text) - start > _MAX_HELD_RUN:
			return _long_run_tail(text[start:], secrets, _HTML_READINGS, _OPEN_HTML_TAIL())
	run = text[start:]
	if "&" in run and (_HTML_REF().search(run) or _OPEN_HTML_REF().search(run)):
		return len(run)
	return 0


def _open_wrapped(text: str, secrets: frozenset[str], *, fresh: bool = True) -> int:
	"""How many trailing characters of ``text`` are base64 lines a next line may join.

	`mask` joins a block of base64 lines (from the first of 40+ characters) and masks it whole
	when it holds a secret; sent line by line, a secret across a line break went out in halves.
	A line of base64 characters is held until it ends (it may start a block), and a block until
	a line that is not base64 (prose, which has spaces, is never held here). Of a block longer
	than `_MAX_HELD_RUN`, only the lines that may start a secret's base64 are held
	(`_wrapped_tail`); the others are sent, masked.

	Args:
		text: The text not yet sent, after the last characters sent (a line break may be split
			across them).
		secrets: The raw secret values.
		fresh: Whether ``text`` starts a line (nothing was sent yet); else its first line goes on
			a line already sent, which was no base64 line (that would have been held).
	"""
	if not _by_length(secrets)[0]:
		return 0
	held = 0
	for newline, cr in (("\n", "\r"), ("\\n", "\\r")):
		end = text.rfind(newline)
		if end == -1 and not fresh:
			continue
		partial = end + len(newline) if end != -1 else 0  # where the last line starts
		last = text[partial:]
		if newline != "\n":  # a JSON text: its last line may end with half an escape
			last = last.removesuffix("\\")
		last = last.removesuffix(cr)
		if (last and not _B64_LINE().fullmatch(last)) or len(last) > _MAX_HELD_RUN:
			continue
		start = partial if last else -1  # where a block would start
		while end > 0:
			before = text.rfind(newline, 0, end)
			if before == -1 and not fresh:
				break
			line = text[before + len(newline) if before != -1 else 0 : end].removesuffix(cr)
			if len(line) < 4 or not _B64_LINE().fullmatch(line):
				break
			if len(line) >= _MIN_WRAPPED:
				start = before + len(newline) if before != -1 else 0
			end = before
			if len(text) - max(end, 0) > _MAX_HELD_RUN:
				begin = end + len(newline) if end != -1 else 0
				start = _wrapped_tail(text, begin, newline, cr, secrets)
				break
		if start != -1:
			held = max(held, len(text) - start)
	return held


def _wrapped_tail(text: str, begin: int, newline: str, cr: str, secrets: frozenset[str]) -> int:
	"""Where the held lines start of a block of base64 too long for a stream to hold whole.

	They are the last lines whose joined text may start a secret's spelling (`held_back`), and
	at least the last one (it may go on): cut anywhere else, a secret across a line break would
	go out in two parts (a line's start alone starts no block `mask` reads).

	Args:
		text: The text not yet sent.
		begin: Where the block's lines read so far start (they go on to the end of ``text``).
		newline: The line break (a newline, or a JSON text's escaped one).
		cr: What may end a line before its break.
		secrets: The raw secret values.
	"""
	starts = [begin]
	while (found := text.find(newline, starts[-1])) != -1:
		starts.append(found + len(newline))
	ends = [s - len(newline) for s in starts[1:]] + [len(text)]
	lines = [text[a:b].removesuffix(cr) for a, b in zip(starts, ends, strict=True)]
	joined = "".join(lines)
	need = held_back(joined, secrets)
	cut, total = len(lines) - 1, len(lines[-1])
	while cut and total < need:
		cut -= 1
		total += len(lines[cut])
	# Nor inside a spelling the lines hold whole: masked apart, its two parts would show.
	whole = mask(joined, secrets)
	while cut and whole != mask(joined[: len(joined) - total], secrets) + mask(
		joined[len(joined) - total :], secrets
	):
		cut -= 1
		total += len(lines[cut])
	return starts[cut]


def _open_escaped_run(text: str, secrets: frozenset[str]) -> int:
	r"""How many trailing characters of ``text`` are a ``\u``/``\x``-escaped run that may go on.

	`mask` decodes such a run whole; sent in parts, no part would decode to the secret. A run
	with no escape (nor the start of one at its end) is not held.
	"""
	if "\\" not in text or not any(len(s.strip()) >= MIN_ENCODED for s in secrets):
		return 0
	start = len(text)
	while start and not _escaped_run_ends(text[start - 1]):
		start -= 1
		if len(text) - start > _MAX_HELD_RUN:
			return _long_run_tail(text[start:], secrets, _ESCAPED_READINGS, _OPEN_ESCAPE())
	run = text[start:]
	if _ESCAPE().search(run) or _OPEN_ESCAPE().search(run):
		return len(run)
	return 0


# log records ------------------------------------------------------------------------------

LOGGERS = (
	"openmolt",
	"httpx",
	"httpcore",
	"httpcore.connection",
	"httpcore.http11",
	"httpcore.http2",
	"httpcore.proxy",
	"httpcore.socks",
	"aiohttp",
	"aiohttp.access",
	"aiohttp.client",
	"aiohttp.internal",
	"aiohttp.server",
	"aiohttp.web",
	"aiohttp.websocket",
	"hpack",
	"hpack.hpack",
	"hpack.table",
	"h2",
	"botocore",  # aws_sigv4 signing: botocore.auth logs the canonical request at DEBUG
	"botocore.auth",
	"mcp",  # the MCP SDK: a server's command line, URL and messages
	"mcp.client",
	"mcp.client.stdio",
	"mcp.client.streamable_http",
	"mcp.client.session",
	"mcp.shared",
	"mcp.shared.session",
	"mcp.os",
	"httpx2",  # the MCP SDK's HTTP client (a fork of httpx): URLs at INFO, headers at DEBUG
	"httpcore2",
)
"""The loggers the redacting filter is installed on (and any existing logger below them)."""

_SOURCES: list[Callable[[], frozenset[str]]] = []  # what the filter masks (`read_log_secrets`)
_LOCK = threading.Lock()


def read_log_secrets(source: Callable[[], frozenset[str]]) -> None:
	"""Have the logging filter mask what ``source`` returns, asked at each record it sees.

	Args:
		source: Returns the secrets known now (`openmolt_core.secrets` registers the live secret
			sets and redactors).
	"""
	with _LOCK:
		if source not in _SOURCES:
			_SOURCES.append(source)


def _secrets_now() -> frozenset[str]:
	found: set[str] = set()
	for source in list(_SOURCES):
		found |= source()
	return frozenset(found)


def live_secrets() -> frozenset[str]:
	"""Every secret the process's live secret sets, redactors and keys given in code hold now.

	What the logging filter masks (`read_log_secrets`), without reading the environment again
	(an instance read it at its first use). Every surface masks at least these: a served
	response (`known_secrets`), a run's events, a caller's (its redactor is one of them).
	"""
	return _secrets_now()


def known_secrets() -> frozenset[str]:
	"""What the logging filter knows now, and the environment's secrets (`mask_known`).

	What a served response is masked with, and so a text that is streamed, masked once where it
	is made (a consumer that masked each piece again could not join a secret's halves, and would
	mask a short secret that starts a piece inside a word). The environment is read as it is
	now: a key exported after an instance first read it is masked too.
	"""
	return _secrets_now() | environment_secrets_now()


_ENVIRONMENT: tuple[tuple[Any, ...], frozenset[str]] = ((), frozenset())
"""The environment `environment_secrets_now` read last, and its secrets."""


def environment_secrets_now() -> frozenset[str]:
	"""The environment's secrets as it is now (`environment_secrets`), read again once it changed.

	A served stream asks at every chunk: matching every variable's name against the rules
	takes about 80 µs, comparing the variables with the ones read last 1 to 3 µs.
	"""
	global _ENVIRONMENT
	data = getattr(os.environ, "_data", None)  # CPython's: the variables as the OS spells them
	now = tuple(data.items()) if isinstance(data, dict) else tuple(os.environ.items())
	seen, found = _ENVIRONMENT
	if now != seen:
		found = frozenset(environment_secrets())
		_ENVIRONMENT = (now, found)
	return found


_NOT_THE_CALLER = frozenset(
	{
		"anyio",
		"asyncio",
		"concurrent",
		"contextlib",
		"functools",
		"pluggy",
		"sniffio",
		"threading",
		"trio",
	}
)
"""Packages between a caller's line and OpenMolt's code that are not the caller either: the event
loop and task machinery a run's coroutines are driven by, and pluggy, which calls a plugin's
registration hook (a plugin named ``openmolt_<thing>``, as plugins are, is passed as OpenMolt's)."""


def _caller_outside() -> int | None:
	"""The stacklevel, for `warn`'s ``warnings.warn``, of the first frame that is not OpenMolt's.

	None when every frame is (the ``openmolt`` command's own process).
	"""
	import sys
	from types import FrameType

	# warn's caller: None when warn is called from C (a thread's target, a callback), where
	# sys._getframe(2) would raise
	frame: FrameType | None = sys._getframe(1).f_back
	level = 2  # warnings.warn's stacklevel of that frame, counted from warn
	while frame is not None:
		package = str(frame.f_globals.get("__name__", "")).split(".")[0]
		ours = package == "openmolt" or package.startswith("openmolt_")
		if not ours and package not in _NOT_THE_CALLER:
			return level
		frame, level = frame.f_back, level + 1
	return None


def warn(
	message: str, category: type[Warning], stacklevel: int = 1, *, at_caller: bool = False
) -> None:
	"""``warnings.warn``, with the message masked as a log record is (`mask_printed`).

	Every warning of OpenMolt goes through here: it is built from values that may hold a secret
	(a URL, a setting, a name from a config), and a library user's process shows it as is
	(``warnings.showwarning``, a test's recorded warnings, ``logging.captureWarnings``): the
	message must be masked before it exists. A test checks that no module calls
	``warnings.warn`` directly.

	Args:
		message: The warning's text.
		category: Its class.
		stacklevel: As for ``warnings.warn``, counted from the caller of this function.
		at_caller: Point at the first line outside OpenMolt (the application's
			``create_agent(...)`` or ``await agent.run(...)``) however deep the warning is
			raised, instead of counting ``stacklevel`` frames (which a second path to the same
			warning miscounts); ``stacklevel`` is used when no such line exists.
	"""
	import warnings

	level = (_caller_outside() if at_caller else None) or stacklevel + 1
	warnings.warn(category(mask_printed(message)), stacklevel=level)


def mask_known(text: str) -> str:
	"""The text masked with what the logging filter knows now, and the environment's secrets.

	For what is shown outside a log record or a run: the ``openmolt`` command's error lines,
	tracebacks and warnings, which may come before any instance (and its secret set) exists;
	and what was stored before a secret was known (``openmolt logs``, the run viewer).

	Args:
		text: The text.
	"""
	return mask(text, known_secrets())


def mask_printed(text: str) -> str:
	"""Text printed about an error outside a log record, masked as a log record is.

	`mask_known`, and the secrets of the URLs the text shows though no source knows them
	(`urls_secrets`: a password in a URL's userinfo, a token user, a query value named like a
	secret): an exception names the URL it failed for (httpx's ``for url '...'``), and a
	traceback, an error line or a warning the ``openmolt`` command prints is a log too. Not for
	text a person is sent (a reply: `mask_url_logins` keeps a signed link working).

	Args:
		text: The text (an error's line, a traceback, a warning).
	"""
	found = urls_secrets(text)
	return mask(text, known_secrets() | found) if found else mask_known(text)


def masked_excerpt(text: str, limit: int, secrets: Iterable[str] = (), *, more: str = "") -> str:
	"""The start of a text fit to show: masked first, then cut to ``limit`` characters.

	Cutting first would leave a secret that straddles the cut as a prefix no redactor can match
	later; so every text that is shortened (an error body, a reason a service gave) is masked
	whole here, with the given secrets and what `mask_known` knows (the live secret sets and
	redactors, the environment's secrets), and only then cut.

	Args:
		text: The text.
		limit: The most characters kept of the masked text.
		secrets: Secrets the caller knows beyond `known_secrets` (a provider's key, a client
			secret).
		more: Appended when the text was cut (an ellipsis, a note of what was left out).

	Returns:
		The masked text, or its first ``limit`` characters followed by ``more``.
	"""
	masked = mask(text, frozenset(s for s in secrets if s) | known_secrets())
	return masked if len(masked) <= limit else masked[:limit] + more


_BUSY = threading.local()  # set while the filter reads the secrets (a source that logs)

_PLAIN = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
	"message",
	"asctime",
}


class RedactingFilter(logging.Filter):
	"""Masks every secret its sources know in a log record (message, args, traceback, extras).

	A record that shows no secret is left as it was made (its format and arguments kept for the
	handlers that read them); one that does is rewritten: its message formatted and masked, its
	arguments dropped, its traceback turned into masked text.
	"""

	def filter(self, record: logging.LogRecord) -> bool:
		"""Mask the secrets a record shows; never drops a record."""
		if getattr(record, "_openmolt_masked", False) or getattr(_BUSY, "on", False):
			return True  # masked when it was made, or logged by a secret source while masking
		secrets = _quiet_secrets() | _logged_url_secrets(record)
		if not secrets:
			return True
		record._openmolt_masked = True
		try:
			message = record.getMessage()
		except Exception:  # arguments that do not fit the format: logging would print both
			message = f"{record.msg} {record.args!r}"
		masked = _record_text(message, secrets)
		if masked != message and not _record_args(record, secrets):
			record.msg, record.args = masked, None
		if record.exc_info:
			text = record.exc_text or logging.Formatter().formatException(record.exc_info)
			if mask(text, secrets) != text:
				record.exc_text, record.exc_info = mask(text, secrets), None
		elif record.exc_text:
			record.exc_text = mask(record.exc_text, secrets)
		if record.stack_info:
			record.stack_info = mask(record.stack_info, secrets)
		_mask_extras(record, [k for k in record.__dict__ if k not in _PLAIN], secrets)
		return True


_LOGGED_URL = LazyPattern(r"(?:[A-Za-z][A-Za-z0-9+.-]*:|(?<![\w/:.\\-]))//[^\s\"'<>]+")
"""A URL in text: with a scheme (any case) or scheme-relative (``//user:PASSWORD@host``, its
``//`` after no word, no ``/`` and no ``:``: ``a//b`` is a path)."""
_MAYBE_URL = LazyPattern(r"//|\\/\\/|%2[Ff]%2[Ff]|&#(?:[xX]0*2[Ff]|0*47);|&sol;")
"""What text holding a URL shows in some spelling: ``//``, JSON's ``\\/\\/``, percent- or
HTML-encoded slashes; text without it holds no URL (a cheap check before `_text_readings`)."""


_LOOSE_SLASHES = LazyPattern(r"(?i)(?<![A-Za-z0-9+.-])(https?|wss?|ftp):(?!//(?![/\\]))[/\\]*")
"""A web scheme followed by other slashes than ``//``: none, one, three, backslashes. A WHATWG
parser (browsers, Node's ``new URL``) reads ``https:user:PASSWORD@host`` and ``https:\\host`` as
``https://``; so does `url_secrets`."""


_WEB_SCHEMES = ("https", "http", "wss", "ws", "ftp")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")


def _loose_slashes(text: str) -> bool:
	"""Whether text holds a web scheme with loose slashes (`_LOOSE_SLASHES`), found cheaply.

	Each ``:`` is looked at (prose holds few), not the whole text run through the pattern: this
	is asked of every event's and log record's text.
	"""
	if ":" not in text:
		return False
	low = text.lower()
	if "p:" not in low and "s:" not in low:  # how each web scheme ends: most text has neither
		return False
	at = low.find(":")
	while at != -1:
		if low[at - 1 : at] not in "ps":  # most colons: not after a web scheme
			at = low.find(":", at + 1)
			continue
		head = low[max(0, at - 5) : at]
		for scheme in _WEB_SCHEMES:
			if head.endswith(scheme):
				start = at - len(scheme)
				if (start == 0 or low[start - 1] not in _SCHEME_CHARS) and not (
					low.startswith("//", at + 1) and low[at + 3 : at + 4] not in ("/", "\\")
				):
					return True
				break
		at = low.find(":", at + 1)
	return False


def _slashes_read(text: str) -> str:
	"""Text with every web scheme's slashes as a WHATWG parser reads them (`_LOOSE_SLASHES`)."""
	return _LOOSE_SLASHES().sub(r"\1://", text) if _loose_slashes(text) else text


def _text_readings(text: str) -> set[str]:
	r"""Text as written and as the other text it may spell a URL in (`urls_secrets`).

	JSON-escaped (``https:\/\/``, Go's ``\u0026`` for ``&``), HTML-escaped (``&#x2F;``,
	``&amp;``), percent-encoded whole (``https%3A%2F%2F...``, a URL in a query value), with its
	tabs and line breaks taken out (`_unbroken`: ``https://u:PASSWORD\n@host``), and with a web
	scheme's loose slashes read as ``//`` (`_LOOSE_SLASHES`: ``https:/user:PASSWORD@host``).
	"""
	out = {text}
	if "\\" in text:
		out.add(_unescaped(text))
	if "&" in text:
		out |= {_html_unescape(t) for t in list(out)}
	if "%" in text:
		out |= {unquote(t) for t in list(out) if "%" in t}
	out |= {_unbroken(t) for t in list(out)}
	out |= {_slashes_read(t) for t in list(out)}
	return out


_URL_BREAKS = "\t\n\r"
"""What a WHATWG parser takes out of a URL wherever it is (ASCII tab, LF and CR)."""
_DROP_BREAKS = str.maketrans("", "", _URL_BREAKS)
_URL_EDGES = "".join(map(chr, range(0x21)))
"""What a WHATWG parser strips around a URL: the C0 controls and the space."""
_BETWEEN = (
	r"(?:[\t\n\r]|\\[tnr]|\\u000[9aAdD]|&(?:amp;)?#(?:0*(?:9|10|13)|[xX]0*[9aAdD]);"
	r"|&(?:amp;)?(?:Tab|NewLine);)*"
)
"""What may stand between two characters of a secret a parser reads whole (`_as_written`): a
tab or line break, as is, JSON-escaped or an HTML character reference."""


def _unbroken(text: str) -> str:
	"""Text with its tabs and line breaks taken out, as a WHATWG parser reads a URL in it."""
	return text.translate(_DROP_BREAKS) if any(c in text for c in _URL_BREAKS) else text


def _broken(text: str) -> bool:
	"""Whether text may hold a tab or a line break, as is, JSON-escaped or HTML-escaped."""
	return (
		any(c in text for c in _URL_BREAKS)
		or any(f"\\{c}" in text for c in "tnru")
		or ("&" in text and ("#" in text or "Tab;" in text or "NewLine;" in text))
	)


@lru_cache(maxsize=256)
def _broken_pattern(secret: str) -> re.Pattern[str]:
	return re.compile(_BETWEEN.join(map(re.escape, secret)))


_URL_BREAK = LazyPattern(
	r"[\t\n\r]|\\[tnr]|\\u000[9aAdD]|&(?:amp;)?#(?:0*(?:9|10|13)|[xX]0*[9aAdD]);"
	r"|&(?:amp;)?(?:NewLine|Tab);"
)
"""A tab or a line break as is, JSON-escaped or an HTML character reference."""
_URL_GOES_ON = frozenset("@/?#&=;:%\\")
"""What follows a secret that a URL goes on after (``@host``, ``&page=2``, ``/rest``, ``\\/``)."""


_PROSE_WORD = LazyPattern(r"[A-Za-z]+(?:[0-9]{1,3}[A-Za-z]*)?")
"""A word of prose or a column's name (``Then``, ``Column2``, ``callback``), not a token's end."""


def _token_after_break(spelt: str) -> bool:
	r"""Whether what a secret spells after its last break reads as a token's rest.

	A token cut by a hard-wrapped line (``?token=abcdef1234\n5678xyz``): 6+ characters with a
	digit, not a word (`_token_like_segment`, `_PROSE_WORD`); a TSV column, the next line's
	first word or a list's number (``Column2``, ``Then``, ``2.``) is not.
	"""
	tail = _URL_BREAK().split(spelt)[-1]
	return _token_like_segment(tail) and not _PROSE_WORD().fullmatch(tail)


def _inside_urls(secrets: set[str], text: str) -> set[str]:
	r"""The secrets of text's URLs but those a tab or a line break joined to the words after.

	In text, a line break after a URL's last secret ends the URL: ``?sig=abc\nThen`` is the
	secret ``abc`` and the word ``Then`` (read whole, the word and the break were masked with it,
	and a path read as a token, ``callback`.\n2.``, masked the word ``callback`` everywhere as a
	cut secret); so does a tab, a column's end in TSV (``?key=abc\tColumn2\tColumn3`` masked
	the row's next columns). A secret spelt across a break is kept where the URL goes on after
	it (`_URL_GOES_ON`: ``PASS\nWORD@host``, ``PASS\tWORD@host``), which no line of prose and
	no column does, or where its rest after the break reads as a token's (`_token_after_break`:
	a hard-wrapped link); a secret text spells otherwise (percent-encoded) is kept.
	"""
	out = set()
	for secret in secrets:
		hits = list(_broken_pattern(secret).finditer(text)) if len(secret) > 1 else []
		if not hits or any(
			not _URL_BREAK().search(hit[0])
			or text[hit.end() : hit.end() + 1] in _URL_GOES_ON
			or _token_after_break(hit[0])
			for hit in hits
		):
			out.add(secret)
	return out


def _as_written(secrets: Iterable[str], text: str) -> set[str]:
	r"""The secrets found in text with its breaks taken out, as the text spells them.

	``PASS\nWORD`` for ``PASSWORD``: tabs and line breaks, as is or JSON-escaped, between any
	two characters (`_unbroken`), so that `mask` replaces what the text shows.
	"""
	if not _broken(text):
		return set()
	out: set[str] = set()
	for secret in secrets:
		if len(secret) > 1:
			out.update(found[0] for found in _broken_pattern(secret).finditer(text))
	return out


_MAY_SHOW = frozenset("?@%&\\")
"""What a text holds when one of its readings (`_text_readings`) may show a URL's secret: a
``?`` or an ``@`` as written, or the escape that spells one (percent, HTML, JSON)."""


def urls_secrets(text: str, *, logins: bool = False) -> set[str]:
	"""The secrets of the URLs text shows, in any spelling, though no source knows them.

	Every URL of the text and of its other readings (`_text_readings`) is read by the one URL
	rule, ``hinted_only`` (`url_secrets`): its password, a token user, the query values named
	like secrets; a search's words stay readable. For a log record and the events of a run.

	Args:
		text: Any text (a log line, an event's field, a tool's result).
		logins: Only the URLs' logins (`url_secrets`' ``logins``): for text a person is sent.
	"""
	if _MAY_SHOW.isdisjoint(text):
		return set()  # no reading of it holds a "?" or an "@", which a URL's secrets need
	whole = _unbroken(text)  # ``ht\ttps:/\n/``: what the cheap checks below look for
	loose = _loose_slashes(whole)
	if not loose and (
		("/" not in whole and "&" not in whole and "%" not in whole)
		or not _MAYBE_URL().search(whole)
	):
		return set()
	found: set[str] = set()
	read: set[str] = set()  # a URL the readings share is read once
	for reading in _text_readings(text):
		if "?" in reading or "@" in reading:
			for url in _LOGGED_URL().findall(reading):
				if url not in read:
					read.add(url)
					found |= url_secrets(url, hinted_only=True, logins=logins)
	if not found or not _broken(text):
		return found
	return _inside_urls(found | _as_written(found, text), text)


def mask_urls(value: Any) -> Any:
	"""A value (text, or JSON data) with the secrets of the URLs it shows masked.

	For what keeps a run's story for people (its events in the run store, the viewer, spans, a
	log): a URL's password and its query values named like secrets (`url_secrets`,
	``hinted_only``), though no source knows them: the key a model read in its instructions and
	put in a URL. Never for what the model reads: it needs the key for its next call.

	Args:
		value: Text, or lists and dicts of it (other values are returned as they are).
	"""
	if isinstance(value, str):
		found = urls_secrets(value)
		return mask(value, frozenset(found)) if found else value
	if isinstance(value, dict):
		return {k: mask_urls(v) for k, v in value.items()}
	if isinstance(value, list):
		return [mask_urls(v) for v in value]
	return value


def mask_url_logins(text: str) -> str:
	"""Text for a person with the logins of the URLs it shows masked, their links kept working.

	A URL's password and a token user (`url_secrets`' ``logins``), though no source knows them:
	the password of a connection string the model read in a document. Its query and path stay:
	a presigned link (``?X-Amz-Signature=``), a consent link's signed state, must still work
	for the person it is sent to (`mask_urls` masks those too, for a run's story).

	Args:
		text: The text (a reply for a person, streamed or whole).
	"""
	found = urls_secrets(text, logins=True)
	return mask(text, frozenset(found)) if found else text


def mask_url_logins_deep(value: Any) -> Any:
	"""A run's deliverable for a person: the logins its URLs show masked, wherever it shows them.

	What a run hands over (its output as JSON, a data part, a tool's structured content, the
	viewer's result panel, the command's printed result) is read as `mask_url_logins` reads
	text: a URL's password and token user, though no source knows them, found in every string
	and key, then masked in every string and key (a password a field repeats alone too); its
	query and path stay, so a signed link still works. Other objects are read as their data
	(`mask_deep`).

	Args:
		value: Text, or lists and dicts of it, or an object holding such data.
	"""
	found = _urls_found(value, logins=True)
	return mask_deep(value, frozenset(found)) if found else value


def _urls_found(value: Any, *, logins: bool) -> set[str]:
	"""The secrets of the URLs a value shows (`urls_secrets`) in any string or key it holds.

	A dataclass is read field by field (a run's result: its state too), any other object as its
	data or its ``repr`` (`_data_of`).
	"""
	import dataclasses

	found: set[str] = set()
	todo = [value]
	while todo:
		item = todo.pop()
		if isinstance(item, str):
			found |= urls_secrets(item, logins=logins)
		elif isinstance(item, dict):
			todo.extend(item.keys())
			todo.extend(item.values())
		elif isinstance(item, list | tuple | set | frozenset):
			todo.extend(item)
		elif item is None or isinstance(item, int | float):
			continue
		elif dataclasses.is_dataclass(item) and not isinstance(item, type):
			todo.extend(getattr(item, f.name, None) for f in dataclasses.fields(item))
		else:
			data = _data_of(item)
			if data is None:
				try:
					data = repr(item)
				except Exception:  # a broken repr shows nothing
					continue
			todo.append(data)
	return found


def mask_url_fields(obj: Any, *, logins: bool = False, skip: Collection[str] = ()) -> None:
	"""Mask, in place, the secrets of the URLs a dataclass instance shows (an event for listeners).

	The rule of `mask_urls`, a run's story for people: a URL's password, a token user and the
	query values named like secrets, though no source knows them; with ``logins``, the rule of
	`mask_url_logins` (text a person is sent: its links keep working). What one field shows is
	masked in every field. A dataclass a field holds (a run's result, its state, an approval
	request) is masked in a copy, so the object the caller keeps (what ``run()`` returns) is
	never changed, and keeps its type; any other value as `mask_fields` masks it (fail closed).

	Args:
		obj: The dataclass instance (an event).
		logins: Only the URLs' logins (for a person's text, streamed).
		skip: The names of the fields left as they are.
	"""
	import dataclasses

	names = [f.name for f in dataclasses.fields(obj) if f.name not in skip]
	found = _urls_found([getattr(obj, name, None) for name in names], logins=logins)
	if not found:
		return
	secrets = frozenset(found)

	def deep(value: Any) -> Any:
		if dataclasses.is_dataclass(value) and not isinstance(value, type):
			copied = copy.copy(value)
			mask_fields(copied, text, deep)
			return copied
		if isinstance(value, list | tuple) and any(
			dataclasses.is_dataclass(v) and not isinstance(v, type) for v in value
		):
			return [deep(v) for v in value]
		return mask_deep(value, secrets)

	def text(value: str) -> str:
		return mask(value, secrets)

	mask_fields(obj, text, deep, skip=skip)


def _logged_url_secrets(record: logging.LogRecord) -> frozenset[str]:
	"""The secrets of the URLs a record shows (`url_secrets`), though no source knows them.

	An HTTP client's request line (httpx: ``HTTP Request: GET <URL> ...``, the URL an argument)
	shows the key a model put in a URL's query, a signed link's signature, a password in the
	userinfo: a log keeps none of them. Only a URL with a query or userinfo is read, and of its
	query only the values named like secrets (a search's words stay readable). The message and
	every argument are read as text, whatever their type (an exception: httpx's error names the
	URL it failed for; a list), and so are the traceback and the stack a record carries.
	"""
	msg, args = record.msg, record.args
	values = list(args.values()) if isinstance(args, Mapping) else list(args or ())
	found: set[str] = set()
	for value in (msg, *values):  # any object: an exception (httpx's names its URL), a list
		if value is None or isinstance(value, int | float):
			continue
		try:
			text = value if isinstance(value, str) else str(value)
		except Exception:  # a broken ``__str__``: `_record_arg` shows it masked whole
			continue
		found |= urls_secrets(text)
	trace = record.exc_text
	if not trace and record.exc_info and record.exc_info[1] is not None:
		# The traceback as a handler shows it (its exception's message, its chain), read only:
		# a handler's own formatter still formats a record that shows no secret its way.
		trace = logging.Formatter().formatException(record.exc_info)
	if trace:
		found |= urls_secrets(trace)
	if record.stack_info:
		found |= urls_secrets(record.stack_info)
	return frozenset(found)


def _record_text(text: str, secrets: frozenset[str]) -> str:
	"""A log record's text masked: every spelling `mask` knows, and HPACK's (`_hpack_masked`)."""
	masked = mask(text, secrets)
	if "b'" in masked or 'b"' in masked:
		masked = _hpack_masked(masked, secrets)
	return masked


class _Shown(str):
	"""A record's argument that showed a secret: its text masked, and its ``repr`` too.

	A ``str``, so a format's ``%s`` and a handler that reads the arguments (a JSON formatter)
	get text; ``%r`` gets the masked ``repr`` of the object it stands for.
	"""

	__slots__ = ("shown",)

	shown: str

	def __new__(cls, text: str, shown: str | None = None) -> _Shown:
		"""The masked text, and the masked ``repr`` (default: the text's own)."""
		out = super().__new__(cls, text)
		out.shown = str.__repr__(text) if shown is None else shown
		return out

	def __repr__(self) -> str:
		return self.shown


def _record_arg(value: Any, secrets: frozenset[str]) -> Any:
	"""A record's argument, itself when it shows no secret; else masked, of its type if it can."""
	if value is None or isinstance(value, int | float):
		return value
	if isinstance(value, str):
		return _record_text(value, secrets)
	if isinstance(value, bytes | bytearray):
		shown = repr(bytes(value))
		masked = _record_text(shown, secrets)
		if masked == shown:
			return value
		import ast

		try:  # the masked repr read back: bytes still, for ``%s`` and ``%r`` alike
			return type(value)(ast.literal_eval(masked))
		except (ValueError, SyntaxError):  # pragma: no cover - a masked repr stays a literal
			return _Shown(masked, masked)
	try:
		text, shown = str(value), repr(value)
	except Exception:  # a broken str or repr: the record is rewritten whole
		return _Shown(MASK)
	masked_text, masked_shown = _record_text(text, secrets), _record_text(shown, secrets)
	if masked_text == text and masked_shown == shown:
		return value
	return _Shown(masked_text, masked_shown)


def _record_args(record: logging.LogRecord, secrets: frozenset[str]) -> bool:
	"""Mask a record's arguments one by one, its format kept; False if it cannot be so masked.

	A formatter that reads the arguments (uvicorn's access lines unpack the client, method,
	path, version and status) keeps working; a record whose format shows a secret, or whose
	secret spans two arguments, or whose masked arguments no longer fit its format, cannot.
	"""
	args, msg = record.args, record.msg
	if not args or not isinstance(msg, str) or _record_text(msg, secrets) != msg:
		return False
	new: tuple[Any, ...] | dict[Any, Any]
	if isinstance(args, tuple):
		new = tuple(_record_arg(a, secrets) for a in args)
	elif isinstance(args, Mapping):
		new = {k: _record_arg(v, secrets) for k, v in args.items()}
	else:  # pragma: no cover - logging makes args a tuple or a mapping
		return False
	try:
		message = msg % new
	except Exception:  # a masked argument that no longer fits (``%d`` of a number that showed one)
		return False
	if _record_text(message, secrets) != message:
		return False  # a secret spread over two arguments, or over the format and an argument
	record.args = new
	return True


_BYTES_LITERAL = LazyPattern(r"b'(?:[^'\\\n]|\\.)*+'|b\"(?:[^\"\\\n]|\\.)*+\"")


def _hpack_masked(text: str, secrets: frozenset[str]) -> str:
	"""Text whose ``bytes`` literals show no secret Huffman-coded as HTTP/2 headers are (HPACK).

	The ``hpack`` library logs each header block it encodes and decodes at DEBUG, as ``bytes``:
	a header's value Huffman-coded, which the static code of RFC 7541 reads back. A secret in a
	header (an ``Authorization``, an ``x-api-key``) is found by its bits at each of the 8 bit
	offsets it may start at (`_huffman_cores`), and those bytes replaced by the mask.
	"""
	cores = _huffman_cores(secrets)
	if not cores:
		return text

	def masked(found: re.Match[str]) -> str:
		import ast

		literal = found[0]
		try:
			data = ast.literal_eval(literal)
		except (ValueError, SyntaxError):
			return literal
		out = data
		for core in cores:
			if core in out:
				out = out.replace(core, MASK.encode())
		return literal if out == data else repr(out)

	return _BYTES_LITERAL().sub(masked, text)


@lru_cache(maxsize=256)
def _huffman_cores(secrets: frozenset[str]) -> tuple[bytes, ...]:
	"""The bytes a secret's HPACK Huffman code always holds, at each of the 8 bit offsets.

	A secret inside a header's value starts at any bit: the bytes made of its bits only are the
	same whatever comes before and after (as `_b64_cores` for base64). Empty when ``hpack``
	(which brings the code) is not installed: then nothing logs HPACK blocks either.
	"""
	try:
		from hpack.huffman_constants import REQUEST_CODES, REQUEST_CODES_LENGTH
	except ImportError:
		return ()
	out: set[bytes] = set()
	for secret in secrets:
		data = secret.encode("utf-8")
		if len(data) < MIN_KEY:
			continue
		code, bits = 0, 0
		for byte in data:
			code = (code << REQUEST_CODES_LENGTH[byte]) | REQUEST_CODES[byte]
			bits += REQUEST_CODES_LENGTH[byte]
		for offset in range(8):
			first = -(-offset // 8)  # the first byte made of the secret's bits only
			last = (offset + bits) // 8
			if last - first < 4:  # too short to tell from other bytes
				continue
			whole = (code << (8 * (last + 1) - offset - bits)).to_bytes(last + 1, "big")
			out.add(whole[first:last])
	return tuple(sorted(out, key=len, reverse=True))


def _quiet_secrets() -> frozenset[str]:
	"""What the sources know now; nothing while a source itself logs (no recursion)."""
	if getattr(_BUSY, "on", False):
		return frozenset()
	_BUSY.on = True
	try:
		return _secrets_now()
	finally:
		_BUSY.on = False


def _mask_extras(record: logging.LogRecord, keys: Iterable[str], secrets: frozenset[str]) -> None:
	"""Mask a record's extras (a JSON formatter or OpenTelemetry's logging handler shows them)."""
	for key in keys:
		value = record.__dict__.get(key)
		masked = _masked_extra(value, secrets)
		if masked is not value:
			record.__dict__[key] = masked


def _masked_extra(value: Any, secrets: frozenset[str]) -> Any:
	"""A record's extra as it was when it shows no secret; else masked (`mask_deep`)."""
	if isinstance(value, dict | list | tuple):
		try:
			shown = repr(value)
		except Exception:  # a broken repr: the handlers would fail on it too
			return value
		if mask(shown, secrets) == shown:
			return value  # the same object: a handler that reads it gets what was logged
	return mask_deep(value, secrets)  # a string, or an object's data (or repr) when it holds one


_FILTER = RedactingFilter()
_SEEN = -1  # how many loggers existed at the last install
_FACTORY: list[Callable[..., logging.LogRecord]] = []  # the record factory we wrapped


def _masking_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
	"""Make a record, masked at once, whatever its logger.

	A logger made after the last install (a module imported late, inside a tool) has no filter
	of its own, and a parent's filters do not see a child's records; the record factory does.
	It masks the records of every logger, not only `LOGGERS`: a library the list does not name
	(an SDK's HTTP client, a server, the event loop's "exception was never retrieved") is
	treated as one that may show a secret. A record is made only for a level its logger
	handles, and one that shows no secret is left as it was (`RedactingFilter`).
	"""
	record = _FACTORY[0](*args, **kwargs)
	_FILTER.filter(record)
	return record


_MAKE_RECORD: list[Callable[..., logging.LogRecord]] = []  # Logger.makeRecord, wrapped


def _make_record(self: logging.Logger, *args: Any, **kwargs: Any) -> logging.LogRecord:
	"""``Logger.makeRecord``, with the ``extra`` it adds after the record factory ran masked."""
	record = _MAKE_RECORD[0](self, *args, **kwargs)
	extra = kwargs.get("extra", args[8] if len(args) > 8 else None)  # (name, level, ..., extra)
	if extra:
		secrets = _quiet_secrets()
		if secrets:
			_mask_extras(record, list(extra), secrets)
	return record


_PREFIXES = tuple(f"{name}." for name in LOGGERS)


def install_log_redaction() -> None:
	"""Install the redacting filter on `LOGGERS` and the existing loggers below them (idempotent).

	Called whenever a source gets secrets (a redactor or a secret set of
	`openmolt_core.secrets`), so loggers created since are covered too; the record factory is
	wrapped once, so a logger made later is covered as well, and so is ``Logger.makeRecord``,
	which adds a record's ``extra`` after the factory made it, and ``Handler.handleError``,
	which prints the exception being handled when a handler fails
	(`openmolt_core._support.stderr_masking`).
	"""
	global _SEEN
	if not _FACTORY:
		with _LOCK:
			if not _FACTORY:
				_FACTORY.append(logging.getLogRecordFactory())
				logging.setLogRecordFactory(_masking_factory)
				# The factory runs before ``extra`` is added to the record: mask it after.
				_MAKE_RECORD.append(logging.Logger.makeRecord)
				logging.Logger.makeRecord = _make_record  # type: ignore[method-assign]
				# A handler that fails prints the exception being handled, its chain and
				# notes, to stderr: no record, so masked where it is printed.
				_HANDLE_ERROR.append(logging.Handler.handleError)
				logging.Handler.handleError = _handle_error  # type: ignore[method-assign]
	known = logging.root.manager.loggerDict
	if len(known) == _SEEN:  # no logger was made since the last call
		return
	names = [*LOGGERS, *(n for n in list(known) if n.startswith(_PREFIXES))]
	for name in names:
		logger = logging.getLogger(name)
		if _FILTER not in logger.filters:
			logger.addFilter(_FILTER)
	_SEEN = len(known)


_HANDLE_ERROR: list[Callable[[logging.Handler, logging.LogRecord], None]] = []
"""``logging.Handler.handleError`` as it was before `install_log_redaction` wrapped it."""


def _handle_error(self: logging.Handler, record: logging.LogRecord) -> None:
	"""A failing handler's report, masked (`openmolt_core._support.stderr_masking`).

	The printer is loaded when a handler first fails, not at start-up: a plain run loads only
	what it uses.
	"""
	from openmolt_core._support.stderr_masking import masked_stderr

	masked_stderr(_HANDLE_ERROR[0], mask_printed)(self, record)


def redact_handler(handler: logging.Handler) -> logging.Handler:
	"""Put the redacting filter on a handler, so records of any logger it shows are masked.

	The ``openmolt`` commands call this for the handlers they install (a record from a logger
	made after the last `install_log_redaction`, such as a library imported late, is masked at
	the handler).

	Args:
		handler: The handler.

	Returns:
		The same handler.
	"""
	if _FILTER not in handler.filters:
		handler.addFilter(_FILTER)
	return handler


# which values are secrets ---------------------------------------------------------------

SECRET_HINTS = (
	"key",
	"token",
	"secret",
	"password",
	"passwd",
	"passphrase",
	"auth",
	"credential",
	"creds",
	"cookie",
	"session",
	"bearer",
	"signature",
	"connection_string",  # Azure's AccountKey=... inside
	"webhook_url",  # Slack's, Discord's, Teams': whoever holds the URL posts
	"_pass_",
	"_pwd_",
	"_pat_",  # GitHub's personal access token: GITHUB_PAT
	"_jwt_",
	"_pem_",
	"_dsn_",  # a data source name holds a password
	"_psk_",  # a pre-shared key
	"_sig_",  # a signed URL's ?sig=
)
"""What the name of a secret holds (any case): the one list every rule that reads names uses.

Read by `secret_name` on the name's words, lower case, each between underscores (``githubPAT``
and ``GITHUB_PAT`` are ``_github_pat_``): a hint written between underscores is a whole word of
the name (``_pat_``: not ``PATH``, ``compat`` or ``PATCH``), any other may sit inside a word or
across words (``key``: ``apiKey``, ``APIKEY``, ``monkey``; ``webhook_url``: ``WebHookUrl``). A provider's settings (`settings_secrets`), a
credential config (`secret_values`), a URL's query (`url_secrets`), the environment
(`environment_secrets`: a name that ends with one), an agent file's places
(``_support.words.secret_place``), an integration's literal query parameters and an MCP
server's ``env`` and arguments (``openmolt_mcp``) read it; a test checks no second list exists."""

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_WORD = re.compile(r"[\W_]+")


@lru_cache(maxsize=4096)
def _words(name: str) -> str:
	"""A name's words, lower case, each between underscores (``apiKey`` → ``_api_key_``)."""
	words = _NOT_WORD.split(_CAMEL.sub("_", name).lower())
	return "_" + "_".join(w for w in words if w) + "_"


def secret_name(name: str, *, ends: bool = False) -> bool:
	"""Whether a name says its value is a secret: it holds one of `SECRET_HINTS`.

	A hint written between underscores is looked for among the name's words (`_words`); any
	other in the name with its words run together, so ``passWord`` and ``WebHookUrl`` hold
	``password`` and ``webhook_url``.

	Args:
		name: The name (any case and style: ``GITHUB_PAT``, ``githubPat``, ``x-api-key``).
		ends: The hint must end the name, or end it but for a plural ``s`` (an environment
			variable's rule: ``GITHUB_PAT``, ``API_KEYS``; not ``PAT_EXPIRY`` or ``TOKEN_URL``).
	"""
	words = _words(name)
	whole, inside = _hint_patterns(ends)
	return whole.search(words) is not None or inside.search(words.replace("_", "")) is not None


@lru_cache(maxsize=2)
def _hint_patterns(ends: bool) -> tuple[re.Pattern[str], re.Pattern[str]]:
	"""`SECRET_HINTS` as the two patterns `secret_name` reads, made once for each ``ends``.

	The whole-word hints (``_pat_``) on a name's words (``_github_pat_``), the others on its
	words run together (``githubpat``); with ``ends``, only at the end, a plural ``s`` allowed
	(``_pats_``, ``apikeys``). One search each, where a loop over the hints cost a creation of
	an agent with a provider object about 4 µs (its attributes' names are read each time).
	"""
	whole = "|".join(re.escape(h[:-1]) for h in SECRET_HINTS if h.startswith("_"))
	inside = "|".join(re.escape(h.replace("_", "")) for h in SECRET_HINTS if not h.startswith("_"))
	if ends:
		return re.compile(f"(?:{whole})s?_\\Z"), re.compile(f"(?:{inside})s?\\Z")
	return re.compile(f"(?:{whole})_"), re.compile(f"(?:{inside})")


PUBLIC_NAMES = (
	"path",
	"home",
	"dir",
	"lang",
	"level",
	"mode",
	"host",
	"port",
	"url",
	"region",
	"tz",
)
"""How the name of a public value ends (a path, a host, a URL, a region): a long value under it
stays readable in an MCP server's ``env`` and in a URL's query (a URL's own secrets are read by
`url_secrets` all the same). With `SECRET_HINTS`, the other list every named-secret rule reads."""

PUBLIC_HEADERS = frozenset(
	{"accept", "content-type", "user-agent", "accept-language", "mcp-protocol-version"}
)
"""The headers whose values are not secret (lower case); every other header's value is, in a
provider's settings (`settings_secrets`) and an MCP server's ``headers`` (``openmolt_mcp``)."""


PUBLIC_ENV = frozenset({"OPENMOLT_SESSIONS", "PWD", "OLDPWD"})
"""Variables whose names end like a secret's but which hold a place: the sessions' file or
database (`openmolt_core.sessions.ENV_VAR`), the shell's working directories (``PWD``,
``OLDPWD``). Their value is no secret (it was masked in every error, log and event that named
the file), but a URL's password in it is (`url_secrets`)."""


MIN_KEY = 8
"""The fewest characters of a key or token masked wherever it goes (`environment_secrets`,
`openmolt_core.secrets.register_key`): a shorter value would mask ordinary words. A feature that
takes a token people choose refuses a shorter one (a served agent's bearer token)."""


def environment_secrets(environ: Mapping[str, str] | None = None) -> set[str]:
	"""The values of environment variables named like secrets (``*_KEY``, ``*_TOKEN``...).

	Provider keys (``OPENMOLT_OPENAI_API_KEY``), integration keys, bot tokens and the keys that
	sign approvals and consent states or encrypt the credential store are read from such
	variables; a value of fewer than 8 characters is left out (it would mask ordinary text). A
	URL's password in any variable is a secret too (`url_secrets`).

	Args:
		environ: The environment (default: ``os.environ``).
	"""
	source = os.environ if environ is None else environ
	found = (
		source.get(k, "") for k in list(source) if k not in PUBLIC_ENV and secret_name(k, ends=True)
	)
	out = {v for v in found if len(v.strip()) >= MIN_KEY}
	for value in list(source.values()):
		if "//" in value:  # DATABASE_URL=postgresql://user:password@host/db, a proxy's URL
			out |= url_secrets(value)
	return out


def named_secrets(values: Mapping[str, str]) -> set[str]:
	"""The secrets among values a user named in a configuration (an MCP server's ``env``).

	Failing closed, as a named value is read where a secret is likely (``openmolt_mcp`` reads a
	stdio server's ``env`` and every ``${VAR}`` a server's settings name): a value is secret
	when its name holds a hint (`SECRET_HINTS`) or, with 6+ characters, when its name does not
	end like a public one (`PUBLIC_NAMES`: ``*_PATH``, ``*_HOST``, ``*_URL``). A URL's own
	secrets are secret whatever its name (`url_secrets`: ``DATABASE_URL=postgresql://app:
	PASSWORD@db/prod`` gives the password), as in `environment_secrets` and
	`settings_secrets`.

	Args:
		values: The values by their names.
	"""
	out: set[str] = set()
	for name, value in values.items():
		if not value:
			continue
		lowered = name.lower()
		if secret_name(name) or (len(value) >= 6 and not lowered.endswith(PUBLIC_NAMES)):
			out.add(value)
		if "//" in value:  # the password of a URL under a public name, or inside a secret one
			out |= url_secrets(value)
	return {v for v in out if v.strip()}


_PAIRS = LazyPattern(r"[;,]")


def header_secrets(name: str, value: str) -> set[str]:
	"""The secrets of one header's value: none for a public header.

	A public header is a standard one (`PUBLIC_HEADERS`), or one named like something public as
	a credential config's key is (an id, a region, a version: ``Notion-Version`` and
	``anthropic-version`` hold a date every reply may show). Else the value whole, and its parts
	a service or a log may show alone: each word of 6+ characters (the token of
	``Bearer <token>``; not the scheme's name before it), each value of 6+ characters of a
	``name=value`` list (a ``Cookie``'s ``theme=dark; sid=<session>``), and the password and the
	``user:password`` that ``Basic <base64>`` carries. The one rule for every configured header:
	a provider's settings (`settings_secrets`), a credential config (`secret_values`), an MCP
	server's ``headers`` (``openmolt_mcp``) and an integration's own ``api_setup``.

	Args:
		name: The header's name (any case).
		value: Its value.
	"""
	lowered = name.lower()
	if lowered in PUBLIC_HEADERS or _public_key(name) or not value.strip():
		return set()
	out = {value}
	words = value.split()
	scheme = words[0] if len(words) > 1 and words[0].isalpha() else None  # Bearer, Basic, Token
	out.update(part for part in words if len(part) >= 6 and part != scheme)
	for pair in _PAIRS().split(value):
		_, sep, given = pair.partition("=")
		given = given.strip().strip('"')
		if sep and len(given) >= 6:
			out.add(given)
	scheme, _, credentials = value.strip().partition(" ")
	if scheme.lower() == "basic":
		try:
			decoded = base64.b64decode(credentials.strip(), validate=True).decode("utf-8")
		except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
			decoded = ""
		password = decoded.partition(":")[2]
		if len(password) >= 6:
			out.update((decoded, password))
	return out


def settings_secrets(settings: Mapping[str, object]) -> set[str]:
	"""The secret values in a settings mapping (a provider's ``llm_providers`` entry).

	A string is secret when its key hints at one (key, token, secret, password, auth...); every
	value of a ``headers`` mapping is, except a few standard headers, and so are its parts
	(`header_secrets`: the token of ``Bearer <token>``, a cookie's value, a ``Basic``
	password); a URL's secrets are (`url_secrets`). Nested mappings are read
	too.

	Args:
		settings: The settings.
	"""
	out: set[str] = set()
	for key, value in settings.items():
		if isinstance(value, str):  # first: a str is no Mapping, and the ABC check costs more
			if secret_name(str(key)):
				out.add(value)
			if "//" in value:  # a base URL's userinfo, ?api-key=, a webhook's path token
				out |= url_secrets(value)
		elif isinstance(value, Mapping):
			if str(key).lower() == "headers":
				for name, header in value.items():
					if isinstance(header, str):
						out |= header_secrets(str(name), header)
			else:
				out |= settings_secrets(value)
		else:
			secret = getattr(value, "get_secret_value", None)  # a pydantic SecretStr
			if callable(secret):
				found = secret()
				if isinstance(found, str):
					out.add(found)
	return {v for v in out if v.strip()}


# A credential config's public keys, by their ends (an account SID, ``accountSid``, ends like an
# id and is not a public one).
_PUBLIC_SUFFIXES = (
	"id",
	"region",
	"endpoint",
	"url",
	"uri",
	"domain",
	"tenant",
	"shop",
	"bucket",
	"version",
	"date",
	"style",
	"model",
)


def _public_key(name: str) -> bool:
	"""Whether a config key or a header, by its name (any case), holds something public.

	It ends like a public name (`_PUBLIC_SUFFIXES`: an id, a region, a version...) and names no
	secret (`secret_name`); an account SID (``accountSid``) is no public id.
	"""
	lowered = name.lower()
	return (
		lowered.endswith(_PUBLIC_SUFFIXES) and not lowered.endswith("sid") and not secret_name(name)
	)


def secret_values(config: Mapping[str, Any]) -> set[str]:
	"""The values of a credential config that must never be shown.

	Every string of 6+ characters is a secret unless its key names something public (an id, a
	region, an endpoint, a URL, a tenant, a shop, a bucket, a version or a date) and says nothing
	of keys, tokens, secrets or passwords; so a secret cannot leak because its key had an unusual
	name, while a region in an error message stays readable. A public URL's own secrets are
	secret all the same (`url_secrets`).
	"""
	return {value for _, value in _secrets(config)}


def secret_names(config: Mapping[str, Any]) -> frozenset[str]:
	"""The keys of a credential config whose values are secrets (`secret_values`), never the values.

	A key of a nested config is named by its path (``oauth.client_secret``).
	"""
	return frozenset(name for name, _ in _secrets(config))


def _secrets(config: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
	"""The secret entries of a credential config, as (key path, value)."""
	out: list[tuple[str, str]] = []
	for key, value in config.items():
		lowered = key.lower()
		if isinstance(value, str) and len(value) >= 6:
			hinted = secret_name(key)
			if not hinted and _public_key(key):
				out += ((prefix + key, v) for v in sorted(url_secrets(value)))  # user:pw@ in a URL
				continue
			if value.isdigit() and not hinted:
				continue
			out.append((prefix + key, value))
			if "//" in value:  # its parts too: shown apart (a webhook's token in a log line)
				out += ((prefix + key, v) for v in sorted(url_secrets(value)))
		elif isinstance(value, Mapping):
			out += _secrets(value, f"{prefix}{key}.")
			if lowered == "headers":  # a header's parts too (`header_secrets`)
				for name, header in value.items():
					if isinstance(header, str):
						parts = header_secrets(str(name), header) - {header}
						out += ((f"{prefix}{key}.{name}", part) for part in sorted(parts))
	return out


ONE_TIME_QUERY = (
	"code",  # an OAuth redirect's authorization code: traded for tokens
	"pin",
	"_otp_",
	"_totp_",
	"_hotp_",
	"_hmac_",  # a signed callback's (Shopify's ?hmac=)
	"_mfa_code_",
	"_2fa_code_",
	"_sms_code_",
	"_verification_code_",
	"_confirmation_code_",
	"_activation_code_",
	"_reset_code_",
	"_login_code_",
	"_device_code_",
	"_user_code_",
	"_security_code_",
	"_access_code_",
	"_one_time_code_",
)
"""The query keys of a one-time credential, which no secret's name (`SECRET_HINTS`) says: a key
that is one of the bare words (``code``, ``pin``), or holds one written between underscores
among its words (``otp_code``, ``x-shopify-hmac``, ``verificationCode``). An ordinary field that
ends in ``code`` (``country_code``, ``zip_code``, ``error_code``) is none. ``state`` is not
here: an OAuth state is no credential (OpenMolt signs its own), and a consent link a person is
sent must keep it. Read by `url_secrets` only: a query, not an environment variable's name."""


def one_time_query(name: str) -> bool:
	"""Whether a URL's query key names a one-time credential (`ONE_TIME_QUERY`).

	Args:
		name: The key, decoded (``code``, ``otp_code``, ``X-Shopify-Hmac``).
	"""
	words = _words(name)
	return words.strip("_") in ONE_TIME_QUERY or any(
		hint in words for hint in ONE_TIME_QUERY if hint.startswith("_")
	)


_URL_AUTHORITY = LazyPattern(r"^[A-Za-z][A-Za-z0-9+.-]*://([^/?#]*)")
_DRIVER_PASSWORD = LazyPattern(r"^[A-Za-z][A-Za-z0-9+.-]*://[^:/\s]*:([^@\s]*)@")
"""A database URL's password as SQLAlchemy's ``make_url`` reads it: every character up to the
``@``, a ``/``, ``?`` or ``#`` too (``postgresql://app:pa/ss@db/x`` connects with ``pa/ss``),
after a user that may hold an ``@`` (``myadmin@server``, as Azure's single server names one)."""
_PUBLIC_QUERY = (*_PUBLIC_SUFFIXES, *PUBLIC_NAMES, "format", "type")
"""Query keys whose long values stay readable (``sslmode=require``, ``api-version=2024-06-01``)."""


def url_secrets(url: str, *, hinted_only: bool = False, logins: bool = False) -> set[str]:
	r"""The secrets a URL carries: its userinfo, and its query values unless named as public.

	``https://proxy:PASSWORD@host/v1``, ``https://TOKEN@host`` (a user and no password in a web
	URL may be the token, unless it reads as a name: ``https://alice@host``, an e-mail address;
	``postgresql://postgres@db`` names a user), ``https://TOKEN:x-oauth-basic@host`` (a user that looks like a token: 8+
	characters with a digit, or 20+), ``postgresql://user:PASSWORD@db/runs`` (a password may
	hold an ``@``: the userinfo ends at the last one; in a URL that is not a web one, a ``/``,
	``?`` or ``#`` too, as the database driver reads it: `_DRIVER_PASSWORD`), ``https://x.example/v1?api-key=KEY`` (an
	Azure deployment) or ``?sig=...`` (a signed URL). A query value is secret when its key hints
	at one, or when it has 6+ characters, is not a number and its key does not name something
	public (``sslmode``, ``api-version``, ``region``). In a web URL, the token in its path too
	(`_path_secrets`: a webhook's, a bot's). Each as written and percent-decoded. Every
	spelling: a scheme in any case, scheme-relative (``//user:PASSWORD@host``: a web URL), with
	tabs and line breaks inside, which a WHATWG parser takes out (``https://u:PASS\nWORD@host``:
	both ``PASSWORD`` and the text's ``PASS\nWORD`` are returned), an IPv6 host, JSON-escaped (``https:\/\/``, ``\u0026``), and a URL in a query value.

	The one rule for every URL OpenMolt reads: provider settings, integration configs, the
	environment and MCP servers (``openmolt_mcp``).

	Args:
		url: The URL, or a value holding one (``jdbc:postgresql://...``, a JVM option's
			``-Dproxy=http://...``: the first URL in it is read); text without one gives nothing.
		hinted_only: Only the query values whose key hints at a secret (``api_key``, ``sig``,
			``X-Amz-Signature``): for a URL someone else wrote (a log's request line), whose
			``?q=`` search words are no secret.
		logins: Only its login: the password and a token user of its userinfo (a database's
			password as its driver reads it too), not its query or path: for a link a person
			is sent, which must still work (a presigned ``?X-Amz-Signature=``).
	"""
	return _read_url(url, hinted_only, 0, logins)


def _read_url(url: str, hinted_only: bool, depth: int, logins: bool = False) -> set[str]:
	"""`url_secrets` of a URL nested ``depth`` deep in others' queries.

	A query value that is a URL is read too, up to `_NESTED` deep.
	"""
	written = url.strip().strip(_URL_EDGES).strip()
	text = _unbroken(written)  # ``https://u:PASSWORD\n@host``: read as a WHATWG parser does
	if text is not written:
		read = _read_url(text, hinted_only, depth, logins)
		return read | _as_written(read, written)
	text = _slashes_read(text)  # ``https:/user:PASSWORD@host`` as ``https://``
	# a URL inside a value: ``jdbc:postgresql://``, ``-Dx=http://``
	if not _URL_START().match(text):
		found = _LOGGED_URL().search(text)
		return _read_url(text[found.start() :], hinted_only, depth, logins) if found else set()
	if "\\" in text:  # JSON-escaped (``https:\/\/``, ``\u0026``): read as written and unescaped
		unescaped = _unbroken(_unescaped(text))  # ``\n`` escaped in it: taken out too
		if unescaped != text:
			return _url_secrets(text, hinted_only, depth, logins) | _url_secrets(
				unescaped, hinted_only, depth, logins
			)
	return _url_secrets(text, hinted_only, depth, logins)


_URL_START = LazyPattern(r"[A-Za-z][A-Za-z0-9+.-]*:(?://|\\/\\/)|//")
"""Text that starts as a URL does: a scheme (``https://``, JSON's ``https:\\/\\/``), or ``//``."""
_NESTED = 3
"""How deep `url_secrets` reads a URL in a URL's query (``?next=https://...?api_key=``)."""


def _url_secrets(text: str, hinted_only: bool, depth: int, logins: bool = False) -> set[str]:
	"""`url_secrets` of one reading of a URL."""
	from urllib.parse import unquote, unquote_plus, urlsplit

	out: set[str] = set()
	if text[:2] == "//":  # scheme-relative: the page's scheme, a web one
		text = f"https:{text}"
	authority = _URL_AUTHORITY().match(text)
	web = text.lower().startswith(("http://", "https://", "ws://", "wss://"))
	if authority and "@" in authority[1]:
		user, _, password = authority[1].rpartition("@")[0].partition(":")
		# A user alone may be the token in a web URL (``https://TOKEN@github.com``) unless it
		# reads as a name (`_name_like`); a database's user alone (``postgresql://postgres@db``)
		# is a name, unless it looks like a token.
		token = not _name_like(unquote(user)) and ((not password and web) or _token_like(user))
		for secret in (password, user if token else ""):
			out.update((secret, unquote(secret)))
	driver = None if web else _DRIVER_PASSWORD().match(text)
	if driver:  # where the authority above ended early, at a ``/``, ``?`` or ``#`` of the password
		out.update((driver[1], unquote(driver[1])))
	if logins:  # a link a person is sent: its query and path kept, so that it works
		return {v for v in out if v.strip()}
	try:
		query = urlsplit(text).query if authority else ""
	except ValueError:
		query = ""
	for pair in query.split("&"):
		key, _, raw = pair.partition("=")
		hinted = secret_name(unquote_plus(key)) or one_time_query(unquote_plus(key))
		name = unquote_plus(key).lower()
		for value in {raw, unquote(raw), unquote_plus(raw)}:  # as written, and decoded
			if depth < _NESTED and "//" in value:  # a URL in the query: a redirect's, a link's
				out |= _read_url(value, hinted_only, depth + 1)
			if hinted or (
				not hinted_only
				and len(value) >= 6
				and not value.isdigit()
				and not name.endswith(_PUBLIC_QUERY)
			):
				out.add(value)
	if web:  # a webhook's or a bot's URL (a database's path names a file or a database)
		out |= _path_secrets(text)
	return {v for v in out if v.strip()}


_BOT_SEGMENT = LazyPattern(r"bot(\d+:[A-Za-z0-9_-]{20,})")
"""A Telegram bot's token in a path: ``/bot<token>/sendMessage``, ``/file/bot<token>/...``."""
_LONG_SEGMENT = 16
"""A token-like path segment this long after a webhook's marker is a secret whatever its place."""


def _path_secrets(url: str) -> set[str]:
	"""The secrets a URL's path carries, as written and percent-decoded (`url_secrets`).

	Whoever holds a webhook's URL may post to it, and a bot's URL carries its token: a segment
	``bot<token>`` (Telegram's); a token-like segment (`_token_like_segment`) after one named
	like a secret (``/with/key/<key>``: IFTTT); and after a webhook's marker (a segment or the
	host's first label holding ``hook``: ``/api/webhooks/<id>/<token>`` for Discord,
	``hooks.slack.com/services/T../B../<token>``, ``hooks.zapier.com/hooks/catch/<id>/<hook>``,
	``hook.eu1.make.com/<token>``, Mattermost's ``/hooks/<id>``, Teams' ``/webhookb2/...``), the
	last token-like segment and every one of 16+ characters. Ids (digits, a Slack team's
	``T0123ABCD``), words (``silent``, ``IncomingWebhook``) and ordinary API paths stay readable.
	"""
	from urllib.parse import urlsplit

	try:
		parts = urlsplit(url)
	except ValueError:
		return set()
	segments = [s for s in parts.path.split("/") if s]
	found: set[str] = set()
	hooked = "hook" in (parts.hostname or "").split(".")[0]
	after: list[str] | None = [] if hooked else None  # the segments after a webhook's marker
	for k, segment in enumerate(segments):
		bot = _BOT_SEGMENT().fullmatch(unquote(segment))  # ``bot123%3AAA...`` too
		if bot:
			found.add(bot[1])
		if after is not None and _token_like_segment(segment):
			after.append(segment)
		elif after is None and "hook" in segment.lower():
			after = []
		if k + 1 < len(segments) and secret_name(segment) and _token_like_segment(segments[k + 1]):
			found.add(segments[k + 1])
	if after:
		found.add(after[-1])
		found.update(s for s in after if len(s) >= _LONG_SEGMENT)
	return {v for s in found for v in (s, unquote(s))}


def _token_like_segment(segment: str) -> bool:
	"""Whether a path segment looks like a token (not a word such as ``silent``, not an id).

	6+ characters, not a number, with a digit or 16+ characters.
	"""
	return (
		len(segment) >= 6
		and not segment.isdigit()
		and (len(segment) >= _LONG_SEGMENT or any(c.isdigit() for c in segment))
	)


def shown_url(url: str) -> str:
	"""A URL as a message names it: its password left out, any other secret it carries masked.

	The userinfo is cut to its user name up to the last ``@`` (where a database driver may end a
	password that holds ``/``, ``?`` or ``#``), then every secret `url_secrets` finds is masked
	(``?password=``, a token user). For a store named in an error: ``postgresql://app@db/runs``.

	Args:
		url: The URL (text that is no URL is returned as it is, masked the same way).
	"""
	head, sep, rest = url.partition("://")
	if not sep and url[:2] == "//":  # scheme-relative
		head, sep, rest = "", "//", url[2:]
	if sep and "@" in rest:
		auth, _, host = rest.rpartition("@")
		rest = f"{auth.split(':', 1)[0]}@{host}"
	return mask(f"{head}{sep}{rest}", frozenset(url_secrets(url)))


_NAME = LazyPattern(r"[^\W\d_]+(?:[._-][^\W\d_]+)*")
"""A word, or words joined by ``.``, ``-`` or ``_`` (``alice``, ``first.last``, ``x-access-token``)."""
_DOMAIN = LazyPattern(r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_LONGEST_NAME = 20


def _name_like(user: str) -> bool:
	"""Whether a web URL's user alone (decoded) reads as a name, not a token that could be one.

	Letters only, as words (`_NAME`), shorter than 20 characters, or such a name at a domain (an
	e-mail address). A digit, any other sign, or 20+ characters: unknown, so a secret.
	"""
	local, at, domain = user.rpartition("@")
	if at and not _DOMAIN().fullmatch(domain):
		return False
	name = local if at else user
	return len(name) < _LONGEST_NAME and _NAME().fullmatch(name) is not None


def _token_like(user: str) -> bool:
	"""Whether a URL's user name looks like a token (not ``postgres``, ``admin``, ``x-access-token``)."""
	return len(user) >= 20 or (len(user) >= 8 and any(c.isdigit() for c in user))
