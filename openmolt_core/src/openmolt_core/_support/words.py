"""Counts in messages: ``1 attempt``, ``2 attempts``, never ``1 attempts``."""

from __future__ import annotations

__all__ = ["quantity"]


def quantity(n: int, noun: str, plural: str | None = None) -> str:
	"""``n`` and the noun, singular for one and plural otherwise (``1 step``, ``0 steps``).

	Args:
		n: The count.
		noun: The singular noun.
		plural: The plural when it is not the noun plus ``s`` (``1 entry``, ``2 entries``).
	"""
	return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
