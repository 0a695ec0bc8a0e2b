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

Under asyncio the worker threads are this module's own, not anyio's: ``anyio.to_thread.run_sync``
costs about 40 µs of CPU a call there (two extra event-loop turns, a cancel scope, a
``queue.Queue`` handover), `call` about 20 µs (a ``queue.SimpleQueue`` to an idle thread), and a
sync tool runs at every step. A function that returns within `QUICK` seconds hands its result
straight back to the waiting loop thread (a lock, no wake-up of the event loop through its
self-pipe, no extra turn of it); a longer one is awaited on the loop as any future is, its result
coming back through ``call_soon_threadsafe``. The loop thread blocks for at most `QUICK` per call
(less than one switch of the interpreter lock, 5 ms, which any thread may take from the loop). What anyio's
threads give, they give too: the function runs off the event loop's thread (threads are reused;
one idle for `IDLE` seconds ends), in a copy of the caller's context variables (sniffio's current
async library None in it), under anyio's default thread limiter (the same cap of 40 threads unless
the application changed it, shared with ``to_thread.run_sync``); cancelling the caller returns at
once and frees its token (a function not begun yet is not called), and the interpreter waits at
exit for a function still running. One
difference: ``anyio.from_thread`` in such a thread needs a token (``anyio.lowlevel.current_token()``
taken on the loop). Under trio, anyio's threads run them.

What is left of a quick call's cost is its floor: two threads that sleep and are woken (the loop
thread on the lock, the worker on its queue), 30 to 55 µs of CPU on a loaded 2-CPU VM for a call
every 0.5 ms, where an ``async def`` tool costs none. Waking the worker through an ``eventfd``
written without the interpreter lock (a worker scheduled at once takes that lock, and the loop
thread finds the result done) cut the context switches of a call from 5 to 3 but not its CPU
(126 µs against 128 µs a call and pause, medians of 9 alternating runs), so the queue stayed.
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
import types
import weakref
from collections.abc import Callable
from contextvars import copy_context
from typing import TYPE_CHECKING, Any

_library: ContextVar[str | None] | None
try:
	from sniffio import current_async_library_cvar as _library
except ImportError:  # anyio runs without sniffio
	_library = None

if TYPE_CHECKING:
	import asyncio
	from contextvars import ContextVar
	from queue import SimpleQueue

	import anyio
	from anyio import CapacityLimiter

__all__ = [
	"ABANDONED_THREAD",
	"IDLE",
	"QUICK",
	"Unbounded",
	"call",
	"cancelled",
	"is_async",
	"parameter_count",
	"takes",
	"until",
]

IDLE = 10.0
"""Seconds after which an idle worker thread ends."""

ABANDONED_THREAD = "OpenMolt worker (abandoned)"
"""The name of the thread that keeps the interpreter alive until an abandoned call returns."""

QUICK = 0.0002
"""Seconds the loop thread waits, blocked, for a sync function before it awaits it on the loop."""

_local = threading.local()


class Unbounded:
	"""The scope of work without a deadline (`until`): nothing to cancel, so no cancel scope."""

	__slots__ = ()

	cancelled_caught = False

	def __enter__(self) -> Unbounded:
		return self

	def __exit__(self, *exc: object) -> None:
		return None


_UNBOUNDED = Unbounded()


def until(deadline: float | None, now: Callable[[], float]) -> anyio.CancelScope | Unbounded:
	"""The scope that ends what it holds at ``deadline``, a time on the clock ``now`` reads.

	An anyio cancel scope (``cancelled_caught`` says whether the deadline ended it); without a
	deadline, a shared scope that costs nothing and never asks the clock (a journaled clock
	records every reading).

	Args:
		deadline: When the work must end, on ``now``'s clock; None: it may take any time.
		now: Reads the clock (called once, only with a deadline).
	"""
	if deadline is None:
		return _UNBOUNDED
	import anyio

	return anyio.move_on_after(max(deadline - now(), 0.0))


def cancelled() -> bool:
	"""Whether the loop stopped waiting for the sync call running in this thread.

	True once the run's time budget ran out or the run was cancelled while the call was running;
	always False outside a worker thread started by the loop (and in async code, which is
	cancelled the ordinary way).
	"""
	job: _Job | None = getattr(_local, "job", None)
	return job is not None and job.abandoned


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


def takes(callback: Callable[..., Any], name: str, *, kwargs: bool = True) -> bool:
	"""Whether ``callback`` can be given the keyword argument ``name``.

	It can when it has a parameter of that name (keyword or positional), or, with ``kwargs``,
	``**kwargs``; a callable whose signature cannot be read (some builtins) takes none.

	Args:
		callback: The application's callable.
		name: The keyword's name.
		kwargs: Whether ``**kwargs`` counts (False: only a parameter of its own name does).
	"""
	try:
		parameters = inspect.signature(callback).parameters.values()
	except (TypeError, ValueError):
		return False
	named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
	return any(
		(p.name == name and p.kind in named) or (kwargs and p.kind is inspect.Parameter.VAR_KEYWORD)
		for p in parameters
	)


_COUNTS: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], int]] = weakref.WeakKeyDictionary()
"""A method's function -> (what its signature is read from, its parameter count)."""


def parameter_count(function: Callable[..., Any]) -> int:
	"""How many parameters a callable takes (0 when its signature cannot be read: a builtin).

	For a method asked about again and again (a provider's, at every run): `inspect.signature`
	costs 10 to 15 µs, so the count of a bound method is kept per function, as long as what its
	signature is read from is the same (its code, and the ``__signature__`` and ``__wrapped__``
	that `inspect.signature` would follow).

	Args:
		function: The callable (a bound method's ``self`` is not counted).
	"""
	# A bound method: its function (a staticmethod object has one too, but takes one more).
	plain = function.__func__ if type(function) is types.MethodType else None
	key: tuple[Any, ...] | None = None
	if type(plain) is types.FunctionType:
		key = (
			plain.__code__,
			getattr(plain, "__signature__", None),
			getattr(plain, "__wrapped__", None),
		)
		known = _COUNTS.get(plain)
		if known is not None and known[0] == key:  # the same code (and signature) as before
			return known[1]
	try:
		count = len(inspect.signature(function).parameters)
	except (TypeError, ValueError):  # a builtin whose signature is not known
		count = 0
	if key is not None:
		_COUNTS[plain] = (key, count)
	return count


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
	import asyncio

	import anyio
	import anyio.to_thread

	job = _Job(function, args, kwargs)
	try:
		loop = asyncio.get_running_loop()
	except RuntimeError:  # not asyncio (trio): anyio's threads
		loop = None
	try:
		if loop is None:
			result = await anyio.to_thread.run_sync(job.run, abandon_on_cancel=True)
		else:
			result = await _in_thread(loop, job)
	except anyio.get_cancelled_exc_class():
		_abandon(job)
		raise
	if inspect.isawaitable(result):
		result = await result
	return result


class _Job:
	"""One sync call handed to a worker thread, and whether its caller stopped waiting."""

	__slots__ = (
		"abandoned",
		"args",
		"ended",
		"error",
		"finished",
		"function",
		"future",
		"kwargs",
		"quick",
		"result",
	)

	def __init__(self, function: Callable[..., Any], args: Any, kwargs: Any) -> None:
		self.function = function
		self.args = args
		self.kwargs = kwargs
		self.future: asyncio.Future[Any] | None = None  # where a slow call's result goes
		self.abandoned = False  # the caller stopped waiting (`cancelled`)
		self.finished = False  # the function returned (under _lock)
		self.ended: threading.Event | None = None  # set then, once abandoned (our threads)
		self.quick: Any = None  # released when it returns while the loop thread waits (QUICK)
		self.result: Any = None  # what it returned, or
		self.error: BaseException | None = None  # what it raised (our threads)

	def run(self) -> Any:
		"""Call the function in this thread, `cancelled` answering for it."""
		_local.job = self
		try:
			return self.function(*self.args, **self.kwargs)
		finally:
			_local.job = None


_Item = tuple[Any, "_Job", "asyncio.AbstractEventLoop"]
"""A job on the queue: the caller's context copy, the job, its caller's loop."""

_lock = threading.Lock()
_jobs: SimpleQueue[_Item] | None = None
_idle = 0  # worker threads waiting for a job and not yet promised one
_limiter: tuple[weakref.ref[asyncio.AbstractEventLoop], CapacityLimiter] | None = None
"""The last event loop's default thread limiter (anyio's, one per loop)."""


def _forked() -> None:
	# A forked child has none of its parent's threads: it starts its own.
	global _lock, _jobs, _idle, _limiter
	_lock, _jobs, _idle, _limiter = threading.Lock(), None, 0, None


if hasattr(os, "register_at_fork"):  # not on Windows
	os.register_at_fork(after_in_child=_forked)


async def _in_thread(loop: asyncio.AbstractEventLoop, job: _Job) -> Any:
	# ``job.run()`` in one of our worker threads (see the module's docstring).
	global _idle, _jobs, _limiter
	import anyio.to_thread

	known = _limiter
	if known is not None and known[0]() is loop:
		limiter = known[1]
	else:  # a lookup of anyio's that costs more than the rest of the handover
		limiter = anyio.to_thread.current_default_thread_limiter()
		_limiter = (weakref.ref(loop), limiter)
	try:
		limiter.acquire_on_behalf_of_nowait(job)
	except anyio.WouldBlock:
		await limiter.acquire_on_behalf_of(job)
	try:
		context = copy_context()
		if _library is not None:
			context.run(_library.set, None)
		job.quick = quick = threading.Lock()
		quick.acquire()
		with _lock:
			start = not _idle
			if not start:
				_idle -= 1  # an idle worker's: the job is its
			if _jobs is None:
				from queue import SimpleQueue

				_jobs = SimpleQueue()
			jobs = _jobs
		if start:  # before the job is queued: a thread that cannot start leaves none behind
			threading.Thread(
				target=_work, args=(jobs,), name="OpenMolt worker", daemon=True
			).start()
		jobs.put((context, job, loop))
		future = None
		try:
			waited = quick.acquire(timeout=QUICK)
		except BaseException:  # a signal's exception (Ctrl-C) in the wait: nobody waits now
			job.abandoned = True
			raise
		if not waited:
			with _lock:  # still running: its result comes back through the loop
				if not job.finished:
					job.future = future = loop.create_future()
		if future is None:
			return _outcome(job.result, job.error)
		return await future
	finally:
		limiter.release_on_behalf_of(job)


def _abandon(job: _Job) -> None:
	# The caller stopped waiting. In one of our (daemon) threads, a thread that waits for the
	# function keeps the interpreter from exiting before it returns, as anyio's threads do.
	job.abandoned = True
	if job.future is None:
		return
	with _lock:
		if job.finished:
			return
		ended = job.ended = threading.Event()
	threading.Thread(target=ended.wait, name=ABANDONED_THREAD).start()


def _work(jobs: SimpleQueue[_Item]) -> None:
	# One worker thread: jobs until it has been idle for IDLE seconds.
	global _idle
	from queue import Empty

	while True:
		try:
			context, job, loop = jobs.get(timeout=IDLE)
		except Empty:
			with _lock:
				if _idle:  # no job was promised to an idle worker meanwhile: this one ends
					_idle -= 1
					return
			continue
		result: Any = None
		error: BaseException | None = None
		try:
			if not job.abandoned:  # a caller that stopped waiting before it began: not run
				result = context.run(job.run)
		except BaseException as exc:
			error = exc
		with _lock:
			job.result, job.error = result, error
			job.finished = True
			_idle += 1
			future = job.future
		if job.ended is not None:
			job.ended.set()
		if future is None:  # the loop thread waits for it (QUICK), or finds it finished
			job.quick.release()
		else:
			try:
				loop.call_soon_threadsafe(_report, future, result, error)
			except RuntimeError:  # the loop is closed: nobody waits for this result
				pass
		del context, job, future, loop, result, error


def _report(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
	# On the loop: the caller gets the result, unless it stopped waiting.
	if future.cancelled():
		return
	if error is None:
		future.set_result(result)
	else:
		future.set_exception(_raised(error))


def _outcome(result: Any, error: BaseException | None) -> Any:
	# On the loop thread, for a call that returned while it waited: what the future would give.
	if error is None:
		return result
	raise _raised(error)


def _raised(error: BaseException) -> BaseException:
	if isinstance(error, StopIteration):  # a future cannot carry it (as anyio says)
		wrapped = RuntimeError("the function raised StopIteration")
		wrapped.__cause__ = error
		return wrapped
	return error
