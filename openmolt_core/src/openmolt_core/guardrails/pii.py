"""The PII-redaction guardrail: email addresses, phone numbers and payment card numbers.

```python
from openmolt_core.guardrails import pii_redaction

guardrails = [
	pii_redaction(),  # the run's input, before the model reads it
	pii_redaction(on="tool_result", labels=["untrusted"]),  # what outside content brings in
]
```

Each match is replaced by ``[email]``, ``[phone]`` or ``[card]`` in every string of the value
(dict keys are left alone); redacting twice gives the same text.

- Phone numbers are found by `phonenumbers`, the Python port of Google's libphonenumber: it
  knows every country's numbering plan, so it finds numbers written in local and international
  forms and skips digit runs that are no valid number (``Leniency.VALID``). It is pure Python and
  well kept, but not on the core's dependency list: install ``openmolt-core[pii]``. Numbers
  without a ``+`` country code are read as numbers of ``region``.
- Card numbers are 13 to 19 digits (spaces or dashes allowed between them) with a card network's
  prefix and a valid Luhn check digit. The Luhn check is a few lines of arithmetic, so no library.
- Email addresses are matched by a pattern for the common form (``local@domain.tld``, letters of
  any script included), not every form RFC 5322 allows (quoted local parts, IP-literal domains).

This finds what is written in the usual ways; it is no guarantee that nothing personal remains
(names, addresses and numbers spelled out in words pass through).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal, get_args

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

PiiKind = Literal["email", "phone", "card"]
"""What the redaction finds."""

PII_KINDS: tuple[str, ...] = get_args(PiiKind)
"""Every kind, the default."""

# Letters and digits of any script (``[^\W_]``), so ``jöhn@exämple.de`` is found whole. The
# lookbehind starts a match only where a local part starts: without it a long run of letters
# is scanned once from each of its positions (quadratic time).
_EMAIL = re.compile(r"(?<![\w.%+-])[\w.%+-]+@(?:[^\W_](?:[\w-]*[^\W_])?\.)+[^\W\d_]{2,}")
# Digits in groups with one space or dash between them; a card is found among its groups.
_DIGIT_RUN = re.compile(r"\d+(?:[ -]\d+)*")
_DIGIT_GROUP = re.compile(r"\d+")
# Visa, Mastercard (51-55, 2221-2720), American Express, Diners, JCB, Discover, UnionPay.
_NETWORK = re.compile(r"4|5[1-5]|2[2-7]|3[0478]|35|6")


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
	return sorted(found, key=lambda f: f[1])


def redact_pii(
	value: Any, kinds: Iterable[str] = PII_KINDS, *, region: str | None = "US"
) -> tuple[Any, dict[str, int]]:
	"""A value with personal data replaced by ``[email]``, ``[phone]`` and ``[card]``.

	Args:
		value: A string, or JSON data (every string in it is redacted).
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

	def walk(node: Any) -> Any:
		if isinstance(node, str):
			return text(node)
		if isinstance(node, dict):
			new = {k: walk(v) for k, v in node.items()}
			return node if all(new[k] is node[k] for k in node) else new
		if isinstance(node, list):
			items = [walk(v) for v in node]
			return node if all(a is b for a, b in zip(items, node, strict=True)) else items
		return node

	return walk(value), counts


def pii_redaction(
	on: Stage = "input",
	*,
	kinds: Sequence[str] = PII_KINDS,
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
	wrong = sorted(set(kinds) - set(PII_KINDS))
	if wrong:
		raise ConfigurationError(
			f"pii_redaction: unknown kind(s) {wrong}; use {', '.join(PII_KINDS)}"
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
