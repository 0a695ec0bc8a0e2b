"""The hot paths stay cheap: creating an agent makes a fixed, small number of Python calls.

Wall-clock figures (`benchmarks/run.py`, figure 2) move with the machine's load; the number of
Python function calls a creation makes does not, so a cut of the hot path is held here. When a
change adds calls on purpose, raise the bound in the same commit and say why.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from openmolt import ConfigurationError, OpenMolt
from openmolt_core.tools import FunctionTool


def add(input: dict[str, Any], context: Any) -> float:
	"""Add two numbers."""
	return float(input["a"] + input["b"])


ADD = {
	"type": "object",
	"properties": {"a": {"type": "number"}, "b": {"type": "number"}},
	"required": ["a", "b"],
}


def python_calls(fn: Callable[[], object]) -> list[str]:
	"""The Python functions ``fn`` calls (each call once), as ``file:function``."""
	seen: list[str] = []

	def profile(frame: FrameType, event: str, arg: object) -> None:
		if event == "call":
			code = frame.f_code
			seen.append(f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_name}")

	sys.setprofile(profile)
	try:
		fn()
	finally:
		sys.setprofile(None)
	return seen[1:]  # the first is fn itself


def plain_agents() -> Callable[[], object]:
	"""Creates an agent as benchmark figure 2 does (one function tool), on a warm instance."""
	om = OpenMolt(llm_providers={"openai": {"base_url": "http://127.0.0.1:9/v1"}})
	tool = FunctionTool("add", "Add two numbers.", add, input_schema=ADD)

	def create() -> object:
		return om.create_agent(
			name="bench", model="openai:gpt-5-mini", instructions="Add.", tools=[tool]
		)

	for _ in range(3):  # the first agents resolve the model and the shared capabilities
		create()
	return create


def _calls_in_a_fresh_process() -> list[str]:
	"""`python_calls` of `plain_agents` in a new interpreter: no state another test left behind
	(a key registered, a cache filled) changes the count."""
	import json
	import subprocess
	from pathlib import Path

	code = (
		"import json, sys; sys.path.insert(0, sys.argv[1]); "
		"from test_hot_path import python_calls, plain_agents; "
		"print(json.dumps(python_calls(plain_agents())))"
	)
	here = str(Path(__file__).resolve().parent)
	done = subprocess.run(
		[sys.executable, "-c", code, here], capture_output=True, text=True, timeout=120
	)
	assert done.returncode == 0, done.stderr
	calls: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
	return calls


def test_creating_a_plain_agent_makes_few_calls() -> None:
	calls = _calls_in_a_fresh_process()
	# No ABC check (``isinstance`` of a None against ``Mapping``) or import statement runs.
	assert not [c for c in calls if c.startswith(("<frozen abc>", "<frozen importlib"))], calls
	assert len(calls) <= 40, calls


def test_a_plain_agent_keeps_few_objects() -> None:
	"""What an agent holds that the garbage collector tracks: no closure of its own, and no
	bound method of its own (its tools' context holds the instance's ``http``, bound once)."""
	create = plain_agents()
	gc.collect()
	before = len(gc.get_objects())
	kept = [create() for _ in range(100)]
	gc.collect()
	per_agent = (len(gc.get_objects()) - before) / len(kept)
	assert per_agent <= 9.5, per_agent


def test_building_an_agent_makes_no_closure() -> None:
	"""A closure costs its cells and a function per agent, also when it is never called."""
	from openmolt_core import assembly

	assert assembly.build_agent.__code__.co_cellvars == ()


def test_two_tools_of_one_handle_are_refused() -> None:
	om = OpenMolt(llm_providers={"openai": {"base_url": "http://127.0.0.1:9/v1"}})
	tools = [FunctionTool("add", "Add.", add, input_schema=ADD) for _ in range(2)]
	with pytest.raises(ConfigurationError, match=r"tool handle\(s\) \['local\.add'\] given twice"):
		om.create_agent(name="a", model="openai:gpt-5-mini", tools=tools)


def test_building_an_agent_passes_its_keywords_without_a_dict() -> None:
	"""``Agent(om, ...)`` with its 20 keywords built a dict of them at every creation."""
	import dis

	from openmolt_core import assembly

	ops = {i.opname for i in dis.get_instructions(assembly.build_agent)}
	assert "CALL_FUNCTION_EX" not in ops


def test_a_providers_dialect_signature_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
	"""Each run asks the provider for its dialect; `inspect.signature` (10-15 µs) runs once."""
	import inspect

	from openmolt_core import _chain

	class Provider:
		"""A provider's ``schema_dialect``: with the model config."""

		def __init__(self) -> None:
			self.asked: list[tuple[Any, ...]] = []

		def schema_dialect(self, model: str, config: Any = None) -> None:
			self.asked.append((model, config))

	read: list[object] = []
	signature = inspect.signature

	def counted(fn: Any) -> inspect.Signature:
		read.append(fn)
		return signature(fn)

	monkeypatch.setattr(inspect, "signature", counted)
	provider = Provider()
	for _ in range(3):
		_chain._ask(provider.schema_dialect, "m", "config")
	_chain._ask(Provider().schema_dialect, "m", "config")  # another provider of the class
	assert provider.asked == [("m", "config")] * 3
	assert len(read) == 1

	def old_form(self: Any, model: str) -> None:  # the form without the config
		self.asked.append((model,))

	# The function's code changed (a hot reload): its signature is read again.
	Provider.schema_dialect.__code__ = old_form.__code__
	fresh = Provider()
	_chain._ask(fresh.schema_dialect, "m", "config")
	assert fresh.asked == [("m",)]
	assert len(read) == 2


def test_a_dialect_function_kept_for_a_method_is_not_reused_for_another_callable() -> None:
	"""The signature kept for a bound method's function is that method's: a staticmethod object
	(callable, with the same ``__func__``) given as ``schema_dialect`` is read on its own."""
	from openmolt_core import _chain

	def dialect(first: Any, second: Any) -> Any:
		return (first, second)

	class Bound:
		schema_dialect = dialect  # bound: takes the model only

	class Static:
		def __init__(self) -> None:
			self.schema_dialect = staticmethod(dialect)  # an instance attribute: not bound

	bound = Bound()
	assert _chain._ask(bound.schema_dialect, "m", "config") == (bound, "m")
	# Unbound, it takes two arguments: the model and the config (it was called with the model
	# only, as the method's function was, and failed for want of its second argument).
	assert _chain._ask(Static().schema_dialect, "m", "config") == ("m", "config")
