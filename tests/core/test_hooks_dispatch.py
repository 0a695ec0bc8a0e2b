"""Each hook tuple `Hooks` tells or asks takes the hook's own arguments and gives its answer.

A tuple the loop asks one way (typed `hooks._Tell`, `_TellAsync`, `_UntilStop`, `_First`) is told
or asked as its hook is (``tell(hooks.tool_done, run, call, index, entry)``), typed by its
annotation on `Hooks` (``_Tell[[Run, CallTool, int, Mapping[str, Any]]]``): mypy holds each call
to the annotation, and this test holds the annotation to the `Capability` hook's signature, so the
hook is the one source.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any, ClassVar

import pytest

from openmolt_core import hooks
from openmolt_core.hooks import Capability, Hooks, Stop

_CALLED = {"_Tell", "_TellAsync", "_UntilStop", "_First"}


def _annotations() -> dict[str, ast.Subscript]:
	found = {}
	for hook, written in Hooks.__annotations__.items():
		node = ast.parse(written, mode="eval").body
		if isinstance(node, ast.Subscript) and ast.unparse(node.value) in _CALLED:
			found[hook] = node
	return found


_TYPED = _annotations()


def _written(annotation: str) -> str:
	"""An annotation as `ast.unparse` writes it (its quotes), to compare with the lists'."""
	return ast.unparse(ast.parse(annotation, mode="eval"))


def test_every_kind_of_list_is_found() -> None:
	"""The annotations are read as they are written: each kind types some hook's list."""
	assert {ast.unparse(node.value) for node in _TYPED.values()} == _CALLED
	assert len(_TYPED) >= 15
	assert all(inspect.isfunction(getattr(Capability, h, None)) for h in hooks._RESOLVED)


@pytest.mark.parametrize("hook", sorted(_TYPED))
def test_a_hook_s_list_is_typed_with_the_hook_s_arguments_and_answer(hook: str) -> None:
	"""``tool_done: _Tell[[Run, CallTool, int, Mapping[str, Any]]]`` is ``tool_done``'s signature:
	the same argument types in the same order, and (`_First`) the answer besides None."""
	node = _TYPED[hook]
	kind = ast.unparse(node.value)
	args = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
	assert isinstance(args, ast.List)
	signature = inspect.signature(getattr(Capability, hook))
	params = list(signature.parameters.values())[1:]
	assert [ast.unparse(a) for a in args.elts] == [_written(p.annotation) for p in params]
	answer = str(signature.return_annotation)
	if kind == "_First":
		assert isinstance(node.slice, ast.Tuple)
		assert f"{ast.unparse(node.slice.elts[1])} | None" == _written(answer)
		assert hook in hooks._ANSWERS
	elif kind == "_UntilStop":
		assert answer == "Stop | None"
	else:
		assert answer == "None"
	assert inspect.iscoroutinefunction(getattr(Capability, hook)) == (
		kind in {"_TellAsync", "_UntilStop"}
	)


def test_each_hook_s_list_is_a_plain_tuple_told_or_asked_by_a_function() -> None:
	"""An empty list, and one with a capability added, are plain tuples (built once per agent's
	hooks: a new instance resolves them on its first agent's path)."""

	class Told(Capability):
		name = "told"
		heard: ClassVar[list[Any]] = []

		def tool_done(self, run: Any, call: Any, index: int, entry: Any) -> None:
			self.heard.append((run, call, index, entry))

		async def before_step(self, run: Any) -> Stop | None:
			return Stop("enough") if run == "full" else None

	empty, hooks_ = Hooks(), Hooks([Told()])
	for hook in hooks._RESOLVED:
		assert type(getattr(empty, hook)) is tuple and type(getattr(hooks_, hook)) is tuple
	hooks.tell(hooks_.tool_done, "run", "call", 2, {"ok": True})
	assert Told.heard == [("run", "call", 2, {"ok": True})]
	assert not empty.tool_done and len(hooks_.tool_done) == 1


@pytest.mark.anyio
async def test_an_until_stop_list_ends_at_the_first_stop_and_refuses_other_answers() -> None:
	class Stops(Capability):
		name = "stops"

		async def before_step(self, run: Any) -> Any:
			return run

	listed = Hooks([Stops()]).before_step
	assert await hooks.until_stop(listed, None) is None
	stop = Stop("no more", "limit_reached")
	assert await hooks.until_stop(listed, stop) is stop
	with pytest.raises(TypeError, match=r"before_step returned str; return Stop\(reason\) or None"):
		await hooks.until_stop(listed, "yes")
