"""Shopify's rate limit as the Admin GraphQL API reports it: inside a 200 reply.

A request whose cost exceeds what is left in the app's bucket is not run: the reply is HTTP 200
with an error whose ``extensions.code`` is ``THROTTLED`` ("The client has exceeded the rate
limit. Similar to 429 Too Many Requests", the Admin API's status and error codes), no ``data``,
and ``extensions.cost`` with the query's ``requestedQueryCost``, ``actualQueryCost`` null and
the bucket's ``throttleStatus`` (``currentlyAvailable`` points, ``restoreRate`` points a
second; https://shopify.dev/docs/api/usage/limits).
"""

from __future__ import annotations

from typing import Any

__all__ = ["throttled"]


def _number(value: Any) -> float | None:
	if isinstance(value, bool) or not isinstance(value, int | float):
		return None
	return float(value)


def throttled(value: Any) -> float | None:
	"""A THROTTLED reply's wait: the seconds the bucket takes to hold the query's cost again.

	A `openmolt_core.integrations.extensions.ThrottleCheck`: the engine sends the request again
	after that wait (the retry policy's backoff when the cost figures are missing), a mutation
	too, since a throttled request ran no part of itself.

	Args:
		value: The decoded reply.

	Returns:
		Seconds to wait (0 when the reply does not say), or None when the reply is not throttled.
	"""
	if not isinstance(value, dict) or value.get("data") is not None:
		return None
	errors = value.get("errors")
	if not isinstance(errors, list) or not any(
		isinstance(error, dict)
		and isinstance(error.get("extensions"), dict)
		and error["extensions"].get("code") == "THROTTLED"
		for error in errors
	):
		return None
	extensions = value.get("extensions")
	cost = extensions.get("cost") if isinstance(extensions, dict) else None
	status = cost.get("throttleStatus") if isinstance(cost, dict) else None
	if not isinstance(cost, dict) or not isinstance(status, dict):
		return 0.0
	requested = _number(cost.get("requestedQueryCost"))
	available = _number(status.get("currentlyAvailable"))
	rate = _number(status.get("restoreRate"))
	if requested is None or available is None or not rate or rate <= 0:
		return 0.0
	return max(requested - available, 0.0) / rate
