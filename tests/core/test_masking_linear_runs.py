"""The linear-time run finders and skipped passes of `mask` mask what the regex passes masked.

`mask` found a percent-encoded run and a run with HTML character references with one pattern
each (a lookbehind-anchored ``[^ends]*`` around the encoded character), lower-cased every text
to look for hex in any case, and read every line of a text with a long line for wrapped base64.
The old passes are kept here as the oracle: thousands of random texts made of the characters
that end a run, the encoded characters' parts and pieces of a secret's spellings must come out
of the new passes exactly as they came out of the old ones.
"""

from __future__ import annotations

import base64
import random
import re
import textwrap
from urllib.parse import quote, quote_plus, unquote, unquote_plus

from openmolt_core._support import masking
from openmolt_core._support.masking import MASK, mask, mask_bytes

SECRET = "sk-Secret/Val+ue9"
SECRETS = frozenset({SECRET, "ab\u00e9cd zz 77"})

# the oracle: the passes as they were --------------------------------------------------------

OLD_PERCENT_RUN = re.compile(
	r"(?<![^\s\"'<>\\&?#=,;])[^\s\"'<>\\&?#=,;]*%[0-9A-Fa-f]{2}[^\s\"'<>\\&?#=,;]*"
)
OLD_HTML_RUN = re.compile(
	r"(?<![^\s\"'<>])[^\s\"'<>]*&(?:amp;)?#(?:[0-9]+|[xX][0-9A-Fa-f]+);?[^\s\"'<>]*"
)


def old_masked_run(run: str, secrets: frozenset[str]) -> str:
	for decode in (unquote, unquote_plus):
		decoded = run
		for _ in range(3):
			decoded = decode(decoded)
			if any(s.strip() in decoded for s in secrets):
				return MASK
			if "%" not in decoded:
				break
	return run


def old_masked_html(run: str, secrets: frozenset[str]) -> str:
	import html

	decoded = run
	for _ in range(2):
		decoded = html.unescape(decoded)
		if any(s.strip() in decoded for s in secrets):
			return MASK
		if "&" not in decoded:
			break
	return run


def old_masked_wrapped(lines: list[str], newline: str, cr: str, secrets: frozenset[str]) -> str:
	b64 = masking._B64_LINE()
	out: list[str] = []
	i = 0
	while i < len(lines):
		j = i
		while j < len(lines) and len(lines[j]) >= 4 and b64.fullmatch(lines[j].removesuffix(cr)):
			j += 1
		k = next((n for n in range(i, j) if len(lines[n].removesuffix(cr)) >= 40), j)
		if j - k >= 2:
			joined = "".join(line.removesuffix(cr) for line in lines[k:j])
			if old_mask(joined, secrets) != joined:
				out.extend(lines[i:k])
				out.append(MASK + (cr if lines[j - 1].endswith(cr) else ""))
				i = j
				continue
		out.extend(lines[i : max(j, i + 1)])
		i = max(j, i + 1)
	return newline.join(out)


def old_other_spellings(text: str, secrets: frozenset[str]) -> str:
	wide, hexes = masking._wide_and_hex(secrets)
	lowered = text.lower()
	if any(h in lowered for h in hexes):
		text = re.sub("|".join(hexes), MASK, text, flags=re.IGNORECASE)
	if "\x00" in text or ("\\" in text and ("x00" in text or "u0000" in text)):
		for spelling in wide:
			if spelling in text:
				text = text.replace(spelling, MASK)
	if "&" in text and ("&#" in text or "&amp;#" in text):
		text = OLD_HTML_RUN.sub(lambda m: old_masked_html(m[0], secrets), text)
	for newline, cr in (("\n", "\r"), ("\\n", "\\r")):
		if newline in text:
			lines = text.split(newline)
			if any(len(line) >= 40 and " " not in line for line in lines):
				text = old_masked_wrapped(lines, newline, cr, secrets)
	return text


def old_mask(text: str, secrets: frozenset[str]) -> str:
	long, short = masking._by_length(secrets)
	if long:
		probes, decoded = masking._patterns(long)
		for probe, around in probes:
			if probe in text:
				for spelling in around:
					if spelling in text:
						text = text.replace(spelling, MASK)
		if decoded and "%" in text:
			text = OLD_PERCENT_RUN.sub(lambda m: old_masked_run(m[0], decoded), text)
		if decoded and "\\" in text and ("\\u" in text or "\\x" in text or "\\U" in text):
			text = masking._masked_escapes(text, decoded)
		if decoded:
			text = old_other_spellings(text, decoded)
			if any(mark in text for mark in masking._ELLIPSES):  # later families, as they are
				text = masking._masked_elided(text, decoded)
		text = masking._masked_cuts(text, long)
	if short is not None:
		text = short.sub(MASK, text)
	return text


# random texts -------------------------------------------------------------------------------

ENDS = [" ", "\t", "\n", "\r", "\x0b", "\x1c", "\x85", "\xa0", "\u2028", '"', "'", "<", ">"]
ENDS += ["\\", "&", "?", "#", "=", ",", ";"]
PARTS = ["%", "%2", "%25", "%2B", "%41", "%e9", "%C3", "%g1", "2", "5", "0", "a", "F", "+"]
PARTS += ["&#", "&#x", "&amp;#", "amp;", "x", "X", ";", "1", "15", "115", "73", "6b", "6B"]
PARTS += ["\\n", "\\r", "\\x", "\\u00", "\\x00", "\x00", "k", "-", "/", "AAAA", "zz"]


def _fragments(secret: str) -> list[str]:
	"""Pieces of a secret's spellings: whole, and cut in two at random points."""
	data = secret.encode()
	spelled = [
		secret,
		quote(secret, safe=""),
		quote_plus(secret, safe="/"),
		quote(quote(secret, safe=""), safe=""),
		"".join(f"%{b:02x}" for b in data),
		"".join("+" if b == 32 else f"%{b:02X}" for b in data),  # read by unquote_plus only
		"".join(f"&#{ord(c)};" for c in secret),
		"".join(f"&amp;#x{ord(c):X};" for c in secret),
		"".join(f"&#{ord(c)}" for c in secret),
		"".join(f"\\x{b:02x}" for b in data),
		"".join(c.upper() if i % 3 else c for i, c in enumerate(data.hex())),
		secret.encode("utf-16-le").decode("latin-1"),
	]
	rng = random.Random(secret)
	out = list(spelled)
	for spelling in spelled:
		cut = rng.randrange(1, len(spelling))
		out += (spelling[:cut], spelling[cut:])
	return out


def _wrapped_blocks(secret: str) -> list[str]:
	"""Base64 of a text holding the secret, wrapped at 40 and 76, with ``\\n``, ``\\r\\n``, JSON's."""
	body = base64.b64encode(b"x" * 45 + secret.encode() + b" and after it, more").decode()
	out: list[str] = []
	for width, newline in ((40, "\n"), (76, "\r\n"), (44, "\\n")):
		lines = textwrap.wrap(body, width)
		out += (newline.join(lines), *lines[:2], newline)
	return out


ALPHABET = ENDS + PARTS + [f for s in SECRETS for f in _fragments(s)]
ALPHABET += [b for s in SECRETS for b in _wrapped_blocks(s)]


def _texts(n: int, seed: str) -> list[str]:
	rng = random.Random(seed)
	return ["".join(rng.choices(ALPHABET, k=rng.randint(0, 30))) for _ in range(n)]


def _percent(run: str) -> str:
	return masking._runs_replaced(
		run,
		(masking._PERCENT(), masking._PERCENT_RUN_START(), masking._PERCENT_RUN_REST()),
		lambda r, _: f"[{r}]",
		frozenset(),
	)


def _html(run: str) -> str:
	return masking._runs_replaced(
		run,
		(masking._HTML_REF(), masking._HTML_RUN_START(), masking._HTML_RUN_REST()),
		lambda r, _: f"[{r}]",
		frozenset(),
	)


# tests --------------------------------------------------------------------------------------


def test_the_percent_encoded_runs_found_are_the_old_patterns_matches() -> None:
	"""Every run the old percent-run pattern matched is found, whole, and no other."""
	for text in _texts(4000, "percent"):
		assert _percent(text) == OLD_PERCENT_RUN.sub(lambda m: f"[{m[0]}]", text), text


def test_the_html_reference_runs_found_are_the_old_patterns_matches() -> None:
	"""Every run the old HTML-reference pattern matched is found, whole, and no other."""
	for text in _texts(4000, "html"):
		assert _html(text) == OLD_HTML_RUN.sub(lambda m: f"[{m[0]}]", text), text


def test_a_percent_encoded_run_is_masked_as_the_old_decoding_masked_it() -> None:
	"""A run skipped unread (shorter than a secret, no ``+``) is one the old decoding kept."""
	decoded = masking._patterns(SECRETS)[1]
	changed = 0
	for run in OLD_PERCENT_RUN.findall("".join(_texts(3000, "runs"))):
		expected = old_masked_run(run, decoded)
		assert masking._masked_run(run, decoded) == expected, run
		changed += expected != run
	assert changed > 50  # the texts hold secrets the runs decode to


def test_an_html_reference_run_is_masked_as_the_old_unescaping_masked_it() -> None:
	"""A run skipped unread (shorter than a secret) is one the old unescaping kept."""
	decoded = masking._patterns(SECRETS)[1]
	changed = 0
	for run in OLD_HTML_RUN.findall("".join(_texts(3000, "html runs"))):
		expected = old_masked_html(run, decoded)
		assert masking._masked_html(run, decoded) == expected, run
		changed += expected != run
	assert changed > 50  # the texts hold secrets the runs decode to


def test_mask_masks_random_texts_as_the_old_passes_did() -> None:
	"""`mask` and `mask_bytes` give what the old passes gave, and mask some texts."""
	changed = 0
	for text in _texts(3000, "mask"):
		expected = old_mask(text, SECRETS)
		assert mask(text, SECRETS) == expected, text
		changed += expected != text
		data = text.encode("utf-8")
		view = data.decode("latin-1")
		utf8 = frozenset(s.encode().decode("latin-1") for s in SECRETS if not s.isascii())
		old = old_mask(view, SECRETS | utf8)
		assert mask_bytes(data, SECRETS) == (data if old == view else old.encode("latin-1"))
	assert changed > 1000


def test_random_bytes_with_spellings_among_them_are_masked_as_before() -> None:
	"""Random bytes around the spellings give what the old passes gave."""
	rng = random.Random(7)
	for _ in range(200):
		pieces = [rng.randbytes(rng.randint(0, 300)).decode("latin-1") for _ in range(4)]
		text = "".join(p + rng.choice(ALPHABET) for p in pieces)
		assert mask(text, SECRETS) == old_mask(text, SECRETS), repr(text)


def test_a_hex_dump_in_mixed_case_is_masked_without_digits_outside_it() -> None:
	"""The digits a text is checked for first are the hex spelling's own: mixed case is masked."""
	hexed = SECRET.encode().hex()
	mixed = "".join(c.upper() if i % 2 else c for i, c in enumerate(hexed))
	assert mask(f"dump: {mixed}.", frozenset({SECRET})) == f"dump: {MASK}."
	assert masking._hex_digits((hexed,))[0] in hexed
	assert masking._hex_digits(("abcdef",)) == ("",)  # no digits: every text is lower-cased


def test_wrapped_base64_after_a_long_line_inside_a_block_is_masked_as_before() -> None:
	"""A block whose first long line is not its first line, between prose lines, is masked whole."""
	body = base64.b64encode(b"y" * 80 + SECRET.encode() + b"!" * 30).decode()  # across a break
	lines = ["Hello there", "MIME", *textwrap.wrap(body, 40), "bye now", "A" * 50, "BBBB"]
	text = "\n".join(lines)
	assert mask(text, SECRETS) == old_mask(text, SECRETS)
	assert mask(text, SECRETS) == "\n".join(
		["Hello there", "MIME", MASK, "bye now", "A" * 50, "BBBB"]
	)
