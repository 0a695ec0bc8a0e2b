"""The one place that builds OpenMolt's shared ``httpx.AsyncClient``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
	import httpx

__all__ = ["DEFAULT_TIMEOUT", "new_client"]

DEFAULT_TIMEOUT = 60.0
"""Seconds for reading a reply; connecting gets 10."""


def new_client() -> httpx.AsyncClient:
	"""Create the shared client: timeouts set, redirects off (tools decide), no env proxies surprise.

	Created lazily, once per OpenMolt instance: loading the CA bundle costs tens of milliseconds.
	"""
	import httpx

	return httpx.AsyncClient(
		timeout=httpx.Timeout(DEFAULT_TIMEOUT, connect=10.0),
		limits=httpx.Limits(max_connections=200, max_keepalive_connections=50),
		follow_redirects=False,
		headers={"User-Agent": "openmolt"},
	)
