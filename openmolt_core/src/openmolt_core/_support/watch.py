"""Run one call while checks watch it: the first check that answers cancels the call.

A library with no agent concept (the loop runs its first model call so, while the input checks
that a capability runs alongside it decide: `openmolt_core.hooks.alongside`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

__all__ = ["watched"]

_V = TypeVar("_V")


async def watched(
	call: Callable[[], Awaitable[Any]], checks: Sequence[Callable[[], Awaitable[_V | None]]]
) -> tuple[Any, _V | None]:
	"""Await ``call()`` while each check runs; the first check that answers (not None) cancels it.

	What the call raised is raised once every check is done with; a check's answer wins over it,
	and so does what a check raised (the call is cancelled: a check that failed decided nothing).

	Args:
		call: The call watched.
		checks: The checks, started together with the call.

	Returns:
		The call's result (None when a check cancelled it), and the first check's answer, or None.
	"""
	import anyio

	out: dict[str, Any] = {}
	async with anyio.create_task_group() as tg:

		async def watch(check: Callable[[], Awaitable[_V | None]]) -> None:
			try:
				verdict = await check()
			except Exception as exc:  # raised as it is, not in a group: the call is cancelled
				out.setdefault("failed", exc)
				tg.cancel_scope.cancel()
				return
			if verdict is not None and "verdict" not in out:
				out["verdict"] = verdict
				tg.cancel_scope.cancel()

		for check in checks:
			tg.start_soon(watch, check)
		try:
			out["result"] = await call()
		except Exception as exc:  # raised after the checks are done with
			out["error"] = exc
	if "verdict" in out:
		return None, out["verdict"]
	if "failed" in out:
		raise out["failed"]
	if "error" in out:
		raise out["error"]
	return out.get("result"), None
