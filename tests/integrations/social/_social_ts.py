"""A small reader of TypeScript declaration files (``.d.ts``), for the npm references.

It reads only what generated type packages write: ``name?: type;`` members of interfaces and
object types, brackets balanced, comments dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Member", "close", "members", "split", "uncomment"]


@dataclass(frozen=True)
class Member:
	"""A parameter or field: its TypeScript type text and whether it may be left out."""

	type: str
	optional: bool


def uncomment(text: str) -> str:
	return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))


def close(text: str, start: int) -> int:
	"""The index just past the bracket that closes the one at ``start``."""
	pairs = {"{": "}", "(": ")", "[": "]", "<": ">"}
	stack = []
	for index in range(start, len(text)):
		char = text[index]
		if char in pairs:
			stack.append(pairs[char])
		elif stack and char == stack[-1]:
			stack.pop()
			if not stack:
				return index + 1
		elif char == ">" and text[index - 1] == "=":  # an arrow, not a bracket
			continue
	raise AssertionError(f"unbalanced bracket at {start}")


def split(body: str) -> list[str]:
	"""Members of a type body, split on the ``;`` that are not inside brackets."""
	parts, depth, current = [], 0, []
	for char in body:
		depth += char in "{([<"
		depth -= char in "})]>"
		if char == ";" and depth == 0:
			parts.append("".join(current).strip())
			current = []
		else:
			current.append(char)
	if "".join(current).strip():
		parts.append("".join(current).strip())
	return parts


def members(body: str) -> dict[str, Member]:
	out = {}
	for part in split(body):
		match = re.match(r"(?:readonly\s+)?(\w+)(\?)?\s*:\s*(.*)$", part, re.S)
		if match:
			out[match.group(1)] = Member(match.group(3).strip(), bool(match.group(2)))
	return out
