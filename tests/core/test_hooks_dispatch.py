"""Each `Hooks` method gives its hook the hook's own arguments: checked here, not by mypy.

The dispatchers (`hooks._tell`, `_tell_async`, `_until_stop`, `_first`) take ``*args: Any``, so
mypy no longer sees a `Hooks` method pass a hook's arguments in another order, or one too few.
This test reads each call from the source and compares it with the `Capability` hook's signature.
"""

from __future__ import annotations

import ast
import inspect
import textwrap

import pytest

from openmolt_core import hooks

_DISPATCHERS = {"_tell": 0, "_tell_async": 0, "_until_stop": 1, "_first": 3}
"""Each dispatcher, with how many of its arguments come between the hook list and the hook's own
(the hook's name; the name, the answer's check and what is expected)."""


def _calls() -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.Call]]:
	tree = ast.parse(textwrap.dedent(inspect.getsource(hooks.Hooks)))
	found = []
	for method in ast.walk(tree):
		if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef):
			for node in ast.walk(method):
				if (
					isinstance(node, ast.Call)
					and isinstance(node.func, ast.Name)
					and node.func.id in _DISPATCHERS
				):
					found.append((method, node))
	return found


_CALLS = _calls()


def test_every_dispatcher_is_found() -> None:
	"""The source is read as it is written: each dispatcher is called by some method."""
	assert {ast.unparse(call.func) for _, call in _CALLS} == set(_DISPATCHERS)
	assert len(_CALLS) >= 15


@pytest.mark.parametrize(
	("method", "call"), _CALLS, ids=[f"Hooks.{method.name}" for method, _ in _CALLS]
)
def test_a_hooks_method_gives_its_hook_the_hook_s_arguments_in_order(
	method: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call
) -> None:
	"""Hooks.done(run, call, index, entry) calls tool_done(run, call, index, entry): the same
	names, in the hook's order, each declared with the hook's type; a hook's name said is its own."""
	assert isinstance(call.func, ast.Name)
	listed = call.args[0]
	assert isinstance(listed, ast.Attribute) and ast.unparse(listed.value) == "self"
	hook = listed.attr
	skip = _DISPATCHERS[call.func.id]
	if skip:  # the hook's name, for its errors
		said = call.args[1]
		assert isinstance(said, ast.Constant) and said.value == hook
	given = [ast.unparse(a) for a in call.args[1 + skip :]]
	assert not call.keywords
	declared = {a.arg: ast.unparse(a.annotation) for a in method.args.args[1:] if a.annotation}
	params = list(inspect.signature(getattr(hooks.Capability, hook)).parameters.values())[1:]
	assert given == [p.name for p in params], f"{method.name} gives {hook} {given}"
	assert [declared.get(name) for name in given] == [p.annotation for p in params]
