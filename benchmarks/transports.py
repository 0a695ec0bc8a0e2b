"""The httpx transports compared for figure 4 (the connection-pool trap).

- ``httpx``: httpx's own pool with the limits OpenMolt used first (200 connections, 50 kept alive).
- ``httpx-1000``: the same with 1,000-connection limits (the issue's "raise the limits" trap).
- ``sharded``: 8 httpx pools of 32 connections, each request sent to the least busy one, so the
  pool's scan over its connections stays short. Pure httpx, no new dependency.
- ``aiohttp``: the ``httpx-aiohttp`` transport (aiohttp's connector and C HTTP parser).
- ``openmolt``: the pool that ``openmolt_core.integrations._client.new_client()`` builds now (``PooledTransport``).
"""

from __future__ import annotations

from typing import Any


class ShardedTransport:
	"""Spread requests over several small httpx pools; each pool's per-request scan stays short."""

	def __init__(self, shards: int = 8, per_shard: int = 32) -> None:
		import httpx

		self._pools = [
			httpx.AsyncHTTPTransport(
				limits=httpx.Limits(max_connections=per_shard, max_keepalive_connections=per_shard)
			)
			for _ in range(shards)
		]
		self._busy = [0] * shards

	async def handle_async_request(self, request: Any) -> Any:
		busy = self._busy
		i = busy.index(min(busy))
		busy[i] += 1
		try:
			response = await self._pools[i].handle_async_request(request)
		except BaseException:
			busy[i] -= 1
			raise
		stream = response.stream
		original = stream.aclose

		async def aclose() -> None:
			busy[i] -= 1
			await original()

		stream.aclose = aclose
		return response

	async def aclose(self) -> None:
		for pool in self._pools:
			await pool.aclose()

	async def __aenter__(self) -> ShardedTransport:
		return self

	async def __aexit__(self, *exc: object) -> None:
		await self.aclose()


def build(name: str) -> Any:
	"""The transport called ``name``."""
	import httpx

	if name == "httpx":
		return httpx.AsyncHTTPTransport(
			limits=httpx.Limits(max_connections=200, max_keepalive_connections=50)
		)
	if name == "httpx-1000":
		return httpx.AsyncHTTPTransport(
			limits=httpx.Limits(max_connections=1000, max_keepalive_connections=1000)
		)
	if name == "sharded":
		return ShardedTransport()
	if name == "aiohttp":
		from httpx_aiohttp import AiohttpTransport

		return AiohttpTransport(
			limits=httpx.Limits(max_connections=200, max_keepalive_connections=200)
		)
	if name == "openmolt":
		from openmolt_core.integrations._client import PooledTransport

		return PooledTransport()
	raise SystemExit(f"unknown transport {name!r}")
