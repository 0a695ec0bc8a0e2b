"""Call the application's code, sync or async, without letting a sync function stall the loop.

Every sync callback the loop awaits (a function tool, a human-input handler, an approval handler,
a guardrail function, a memory ``on_update``, an ``on_token_refresh``) runs in a worker thread
through `call`. When a budget runs out (the run's ``timeout``, a per-call deadline, a cancelled
run), the loop stops waiting for it at once and the call is recorded as interrupted. Python cannot
kill a thread: the function goes on in the background until it returns, and its result is thrown
away. A long function can stop early by checking `cancelled`::

	from openmolt_core.tools import cancelled

	def crawl(urls: list[str]) -> int:
		done = 0
		for url in urls:
			if cancelled():  # the run stopped waiting for this call
				break
			fetch(url)
			done += 1
		return done
"""

from __future__ import annotations

import functools
import inspect
import threading
import types
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["call", "cancelled", "is_async"]

_local = threading.local()


def cancelled() -> bool:
	"""Whether the loop stopped waiting for the sync call running in this thread.

	True once the run's time budget ran out or the run was cancelled while the call was running;
	always False outside a worker thread started by the loop (and in async code, which is
	cancelled the ordinary way).
	"""
	event: threading.Event | None = getattr(_local, "event", None)
	return event is not None and event.is_set()


_ASYNC: weakref.WeakKeyDictionary[Any, tuple[Any, bool]] = weakref.WeakKeyDictionary()
"""A plain function -> (its code, whether it is async): `is_async` answers each function once."""


def is_async(function: Any) -> bool:
	"""Whether calling ``function`` returns a coroutine.

	True for an ``async def``, a partial of one, and an object whose ``__call__`` is async. The
	answer for a plain function, or a method of one, is kept per function (a sync tool's
	``execute`` is asked at every call) as long as its code is the same.
	"""
	kind = type(function)
	plain = function.__func__ if kind is types.MethodType else function
	if type(plain) is not types.FunctionType:
		return _is_async(function)
	known = _ASYNC.get(plain)
	if known is not None and known[0] is plain.__code__:
		return known[1]
	found = _is_async(function)
	_ASYNC[plain] = (plain.__code__, found)
	return found


def _is_async(function: Any) -> bool:
	if inspect.iscoroutinefunction(function):
		return True
	while isinstance(function, functools.partial):
		function = function.func
		if inspect.iscoroutinefunction(function):
			return True
	method = getattr(type(function), "__call__", None)  # noqa: B004 - the class's, not callable()
	return method is not None and inspect.iscoroutinefunction(method)


async def call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
	"""Call ``function`` and return its result: awaited when async, in a worker thread when sync.

	A sync function that returns an awaitable has it awaited on the loop. Cancelling the caller
	(a budget ran out) returns at once: the thread is abandoned and `cancelled` turns True in it.

	Args:
		function: The application's callable.
		*args: Its positional arguments.
		**kwargs: Its keyword arguments.
	"""
	if is_async(function):
		return await function(*args, **kwargs)
	import anyio
	import anyio.to_thread

	flag = threading.Event()

	def run() -> Any:
		_local.event = flag
		try:
			return function(*args, **kwargs)
		finally:
			_local.event = None

	try:
		result = await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
	except anyio.get_cancelled_exc_class():
		flag.set()
		raise
	if inspect.isawaitable(result):
		result = await result
	return result
