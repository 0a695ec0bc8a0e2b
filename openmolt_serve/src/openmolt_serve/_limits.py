"""The per-agent rate limit of webhooks: a token bucket, refilled continuously."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["RateLimit"]


class RateLimit:
	"""Allows ``per_minute`` requests a minute on average, in bursts of up to as many.

	Args:
		per_minute: Requests a minute.
		clock: Seconds, monotonic (tests pass a fake one).
	"""

	def __init__(self, per_minute: int, *, clock: Callable[[], float] | None = None) -> None:
		self.per_minute = per_minute
		self._clock = clock or time.monotonic
		self._tokens = float(per_minute)
		self._at: float = self._clock()

	def take(self) -> float:
		"""Take one request: 0 if allowed, else the seconds until the next one is."""
		now = self._clock()
		rate = self.per_minute / 60.0
		self._tokens = min(float(self.per_minute), self._tokens + (now - self._at) * rate)
		self._at = now
		if self._tokens >= 1:
			self._tokens -= 1
			return 0.0
		return (1 - self._tokens) / rate
