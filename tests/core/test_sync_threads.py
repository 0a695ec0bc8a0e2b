"""The worker threads of sync callbacks: what anyio's give, under asyncio and trio alike."""

import contextvars
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import anyio
import anyio.to_thread
import pytest
import sniffio

from openmolt_core._support.sync import call, cancelled

pytestmark = pytest.mark.anyio

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("WHO", default="nobody")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


async def test_a_sync_function_runs_off_the_loop_in_a_copy_of_the_callers_context() -> None:
	WHO.set("caller")

	def look(a: int, *, b: int) -> tuple[Any, ...]:
		try:
			library: str | None = sniffio.current_async_library()
		except sniffio.AsyncLibraryNotFoundError:
			library = None
		WHO.set("thread")  # in the copy: the caller's stays
		return threading.current_thread() is threading.main_thread(), library, a + b

	assert await call(look, 1, b=2) == (False, None, 3)
	assert WHO.get() == "caller"


async def test_errors_reach_the_caller() -> None:
	def fails() -> None:
		raise ValueError("no")

	def stops() -> None:
		raise StopIteration

	with pytest.raises(ValueError, match="no"):
		await call(fails)
	with pytest.raises(RuntimeError, match="StopIteration"):
		await call(stops)


async def test_the_default_thread_limiter_caps_the_threads_at_once() -> None:
	limiter = anyio.to_thread.current_default_thread_limiter()
	limiter.total_tokens = 2
	lock = threading.Lock()
	running = [0, 0]  # now, most

	def busy() -> None:
		with lock:
			running[0] += 1
			running[1] = max(running)
		time.sleep(0.05)
		with lock:
			running[0] -= 1

	try:
		async with anyio.create_task_group() as tg:
			for _ in range(6):
				tg.start_soon(call, busy)
	finally:
		limiter.total_tokens = 40
	assert running == [0, 2]
	assert limiter.borrowed_tokens == 0


async def test_a_cancelled_caller_returns_at_once_and_the_thread_is_told(
	anyio_backend: str,
) -> None:
	seen = threading.Event()
	done = threading.Event()

	def slow() -> None:
		for _ in range(300):
			if cancelled():
				seen.set()
				break
			time.sleep(0.01)
		done.set()

	began = time.perf_counter()
	with anyio.move_on_after(0.1):
		await call(slow)
	assert time.perf_counter() - began < 1.5
	if anyio_backend == "asyncio":  # its token is free at once (trio's waits for the thread)
		assert anyio.to_thread.current_default_thread_limiter().borrowed_tokens == 0
	assert await anyio.to_thread.run_sync(done.wait, 5.0)
	assert seen.is_set()
	assert not cancelled()  # on the loop: no worker's flag


def test_the_interpreter_waits_at_exit_for_an_abandoned_function() -> None:
	"""As for anyio's threads: the function goes on until it returns, even at exit."""
	code = textwrap.dedent(
		"""
		import time, anyio
		from openmolt_core._support.sync import call

		def slow():
			time.sleep(0.5)
			print("finished", flush=True)

		async def main():
			with anyio.move_on_after(0.05):
				await call(slow)
			print("gave up", flush=True)

		anyio.run(main)
		"""
	)
	out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
	assert out.stdout.split() == ["gave", "up", "finished"], out.stderr


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="fork: POSIX only")
def test_a_forked_child_starts_its_own_worker_threads() -> None:
	code = textwrap.dedent(
		"""
		import os, anyio
		from openmolt_core._support.sync import call

		async def main():
			return await call(lambda: os.getpid())

		parent = anyio.run(main)  # leaves an idle worker thread behind
		pid = os.fork()
		if pid == 0:
			os._exit(0 if anyio.run(main) == os.getpid() else 1)
		_, status = os.waitpid(pid, 0)
		print("child ok" if os.waitstatus_to_exitcode(status) == 0 else "child failed")
		"""
	)
	out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
	assert out.stdout.strip() == "child ok", out.stderr


def test_a_function_whose_caller_gave_up_before_it_began_does_not_run() -> None:
	"""As anyio's threads: a job cancelled while it waits for its worker is never called."""
	code = textwrap.dedent(
		"""
		import threading, anyio
		from openmolt_core._support import sync

		gate = threading.Event()
		real = sync._work

		def late(jobs):  # a worker thread that takes its time to start
			gate.wait()
			real(jobs)

		sync._work = late
		ran = []

		async def main():
			with anyio.move_on_after(0.05):
				await sync.call(ran.append, "ran")
			gate.set()
			await anyio.sleep(0.3)

		anyio.run(main)
		print(ran or "not run", flush=True)
		"""
	)
	out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
	assert out.stdout.split() == ["not", "run"], out.stdout + out.stderr


def test_a_worker_thread_that_cannot_start_leaves_no_job_behind() -> None:
	"""The caller gets the error, and its function is not called later by another worker."""
	code = textwrap.dedent(
		"""
		import threading, anyio
		from openmolt_core._support import sync

		class Refused(threading.Thread):
			def start(self):
				raise RuntimeError("can't start new thread")

		ran = []

		async def main():
			sync.threading.Thread = Refused
			try:
				await sync.call(ran.append, "first")
			except RuntimeError as exc:
				print("refused", flush=True)
			sync.threading.Thread = Refused.__mro__[1]
			await sync.call(ran.append, "second")
			await anyio.sleep(0.2)

		anyio.run(main)
		print(*ran, flush=True)
		"""
	)
	out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
	assert out.stdout.split() == ["refused", "second"], out.stdout + out.stderr


@pytest.mark.parametrize("quick", [5.0, 0.0], ids=["returned-while-waited", "awaited-on-loop"])
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_quick_function_hands_its_result_to_the_waiting_loop_thread_a_slow_one_to_the_loop(
	monkeypatch: pytest.MonkeyPatch, quick: float
) -> None:
	import asyncio

	from openmolt_core._support import sync

	monkeypatch.setattr(sync, "QUICK", quick)
	loop = asyncio.get_running_loop()
	handed: list[Any] = []
	original = loop.call_soon_threadsafe

	def counted(callback: Any, *args: Any, **kwargs: Any) -> Any:
		handed.append(callback)
		return original(callback, *args, **kwargs)

	monkeypatch.setattr(loop, "call_soon_threadsafe", counted)
	# Awaited on the loop: a function ends only once the loop thread gave up waiting (it made
	# the future), else a worker done before the loop thread looked (a loaded machine) handed
	# its result straight back and the count below was one short.
	given_up = threading.Event()
	if quick:
		given_up.set()
	else:
		make = loop.create_future

		def made() -> Any:
			given_up.set()
			return make()

		monkeypatch.setattr(loop, "create_future", made)

	def after_the_wait() -> None:
		assert given_up.wait(5)
		if not quick:
			given_up.clear()

	def add(a: int, b: int) -> int:
		after_the_wait()
		WHO.set("thread")  # its own copy of the context, in either path
		return a + b

	def fails() -> None:
		after_the_wait()
		raise ValueError("no")

	def stops() -> None:
		after_the_wait()
		raise StopIteration

	assert await call(add, 2, 3) == 5
	with pytest.raises(ValueError, match="no"):
		await call(fails)
	with pytest.raises(RuntimeError, match="StopIteration"):
		await call(stops)
	assert WHO.get() == "nobody"
	reports = [c for c in handed if getattr(c, "__name__", "") == "_report"]
	# waited for: no wake-up of the loop at all; awaited: each result came back through the loop
	assert len(reports) == (0 if quick else 3)
	assert anyio.to_thread.current_default_thread_limiter().borrowed_tokens == 0


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_slow_function_hands_the_loop_thread_back_while_it_runs() -> None:
	# No clock: the function waits past QUICK for a task of the loop to run. A loop thread the
	# function still held would never run that task, and the wait would time out (False).
	from openmolt_core._support import sync

	began = threading.Event()
	loop_ran = threading.Event()

	def slow() -> bool:
		began.set()
		time.sleep(sync.QUICK * 5)  # past the quick wait: the loop thread is handed back
		return loop_ran.wait(timeout=20)

	async def other_task() -> None:
		# began is set in the worker thread: a threading.Event, polled (no anyio.Event there)
		while not began.is_set():  # noqa: ASYNC110
			await anyio.sleep(0.001)
		loop_ran.set()

	async with anyio.create_task_group() as tg:
		tg.start_soon(other_task)
		assert await call(slow) is True
