"""One retry policy for every HTTP call OpenMolt makes: integration tools and model providers.

Both the HTTP tool engine (`openmolt_core.integrations.http`) and the built-in providers
(``openmolt_providers``) retry with tenacity under a `RetryPolicy`: the same attempts, the same
reading of the service's wait hints (`retry_after`), the same exponential backoff and the same
caps. What is retried differs, because what is safe differs: a tool retries 429 always and 5xx
only for a request that is safe to repeat; a model call retries 408, 409, 429 and 5xx.

Set it once per instance:

```python
from openmolt_core import OpenMolt, RetryPolicy

om = OpenMolt(retry=RetryPolicy(attempts=6, max_wait=20))
om = OpenMolt(retry={"attempts": 2})  # a dict works, in camelCase or snake_case
```

tenacity is used rather than a loop of our own: it is the well-kept retry library the providers
already used, and its stop and wait strategies compose (attempts, total time, a hint too long).
"""

from __future__ import annotations

import datetime
import email.utils
import math
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
	import httpx
	from tenacity import AsyncRetrying, RetryCallState

__all__ = ["DEFAULT_RETRY", "RetryPolicy", "retry_after", "retry_policy"]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
	"""How calls that may succeed later are retried.

	Args:
		attempts: Tries in all, the first included (1: never retry).
		max_total: Seconds after which no new attempt starts.
		max_wait: The longest single wait; a service asking for a longer one is not retried
			(the error says so, and the model or the user can decide).
		backoff: The first exponential backoff wait, when the service gives no hint; it
			doubles each time.
		max_backoff: The longest backoff wait.
		jitter: Up to this many seconds added at random to each backoff wait, so that
			concurrent callers do not retry in step.
		sleep: The sleep function (tests pass one that does not sleep).
	"""

	attempts: int = 4
	max_total: float = 60.0
	max_wait: float = 30.0
	backoff: float = 0.5
	max_backoff: float = 8.0
	jitter: float = 0.0
	sleep: Callable[[float], Awaitable[Any]] = field(default=anyio.sleep, compare=False)

	def __post_init__(self) -> None:
		from openmolt_core.errors import ConfigurationError

		if self.attempts < 1:
			raise ConfigurationError("RetryPolicy.attempts must be at least 1 (1: no retries)")
		for name in ("max_total", "max_wait", "backoff", "max_backoff", "jitter"):
			if getattr(self, name) < 0:
				raise ConfigurationError(f"RetryPolicy.{name} must not be negative")

	def delay(self, attempt: int, hint: float | None = None) -> float:
		"""Seconds to wait after failed attempt number ``attempt`` (1, 2, ...).

		Args:
			attempt: The attempt that just failed.
			hint: The wait the service asked for (`retry_after`), if any; it wins, capped at
				``max_wait``.
		"""
		if hint is not None and math.isfinite(hint):  # NaN would be slept, and refused
			return min(max(hint, 0.0), self.max_wait)
		wait = min(self.backoff * 2.0 ** (attempt - 1), self.max_backoff, self.max_wait)
		return wait + (random.uniform(0, self.jitter) if self.jitter else 0.0)

	def retrying(
		self,
		retry: Callable[[BaseException], bool],
		hint: Callable[[BaseException], float | None],
		*,
		attempts: int | None = None,
	) -> AsyncRetrying:
		"""A tenacity ``AsyncRetrying`` that follows this policy.

		Args:
			retry: Whether an exception is worth another attempt.
			hint: The wait an exception's reply asks for (None: back off).
			attempts: Tries in all when not ``self.attempts`` (a provider's ``max_retries``).
		"""
		from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt
		from tenacity import stop_after_delay as stop_after
		from tenacity.stop import stop_base

		policy = self

		class _TooLong(stop_base):
			"""Stop when the service asks for a wait longer than the policy allows."""

			def __call__(self, state: RetryCallState) -> bool:
				exc = state.outcome.exception() if state.outcome else None
				asked = hint(exc) if exc is not None else None
				return asked is not None and asked > policy.max_wait

		def wait(state: RetryCallState) -> float:
			exc = state.outcome.exception() if state.outcome else None
			return policy.delay(state.attempt_number, hint(exc) if exc is not None else None)

		return AsyncRetrying(
			sleep=self.sleep,
			stop=stop_after_attempt(attempts or self.attempts)
			| stop_after(self.max_total)
			| _TooLong(),
			wait=wait,
			retry=retry_if_exception(retry),
			reraise=True,
		)


DEFAULT_RETRY = RetryPolicy()
"""The policy of an `OpenMolt` instance that sets none."""


def retry_policy(value: RetryPolicy | Mapping[str, Any] | None) -> RetryPolicy:
	"""A `RetryPolicy` from itself, a dict of its fields (camelCase or snake_case), or None.

	Args:
		value: The ``retry`` option.

	Raises:
		ConfigurationError: An unknown key or a wrong value; the message names it.
	"""
	from openmolt_core.errors import ConfigurationError

	if value is None:
		return DEFAULT_RETRY
	if isinstance(value, RetryPolicy):
		return value
	if not isinstance(value, Mapping):
		raise ConfigurationError("retry must be a RetryPolicy or a dict of its fields")
	from pydantic.alias_generators import to_snake

	names = set(RetryPolicy.__dataclass_fields__)
	given = {to_snake(str(k)): v for k, v in value.items()}
	unknown = sorted(str(k) for k in value if to_snake(str(k)) not in names)
	if unknown:
		raise ConfigurationError(
			f"retry: unknown key(s) {unknown}; allowed: {', '.join(sorted(names))}"
		)
	try:
		return RetryPolicy(**given)
	except TypeError as exc:
		raise ConfigurationError(f"retry: {exc}") from None


def retry_after(headers: httpx.Headers | Mapping[str, str]) -> float | None:
	"""Seconds a reply asks the caller to wait before trying again, or None.

	Reads ``retry-after-ms`` (OpenAI), ``Retry-After`` in seconds or as an HTTP date (RFC 9110:
	any of its three formats, always UTC), then the rate-limit reset headers
	``X-RateLimit-Reset``, ``X-Rate-Limit-Reset`` and ``RateLimit-Reset``, in seconds from now
	or as an epoch timestamp (GitHub, X).

	Args:
		headers: The reply's headers (case-insensitive when an ``httpx.Headers``).
	"""
	value = headers.get("retry-after-ms")
	if value:
		ms = _number(value)
		if ms is not None:
			return max(ms / 1000.0, 0.0)
	value = headers.get("retry-after")
	if value:
		seconds = _number(value)
		if seconds is not None:
			return max(seconds, 0.0)
		try:
			when = email.utils.parsedate_to_datetime(value)
		except (TypeError, ValueError):
			return None
		if when.tzinfo is None:  # asctime or "-0000": an HTTP date is UTC (RFC 9110 5.6.7)
			when = when.replace(tzinfo=datetime.UTC)
		return max(when.timestamp() - time.time(), 0.0)
	for name in ("x-ratelimit-reset", "x-rate-limit-reset", "ratelimit-reset"):
		value = headers.get(name)
		if value:
			reset = _number(value)
			if reset is None:
				continue
			if reset > 1e9:  # an epoch timestamp; else seconds from now
				reset -= time.time()
			return max(reset, 0.0)
	return None


def _number(text: str) -> float | None:
	"""A header's number of seconds, or None when it is no finite number.

	``float`` reads ``nan`` and ``inf`` too, which are no wait: anyio refuses to sleep NaN
	seconds, and an infinite wait is no hint either.
	"""
	try:
		value = float(text)
	except ValueError:
		return None
	return value if math.isfinite(value) else None
