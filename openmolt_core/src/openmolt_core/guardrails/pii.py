"""The PII-redaction guardrail: emails, phone, card and bank account numbers, US SSNs, IPs.

```python
from openmolt_core.guardrails import pii_redaction

guardrails = [
	pii_redaction(),  # the run's input, before the model reads it
	pii_redaction(on="tool_result", labels=["untrusted"]),  # what outside content brings in
]
```

Each match is replaced by ``[email]``, ``[phone]``, ``[card]``, ``[iban]``, ``[ssn]`` or ``[ip]``
in every string of the value, an object's keys too (two keys that redact alike are numbered:
``[email]``, ``[email] 2``); redacting twice gives the same text.
Every kind is found in time linear in the text's length.

- Phone numbers are found by `phonenumbers`, the Python port of Google's libphonenumber: it
  knows every country's numbering plan, so it finds numbers written in local and international
  forms and skips digit runs that are no valid number (``Leniency.VALID``). It is pure Python and
  well kept, but not on the core's dependency list: install ``openmolt-core[pii]``. Numbers
  without a ``+`` country code are read as numbers of ``region``.
- Card numbers are 13 to 19 digits (spaces or dashes allowed between them) with a card network's
  prefix and a valid Luhn check digit. The Luhn check is a few lines of arithmetic, so no library.
- Email addresses are matched by a pattern for the common form (``local@domain.tld``, letters of
  any script included), not every form RFC 5322 allows (quoted local parts, IP-literal domains).
- IBANs (ISO 13616) are a country code of the IBAN registry, two check digits and as many
  letters and digits as that country's IBANs have, written together (``DE89370400440532013000``)
  or in the printed groups of four (``DE89 3704 0044 0532 0130 00``), whose ISO 7064 mod-97
  check holds. A card number among an IBAN's digits is part of the IBAN.
- US Social Security numbers are the dashed ``AAA-GG-SSSS`` form, less the numbers never issued:
  area 000, 666 or 900-999 (ITINs among them), group 00, serial 0000, and the two voided ones
  printed on specimen cards (078-05-1120, 219-09-9999). Nine digits without dashes are any
  number, and are left alone.
- IP addresses (kind ``ip``, not a default: a version number such as ``1.2.3.4`` reads as one)
  are IPv4 dotted quads (no octet above 255, no leading zero) and IPv6 addresses that the
  standard library's `ipaddress` accepts and that hold a digit (so ``Add::Bee``, a C++ name made
  of hex letters, is none).

This finds what is written in the usual ways; it is no guarantee that nothing personal remains
(names, addresses and numbers spelled out in words pass through).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Literal, get_args

from openmolt_core._support.masking import free_key
from openmolt_core.errors import ConfigurationError
from openmolt_core.guardrails.base import (
	Guardrail,
	GuardrailCheck,
	Stage,
	Verdict,
	refuse,
	rewrite,
	trip,
)

__all__ = ["PII_KINDS", "PiiKind", "find_pii", "pii_redaction", "redact_pii"]

PiiKind = Literal["email", "phone", "card", "iban", "ssn", "ip"]
"""What the redaction finds."""

PII_KINDS: tuple[PiiKind, ...] = tuple(k for k in get_args(PiiKind) if k != "ip")
"""The kinds found by default: every kind but ``ip`` (which a version number looks like)."""

_ALL_KINDS: tuple[str, ...] = get_args(PiiKind)

# Letters and digits of any script (``[^\W_]``), so ``jöhn@exämple.de`` is found whole. The
# lookbehind starts a match only where a local part starts: without it a long run of letters
# is scanned once from each of its positions (quadratic time).
_EMAIL = re.compile(r"(?<![\w.%+-])[\w.%+-]+@(?:[^\W_](?:[\w-]*[^\W_])?\.)+[^\W\d_]{2,}")
# Digits in groups with one space or dash between them; a card is found among its groups.
_DIGIT_RUN = re.compile(r"\d+(?:[ -]\d+)*")
_DIGIT_GROUP = re.compile(r"\d+")
# Visa, Mastercard (51-55, 2221-2720), American Express, Diners, JCB, Discover, UnionPay.
_NETWORK = re.compile(r"4|5[1-5]|2[2-7]|3[0478]|35|6")


# The IBAN registry (SWIFT, ISO 13616): each country's IBAN length, check digits included.
_IBAN_LENGTHS: dict[str, int] = {
	**dict.fromkeys(("NO",), 15),
	**dict.fromkeys(("BE",), 16),
	**dict.fromkeys(("DK", "FI", "FK", "FO", "GL", "NL", "SD"), 18),
	**dict.fromkeys(("MK", "SI"), 19),
	**dict.fromkeys(("AT", "BA", "EE", "KZ", "LT", "LU", "MN", "XK"), 20),
	**dict.fromkeys(("CH", "HR", "LI", "LV"), 21),
	**dict.fromkeys(("BG", "BH", "CR", "DE", "GB", "GE", "IE", "ME", "RS", "VA"), 22),
	**dict.fromkeys(("AE", "GI", "IL", "IQ", "OM", "SO", "TL"), 23),
	**dict.fromkeys(("AD", "CZ", "ES", "MD", "PK", "RO", "SA", "SE", "SK", "TN", "VG"), 24),
	**dict.fromkeys(("LY", "PT", "ST"), 25),
	**dict.fromkeys(("IS", "TR"), 26),
	**dict.fromkeys(("BI", "DJ", "FR", "GR", "IT", "MC", "MR", "SM"), 27),
	**dict.fromkeys(("AL", "AZ", "BY", "CY", "DO", "GT", "HN", "HU", "LB", "NI", "PL", "SV"), 28),
	**dict.fromkeys(("BR", "EG", "PS", "QA", "UA"), 29),
	**dict.fromkeys(("JO", "KW", "MU", "YE"), 30),
	**dict.fromkeys(("MT", "SC"), 31),
	**dict.fromkeys(("LC",), 32),
	**dict.fromkeys(("RU",), 33),
}
# Where an IBAN may start: two letters and two digits, not inside a word.
_IBAN_START = re.compile(r"(?<![^\W_])[A-Za-z]{2}[0-9]{2}")
# AAA-GG-SSSS, not inside a longer dashed number or a word.
_SSN = re.compile(r"(?<![\w-])([0-9]{3})-([0-9]{2})-([0-9]{4})(?![\w]|-[0-9])")
_VOID_SSNS = frozenset({"078051120", "219099999"})
# A dotted quad, not inside a longer dotted run (an OID, a version) or a word.
_IPV4 = re.compile(r"(?<![\w.])(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?![\w]|\.[0-9])")
# Hex digits and colons with two colons at least (and an IPv4 tail): checked by `ipaddress`.
_IPV6 = re.compile(r"(?<![\w:.])(?=[0-9A-Fa-f]*:[0-9A-Fa-f]*:)[0-9A-Fa-f:.]{2,46}(?![\w:])")


@functools.cache
def _iban_rest(need: int) -> re.Pattern[str]:
	"""The rest of an IBAN after its first four characters, then no letter or digit.

	That is ``need`` letters and digits, written together or in the printed groups of four
	after single spaces (the last group may be shorter).
	"""
	whole, left = divmod(need, 4)
	printed = rf"(?: [A-Za-z0-9]{{4}}){{{whole}}}" + (rf" [A-Za-z0-9]{{{left}}}" if left else "")
	return re.compile(rf"(?:[A-Za-z0-9]{{{need}}}|{printed})(?![A-Za-z0-9])")


def _iban_valid(iban: str) -> bool:
	"""ISO 7064 mod 97-10 over the IBAN (its first four characters moved to the end)."""
	if iban[2:4] in ("00", "01", "99"):  # never check digits: 98 - (n mod 97) is 2 to 98
		return False
	moved = iban[4:] + iban[:4]
	return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _ibans(text: str) -> Iterator[tuple[int, int]]:
	"""The IBANs in a text, as spans."""
	for m in _IBAN_START.finditer(text):
		country = m.group()[:2].upper()
		length = _IBAN_LENGTHS.get(country)
		if length is None:
			continue
		rest = _iban_rest(length - 4).match(text, m.end())
		if rest is not None and _iban_valid((m.group() + rest.group()).replace(" ", "").upper()):
			yield m.start(), rest.end()


def _ssns(text: str) -> Iterator[tuple[int, int]]:
	"""The dashed US Social Security numbers the SSA could have issued, as spans."""
	for m in _SSN.finditer(text):
		area, group, serial = m.groups()
		if area in ("000", "666") or area[0] == "9" or group == "00" or serial == "0000":
			continue
		if area + group + serial not in _VOID_SSNS:
			yield m.start(), m.end()


def _ips(text: str) -> Iterator[tuple[int, int]]:
	"""The IPv6 and IPv4 addresses in a text, as spans (`ipaddress` decides IPv6's).

	IPv6 first: an IPv4 tail (``::ffff:10.0.0.1``) is part of its IPv6 address.
	"""
	import ipaddress

	for m in _IPV6.finditer(text):
		found = m.group().removesuffix(".")  # a sentence's full stop
		if not any(c.isdigit() for c in found):
			continue
		try:
			ipaddress.IPv6Address(found)
		except ValueError:
			continue
		yield m.start(), m.start() + len(found)
	for m in _IPV4.finditer(text):
		if all(len(o) == 1 or (o[0] != "0" and int(o) < 256) for o in m.group().split(".")):
			yield m.start(), m.end()


def _luhn(digits: str) -> bool:
	total = 0
	for position, char in enumerate(reversed(digits)):
		value = int(char)
		if position % 2:
			value = value * 2 - 9 if value > 4 else value * 2
		total += value
	return total % 10 == 0


def _cards(run: str) -> Iterator[tuple[int, int]]:
	"""The card numbers in a run of digit groups, as spans of it.

	A card starts and ends at a group's edge and is the longest such stretch from its start
	(13 to 19 digits, a network's prefix, a valid check digit); the search goes on after it.
	So a card next to another number (``qty 3 4111 1111 1111 1111``) is found, not skipped.
	"""
	groups = [(m.start(), m.end()) for m in _DIGIT_GROUP.finditer(run)]
	first = 0
	while first < len(groups):
		found = None
		if run[groups[first][0]] in "23456":  # the networks' first digits
			digits = ""
			candidates = []
			for last in range(first, len(groups)):
				digits += run[groups[last][0] : groups[last][1]]
				if len(digits) > 19:
					break
				if len(digits) >= 13:
					candidates.append((last, digits))
			for last, digits in reversed(candidates):
				if _NETWORK.match(digits) and _luhn(digits):
					found = last
					break
		if found is None:
			first += 1
			continue
		yield groups[first][0], groups[found][1]
		first = found + 1


def _phones() -> Any:
	try:
		import phonenumbers
	except ImportError:
		return None
	return phonenumbers


def find_pii(
	text: str, kinds: Iterable[str] = PII_KINDS, *, region: str | None = "US"
) -> list[tuple[str, int, int]]:
	"""Where personal data is in a text.

	Args:
		text: The text.
		kinds: What to find (`PII_KINDS`).
		region: The country (ISO 3166 alpha-2) of phone numbers written without ``+``; None
			finds international numbers only.

	Returns:
		``(kind, start, end)`` for each match, in order, none overlapping.

	Raises:
		ConfigurationError: ``phone`` is asked for without the `phonenumbers` package.
	"""
	kinds = set(kinds)
	found: list[tuple[str, int, int]] = []
	starts: list[int] = []  # the spans taken, sorted and apart: only neighbours can overlap
	ends: list[int] = []

	def add(kind: str, start: int, end: int) -> None:
		at = bisect.bisect_right(starts, start)
		if (at and ends[at - 1] > start) or (at < len(starts) and starts[at] < end):
			return
		found.append((kind, start, end))
		starts.insert(at, start)
		ends.insert(at, end)

	if "email" in kinds:
		for m in _EMAIL.finditer(text):
			add("email", m.start(), m.end())
	# Before cards and phones: an IBAN's or an SSN's digits are its own, not a card's.
	if "iban" in kinds:
		for start, end in _ibans(text):
			add("iban", start, end)
	if "ssn" in kinds:
		for start, end in _ssns(text):
			add("ssn", start, end)
	if "card" in kinds:
		for run in _DIGIT_RUN.finditer(text):
			for start, end in _cards(run.group()):
				add("card", run.start() + start, run.start() + end)
	if "phone" in kinds:
		phonenumbers = _phones()
		if phonenumbers is None:
			raise ConfigurationError(_no_phones())
		# The matcher gives up after max_tries candidates (65535 by default), which would let
		# the numbers after them through; a text has fewer candidates than characters.
		matcher = phonenumbers.PhoneNumberMatcher(
			text, region, leniency=phonenumbers.Leniency.VALID, max_tries=max(len(text), 1)
		)
		for match in matcher:
			add("phone", match.start, match.end)
	if "ip" in kinds:
		for start, end in _ips(text):
			add("ip", start, end)
	return sorted(found, key=lambda f: f[1])


def redact_pii(
	value: Any, kinds: Iterable[str] = PII_KINDS, *, region: str | None = "US"
) -> tuple[Any, dict[str, int]]:
	"""A value with personal data replaced by ``[email]``, ``[phone]`` and ``[card]``.

	Args:
		value: A string, or JSON data (tuples too), of any depth: every string in it is redacted,
			an object's keys too (a key that redacts to another's is numbered: ``[email] 2``).
		kinds: What to redact (`PII_KINDS`).
		region: The country of phone numbers written without ``+``.

	Returns:
		The redacted value (the same object when nothing was found) and the count per kind.

	Raises:
		ConfigurationError: ``phone`` is asked for without the `phonenumbers` package.
	"""
	counts: dict[str, int] = {}
	kinds = tuple(kinds)

	def text(s: str) -> str:
		matches = find_pii(s, kinds, region=region)
		if not matches:
			return s
		out, last = [], 0
		for kind, start, end in matches:
			out += [s[last:start], f"[{kind}]"]
			last = end
			counts[kind] = counts.get(kind, 0) + 1
		out.append(s[last:])
		return "".join(out)

	return _rebuilt(value, text), counts


def _rebuilt(value: Any, text: Callable[[str], str]) -> Any:
	"""``value`` with ``text`` applied to every string, an object's keys too, without recursion.

	Objects, arrays and tuples are rebuilt after their items (an explicit stack, so a value
	thousands of levels deep is as good as a shallow one); each is kept as the same object
	when none of its items changed. Two keys that come out alike are both kept, the later one
	numbered (`free_key`). A reference to a value that contains it becomes `CYCLE_NOTE`, as in
	a tool's result.
	"""
	if isinstance(value, str):
		return text(value)
	if not isinstance(value, dict | list | tuple):
		return value
	from openmolt_core._support.jsonsafe import CYCLE_NOTE

	def items(node: Any) -> list[Any]:
		return list(node.values()) if isinstance(node, dict) else list(node)

	# Each frame: a container, its items, and what each of them became so far.
	stack: list[tuple[Any, list[Any], list[Any]]] = [(value, items(value), [])]
	inside = {id(value)}  # the containers being rebuilt: one met again is a cycle
	while True:
		node, given, done = stack[-1]
		if len(done) < len(given):
			item = given[len(done)]
			if isinstance(item, str):
				done.append(text(item))
			elif not isinstance(item, dict | list | tuple):
				done.append(item)
			elif id(item) in inside:
				done.append(CYCLE_NOTE)
			else:
				inside.add(id(item))
				stack.append((item, items(item), []))
			continue
		stack.pop()
		inside.discard(id(node))
		built: Any
		if isinstance(node, dict):
			new: dict[Any, Any] = {}
			for key, item in zip(node, done, strict=True):
				new[free_key(text(key), new) if isinstance(key, str) else key] = item
			same = all(a is b for a, b in zip(new, node, strict=True))
			built = node if same and all(a is b for a, b in zip(done, given, strict=True)) else new
		elif all(a is b for a, b in zip(done, given, strict=True)):
			built = node
		else:
			built = tuple(done) if isinstance(node, tuple) else done
		if not stack:
			return built
		stack[-1][2].append(built)


def pii_redaction(
	on: Stage = "input",
	*,
	kinds: Sequence[PiiKind] = PII_KINDS,
	region: str | None = "US",
	action: Literal["rewrite", "refuse", "trip"] = "rewrite",
	tools: Sequence[str] = (),
	labels: Sequence[str] = (),
	name: str = "pii_redaction",
	message: bool | None = None,
) -> Guardrail:
	"""A guardrail that redacts (or refuses, or trips on) emails, phone numbers and card numbers.

	Args:
		on: The stage: the input (default), a tool call's input, a tool's result, the output.
		kinds: What to find (`PII_KINDS`).
		region: The country (ISO 3166 alpha-2) of phone numbers written without ``+``.
		action: ``rewrite`` redacts; ``refuse`` and ``trip`` act on any match instead.
		tools: At the tool stages, the tools it checks (rules of `openmolt_core.policy`).
		labels: At the tool stages, the labels of the tools it checks.
		name: Its name in results, events and the audit.
		message: At the output stage, also the words the model writes for people: the finish's
			``humanMessage``, a question, a call's reason for its approver (default: yes there;
			`Guardrail`).

	Raises:
		ConfigurationError: An unknown kind or action, or ``phone`` without `phonenumbers`.
	"""
	wrong = sorted(set(kinds) - set(_ALL_KINDS))
	if wrong:
		raise ConfigurationError(
			f"pii_redaction: unknown kind {', '.join(map(repr, wrong))}; use "
			f"{', '.join(_ALL_KINDS)}"
		)
	if action not in ("rewrite", "refuse", "trip"):
		raise ConfigurationError("pii_redaction: action must be 'rewrite', 'refuse' or 'trip'")
	if "phone" in kinds and _phones() is None:
		raise ConfigurationError(_no_phones())
	chosen = tuple(kinds)

	def check(c: GuardrailCheck) -> Verdict | None:
		redacted, counts = redact_pii(c.value, chosen, region=region)
		if not counts:
			return None
		what = ", ".join(f"{n} {kind}{'s' if n > 1 else ''}" for kind, n in sorted(counts.items()))
		if action == "rewrite":
			return rewrite(redacted, f"redacted {what}")
		if action == "refuse":
			return refuse(f"it holds personal data ({what}); leave it out")
		return trip(f"personal data ({what})")

	return Guardrail(
		check,
		on=on,
		name=name,
		tools=tuple(tools),
		labels=tuple(labels),
		message=on == "output" if message is None else message,
	)


def _no_phones() -> str:
	from openmolt_core._hints import install_command

	return (
		"pii_redaction: finding phone numbers needs the phonenumbers package: "
		f"{install_command('openmolt-core[pii]')}, or leave 'phone' out of kinds"
	)
