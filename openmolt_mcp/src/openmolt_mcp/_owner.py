"""A task that outlives the run which started it: the owner of one MCP server connection.

The SDK's transports are async context managers holding task groups and cancel scopes, which
anyio binds to the task that enters them: a connection opened inside ``agent.run`` could neither
stay open after the run nor be closed by ``OpenMolt.aclose`` from another task. So each connection
is opened, held and closed by one task of its own, started here as the event loop's own task
(``loop.create_task`` on asyncio, a system task on trio): no run owns it, and the `MCPToolSource`
that started it stops it (``aclose``). If a program ends without closing its OpenMolt instance,
the loop cancels the task on shutdown, which still closes the transport.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["spawn"]

_RUNNING: set[Any] = set()  # asyncio keeps only weak references to tasks


def spawn(function: Callable[[], Awaitable[None]]) -> None:
	"""Start ``function()`` as a task of the running event loop that no caller awaits.

	``function`` must handle its own exceptions (it is the owner of a connection).

	Raises:
		RuntimeError: The event loop is neither asyncio nor trio.
	"""
	import sniffio

	library = sniffio.current_async_library()
	if library == "asyncio":
		import asyncio

		async def run() -> None:
			await function()

		task = asyncio.get_running_loop().create_task(run())
		_RUNNING.add(task)
		task.add_done_callback(_RUNNING.discard)
	elif library == "trio":
		import trio

		trio.lowlevel.spawn_system_task(function)
	else:  # pragma: no cover - anyio supports only these two
		raise RuntimeError(f"MCP servers need asyncio or trio, not {library}")
