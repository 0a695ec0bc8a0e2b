"""The per-step shortcuts give the answers of the work they skip (issue 31)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from openmolt_core._parse import parse_reply
from openmolt_core._support.jsonsafe import encodable
from openmolt_core._sync import is_async
from openmolt_core.capabilities import Offload
from openmolt_core.prompt import dumps
from openmolt_core.secrets import SecretSet

pytestmark = pytest.mark.anyio


def plain(x: int) -> int:
	return x


async def coro(x: int) -> int:
	return x


class Tool:
	def sync(self) -> None:
		pass

	async def run(self) -> None:
		pass


def test_is_async_answers_the_same_when_asked_again() -> None:
	tool = Tool()
	for _ in range(2):  # the second answer comes from the cache
		assert is_async(plain) is False
		assert is_async(coro) is True
		assert is_async(tool.sync) is False
		assert is_async(tool.run) is True


def test_is_async_asks_again_when_a_function_gets_other_code() -> None:
	def changing() -> None:
		pass

	assert is_async(changing) is False
	changing.__code__ = coro.__code__
	assert is_async(changing) is True


async def test_a_scalar_result_comes_back_encodable_without_being_stored() -> None:
	offload = Offload(None, limit=32)
	assert await offload.shrink("local.add", 3.5) == 3.5
	assert await offload.shrink("local.add", 10**15) == 10**15
	assert await offload.shrink("local.add", None) is None
	# The loop gives replace_result hooks the result as the state holds it (`encodable`).
	assert await offload.shrink("local.add", encodable(math.nan, 64)) == "NaN"
	assert await offload.shrink("local.add", encodable(-math.inf, 64)) == "-Infinity"


async def test_a_scalar_longer_than_a_small_limit_is_still_shortened() -> None:
	offload = Offload(None, limit=5)
	assert await offload.shrink("local.add", 1.2345678901234567) != 1.2345678901234567
	big = 10**40  # an int past the shortcut: measured as before
	assert await Offload(None, limit=32).shrink("local.add", big) != big


def test_a_reply_deeper_than_the_limit_is_refused_and_a_shallow_one_is_not() -> None:
	deep: Any = {"a": 1}
	for _ in range(6):
		deep = {"x": deep}
	call = {"type": "callTool", "tool": "local.t", "input": deep}
	text = dumps({"commands": [call]})
	refused = parse_reply(text, dumps=dumps, max_depth=8)
	assert refused.errors and "nested too deeply" in refused.errors[0]
	assert not parse_reply(text, dumps=dumps, max_depth=10).errors
	# Brackets inside strings count toward the shortcut's bound, never past the real depth.
	quoted = dumps({"commands": [{"type": "callTool", "tool": "local.t", "input": {"q": "[[{{"}}]})
	assert not parse_reply(quoted, dumps=dumps, max_depth=4).errors


def test_the_secret_set_gives_the_same_set_until_a_source_changes() -> None:
	found = ["sk-first-secret"]
	secrets = SecretSet()
	secrets.add("sk-static-value")
	secrets.add_source(lambda: list(found))
	first = secrets.values()
	assert secrets.values() is first
	assert first == {"sk-static-value", "sk-first-secret"}
	found.append("sk-second-secret")
	assert secrets.values() == {"sk-static-value", "sk-first-secret", "sk-second-secret"}
	assert "sk-second-secret" not in secrets.mask("a sk-second-secret b")


def test_a_source_of_known_secrets_leaves_the_set_as_it_was() -> None:
	"""A source that gives only known secrets hands out the known set itself, not a copy."""
	found = ["sk-static-value"]
	secrets = SecretSet()
	secrets.add("sk-static-value")
	secrets.add_source(lambda: list(found))
	first = secrets.values()
	assert first == {"sk-static-value"}
	assert secrets.values() is first
	found.append("sk-later-secret")  # a value beyond the known ones: a new set
	assert secrets.values() == {"sk-static-value", "sk-later-secret"}
	assert "sk-later-secret" not in secrets.mask("a sk-later-secret b")
	found.pop()
	assert secrets.values() is first
