"""How a scan's cost grows with its input, for the tests that guard against quadratic scans.

Such a test measures the CPU time of this thread (`time.thread_time`) at two sizes and requires
the larger, `FACTOR` times the size, to cost at most `GROWTH` times the smaller: a linear scan
grows about `FACTOR` times, a quadratic one `FACTOR` squared. A wall-clock limit cannot tell them
apart on a loaded machine (a CI run beside other work failed 1 MB scans that took seconds of CPU),
and the thread's CPU time does not count the time the machine gave to other processes. Speed
itself is the benchmarks' business, never a test's.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Awaitable, Callable
from typing import Any

FACTOR = 4
"""How much larger the second input is than the first."""

GROWTH = 10.0
"""The most the cost may grow from the smaller input to the larger (linear: 4; quadratic: 16)."""

FLOOR = 0.02
"""The smaller input's cost counts as at least this many seconds: below it, a page fault or a
collection would weigh as much as the scan."""


def cpu(call: Callable[[], Any]) -> tuple[float, Any]:
	"""The CPU seconds this thread spent in ``call()``, and what it returned."""
	gc.collect()
	started = time.thread_time()
	value = call()
	return time.thread_time() - started, value


async def cpu_async(call: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
	"""The CPU seconds this thread spent awaiting ``call()`` (one event loop, one thread)."""
	gc.collect()
	started = time.thread_time()
	value = await call()
	return time.thread_time() - started, value


def assert_linear(small: float, large: float, what: str = "the scan") -> None:
	"""Fail when ``large`` (the cost at `FACTOR` times the size) grew more than `GROWTH` times.

	Args:
		small: The CPU seconds at the smaller size.
		large: The CPU seconds at `FACTOR` times that size.
		what: What was measured, for the message.
	"""
	bound = max(small, FLOOR) * GROWTH
	assert large <= bound, (
		f"{what} took {large:.3f} s of CPU at {FACTOR}x the input, against {small:.3f} s: it "
		f"grows faster than linearly (at most {bound:.3f} s)"
	)


def assert_scales_linearly(
	build: Callable[[int], Any], scan: Callable[[Any], Any], size: int
) -> Any:
	"""Scan ``build(size // FACTOR)`` and ``build(size)``; fail unless the cost grows linearly.

	Args:
		build: Makes the input of a given size (units of the test's own choosing).
		scan: The scan under test.
		size: The larger size.

	Returns:
		What the scan returned for the larger input, for the test's own assertions.
	"""
	small_input, large_input = build(size // FACTOR), build(size)
	small, _ = cpu(lambda: scan(small_input))
	large, value = cpu(lambda: scan(large_input))
	assert_linear(small, large)
	return value
