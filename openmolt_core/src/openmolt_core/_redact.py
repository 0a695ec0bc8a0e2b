"""Scrub secret values from text and from JSON-like values before anyone sees them."""

from __future__ import annotations

from typing import Any

__all__ = ["MASK", "Redactor"]

MASK = "[redacted]"


class Redactor:
	"""Replaces every known secret with ``[redacted]``.

	Args:
		secrets: The secret strings (API keys, tokens, client secrets).
	"""

	__slots__ = ("secrets",)

	def __init__(self, secrets: frozenset[str] = frozenset()) -> None:
		self.secrets = tuple(sorted(secrets, key=len, reverse=True))

	def __call__(self, text: str) -> str:
		"""Return the text with every secret masked."""
		for secret in self.secrets:
			if secret in text:
				text = text.replace(secret, MASK)
		return text

	def deep(self, value: Any) -> Any:
		"""Return a copy of a JSON-like value with secrets masked in every string."""
		if not self.secrets:
			return value
		if isinstance(value, str):
			return self(value)
		if isinstance(value, dict):
			return {k: self.deep(v) for k, v in value.items()}
		if isinstance(value, (list, tuple)):
			return [self.deep(v) for v in value]
		return value
