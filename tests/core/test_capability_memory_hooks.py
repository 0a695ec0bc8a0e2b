"""The memory hooks a memory capability attaches through: a new run's first memory
(`first_memory`, the first answer wins) and a memory kept beyond the run (`memory_written`)."""

from typing import Any, ClassVar

import pytest

from openmolt import Capability
from openmolt_core.errors import PluginError
from openmolt_core.hooks import Hooks, Run, RunOwner, tell_async
from openmolt_core.result import RunState

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
	return "asyncio"


class Remembers(Capability):
	"""Starts each run from ``memory`` and notes each memory written."""

	name: ClassVar[str] = "acme-remembers"

	def __init__(self, memory: Any) -> None:
		self.memory = memory
		self.written: list[tuple[str, int]] = []

	def first_memory(self, agent: RunOwner, memory: Any, state: RunState) -> Any:
		return self.memory

	async def memory_written(self, run: Run, memory: str, index: int) -> None:
		self.written.append((memory, index))


class Forgets(Remembers):
	"""Brings no memory (None): the next capability is asked."""

	name: ClassVar[str] = "acme-forgets"


def test_first_memory_is_the_first_answer_that_is_not_none() -> None:
	"""The first capability that brings a memory gives the run's; one that brings None does not."""
	hooks = Hooks([Forgets(None), Remembers({"longTerm": "likes tea"}), Remembers2({"x": "y"})])
	owner: Any = object()
	assert hooks.memory_start(owner, None, RunState()) == {"longTerm": "likes tea"}
	assert Hooks([Forgets(None)]).memory_start(owner, None, RunState()) is None


class Remembers2(Remembers):
	"""A second capability that brings a memory (never asked after the first answer)."""

	name: ClassVar[str] = "acme-remembers-2"


@pytest.mark.parametrize("answer", ["likes tea", {"longTerm": 3}, ["likes tea"]])
def test_first_memory_that_is_no_mapping_of_texts_is_refused(answer: Any) -> None:
	"""A memory that is not texts by key is refused, naming the capability and the fix."""
	hooks = Hooks([Remembers(answer)])
	with pytest.raises(TypeError, match=r"'acme-remembers': first_memory returned \w+; return a"):
		hooks.memory_start(object(), None, RunState())  # type: ignore[arg-type]


async def test_memory_written_tells_each_capability_in_order() -> None:
	"""Every capability with the hook hears of the write; what one raises names it."""
	first, second = Remembers(None), Remembers2(None)
	hooks = Hooks([first, second])
	run: Any = object()
	await tell_async(hooks.memory_written, run, "longTerm", 2)
	assert first.written == second.written == [("longTerm", 2)]

	class Breaks(Capability):
		name: ClassVar[str] = "acme-breaks"

		async def memory_written(self, run: Run, memory: str, index: int) -> None:
			raise KeyError(memory)

	with pytest.raises(PluginError, match="acme-breaks"):
		await tell_async(Hooks([Breaks()]).memory_written, run, "shortTerm", 0)
