"""Scrub secret values from text and from JSON-like values before anyone sees them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
	from openmolt_core.tools import ToolContext

__all__ = ["MASK", "Redactor", "redactor_for"]

MASK = "[redacted]"


class Redactor:
	"""Replaces every known secret with ``[redacted]``.

	Args:
		secrets: The secret strings known up front (API keys, client secrets).
		sources: Callables returning secrets learned later (OAuth2 tokens obtained by a refresh);
			asked at every use, so a new token is masked as soon as it exists.
	"""

	__slots__ = ("_sources", "_static")

	def __init__(
		self,
		secrets: frozenset[str] = frozenset(),
		sources: Sequence[Callable[[], set[str]]] = (),
	) -> None:
		self._static = frozenset(secrets)
		self._sources = tuple(sources)

	@property
	def secrets(self) -> tuple[str, ...]:
		"""Every secret known now, longest first (so a secret containing another is masked whole)."""
		current = set(self._static)
		for source in self._sources:
			current |= source()
		return tuple(sorted(current, key=len, reverse=True))

	def __bool__(self) -> bool:
		return bool(self._static or self._sources)

	def __call__(self, text: str) -> str:
		"""Return the text with every secret masked."""
		if not self:
			return text
		for secret in self.secrets:
			if secret in text:
				text = text.replace(secret, MASK)
		return text

	def deep(self, value: Any) -> Any:
		"""Return a copy of a JSON-like value with secrets masked in every string."""
		if not self:
			return value
		return _deep(value, self.secrets)


def _deep(value: Any, secrets: tuple[str, ...]) -> Any:
	if isinstance(value, str):
		for secret in secrets:
			if secret in value:
				value = value.replace(secret, MASK)
		return value
	if isinstance(value, dict):
		return {k: _deep(v, secrets) for k, v in value.items()}
	if isinstance(value, (list, tuple)):
		return [_deep(v, secrets) for v in value]
	return value


def redactor_for(contexts: Iterable[ToolContext]) -> Redactor:
	"""The redactor for tool contexts: their config secrets, and what their auths learn later.

	Args:
		contexts: The contexts whose secrets must never show (one tool's, or all of an agent's).
	"""
	unique = {id(c): c for c in contexts}.values()
	sources = []
	for context in unique:
		learned = getattr(context.auth, "secrets", None)  # OAuth2 tokens obtained by a refresh
		if callable(learned):
			sources.append(learned)
	return Redactor(frozenset().union(*(c.redact for c in unique)), sources)
