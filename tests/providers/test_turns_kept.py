"""Each plain turn is built and encoded once (`openmolt_providers._body.Turns`), never stale.

Every request re-sends the whole conversation; its plain turns (text, no attachment) are kept by
their role and text, with their JSON, for the next steps. What a request sends must be what it
would send without the cache: byte for byte the compact JSON of its body, whatever changed in a
message since the last request, and whatever a request did to its own body.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import httpx
import pytest

from openmolt_core.llm import Attachment, Message
from openmolt_providers import _body
from openmolt_providers._body import EMPTY_TURN, Turn, Turns, encode
from tests.providers._replies import provider
from tests.providers.conftest import make_request

VENDORS = {
	"openai": "gpt-5-mini",
	"chat": "gpt-5-mini",
	"anthropic": "claude-sonnet-4-5",
	"google": "gemini-2.5-flash",
}

CONVERSATION = {
	"openai": "input",
	"chat": "messages",
	"anthropic": "messages",
	"google": "contents",
}

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


class _Built:
	"""A provider whose ``build`` is the one its calls use (kept turns shared, not `owned`)."""

	def __init__(self, vendor: str) -> None:
		self.provider = provider(vendor, lambda request: httpx.Response(500))
		self._build = importlib.import_module(BUILDERS[vendor]).build

	def build(self, request: Any) -> dict[str, Any]:
		"""The body a call sends."""
		return self._build(self.provider, request)  # type: ignore[no-any-return]


BUILDERS = {
	"openai": "openmolt_providers.openai._responses",
	"chat": "openmolt_providers.openai._chat",
	"anthropic": "openmolt_providers.anthropic._convert",
	"google": "openmolt_providers.gemini._convert",
}


def _builder(vendor: str) -> _Built:
	return _Built(vendor)


def _compact(body: dict[str, Any]) -> bytes:
	"""The body's bytes as `encode` wrote them before turns were kept."""
	return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def _history(n: int) -> list[Message]:
	out = [Message("user", '{"task": "add the numbers", "note": "Tromsø \\"quoted\\""}')]
	for i in range(n):
		out.append(Message("assistant", json.dumps({"commands": [{"type": "callTool", "i": i}]})))
		out.append(Message("user", json.dumps({"results": [{"ok": True, "result": i}]})))
	return out


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_body_with_kept_turns_is_the_compact_json_of_the_same_body(vendor: str) -> None:
	"""The bytes are json.dumps' of the body, at the first step and at a later one."""
	p = _builder(vendor)
	request = make_request(VENDORS[vendor])
	request.messages = _history(3)
	for _ in range(2):  # built, then from the kept turns
		body = p.build(request)
		assert any(type(t) is Turn for t in body[CONVERSATION[vendor]])
		if vendor == "anthropic":  # the first turn with its cache breakpoint is kept too
			first = body["messages"][0]
			assert type(first) is Turn
			assert first["content"][0]["cache_control"] == {"type": "ephemeral"}
		assert encode(body) == _compact(body)
	request.messages = _history(5)  # the same first turns, and new ones
	body = p.build(request)
	assert encode(body) == _compact(body)


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_message_changed_in_place_is_sent_as_it_is_now(vendor: str) -> None:
	"""A message whose text, role or attachments changed since the last request is sent anew."""
	p = _builder(vendor)
	request = make_request(VENDORS[vendor])
	request.messages = _history(2)
	first = encode(p.build(request))
	middle = request.messages[2]
	middle.content = '{"commands": [{"type": "callTool", "i": "changed"}]}'
	changed = encode(p.build(request))
	assert b"changed" in changed and b"changed" not in first
	assert changed == _compact(p.build(request))
	middle.role = "user"
	assert encode(p.build(request)) == _compact(p.build(request))
	middle.attachments.append(Attachment(media_type="image/png", data=PNG, name="dot.png"))
	with_image = encode(p.build(request))
	assert PNG.encode() in with_image
	assert with_image == _compact(p.build(request))
	middle.attachments.clear()
	assert PNG.encode() not in encode(p.build(request))
	request.messages[0].content = '{"task": "the first turn, changed"}'
	assert b"the first turn, changed" in encode(p.build(request))
	assert encode(p.build(request)) == _compact(p.build(request))


@pytest.mark.parametrize("vendor", ["anthropic", "google"])
def test_an_empty_turn_is_kept_as_the_text_that_replaces_it(vendor: str) -> None:
	"""An empty or blank reply is sent as EMPTY_TURN, whether or not it was kept before."""
	p = _builder(vendor)
	request = make_request(VENDORS[vendor])
	request.messages = [*_history(1), Message("assistant", " \n"), Message("user", "{}")]
	for _ in range(2):
		body = encode(p.build(request))
		assert body.count(EMPTY_TURN.encode()) == 1


def test_gemma_puts_the_system_prompt_in_a_new_first_turn_not_in_the_kept_one() -> None:
	"""Gemma's first turn opens with the system prompt once, at every step, and no other model's."""
	p = _builder("google")
	request = make_request("gemma-3-27b-it")
	request.messages = _history(1)
	bodies = [p.build(request) for _ in range(3)]
	for body in bodies:
		assert body["contents"][0]["parts"][0]["text"] == "You are Finder."
		assert len(body["contents"][0]["parts"]) == 2
	other = make_request("gemini-2.5-flash")
	other.messages = _history(1)
	assert other.system not in [t["text"] for t in p.build(other)["contents"][0]["parts"]]


def test_a_turn_is_kept_by_its_role_and_text_and_the_caches_start_again_when_full(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""Equal role and text give the kept turn; a new role or text a new one; full, all clear."""
	made: list[tuple[str, str]] = []

	def convert(role: str, content: str) -> dict[str, Any]:
		made.append((role, content))
		return {"role": role, "content": content}

	turns, other = Turns(convert), Turns(convert)
	a = turns("user", "x" * 10)
	assert turns("user", "".join(["x"] * 10)) is a  # an equal text, another string
	assert turns("assistant", "x" * 10) is not a
	assert a.text == '{"role":"user","content":"xxxxxxxxxx"}'
	b = other("user", "z" * 10)
	assert len(made) == 3
	monkeypatch.setattr(_body, "_TURNS_CHARS", _body._kept_chars + 100)
	turns("user", "y" * 60)  # over what every Turns together may keep: all cleared first
	assert turns("user", "x" * 10) is not a
	assert other("user", "z" * 10) is not b
	assert len(made) == 6


def test_a_kept_turn_with_a_lone_surrogate_is_sent_as_before() -> None:
	"""A text a caller built by hand with a lone surrogate is sent with U+FFFD, as without a cache."""
	p = _builder("chat")
	request = make_request(VENDORS["chat"])
	request.messages = [Message("user", "half \ud83d pair")]
	for _ in range(2):
		assert "half \ufffd pair".encode() in encode(p.build(request))


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_kept_turn_refuses_a_change_and_a_copy_of_it_does_not(vendor: str) -> None:
	"""A kept turn is shared by every request that holds it: it refuses a change, naming the fix.

	A copy (copy, deepcopy, pickle) is a plain dict, free to change, and the kept turn is as it was.
	"""
	import copy
	import pickle

	p = _builder(vendor)
	request = make_request(VENDORS[vendor])
	request.messages = _history(1)
	body = p.build(request)
	at = next(i for i, t in enumerate(body[CONVERSATION[vendor]]) if type(t) is Turn)
	turn = body[CONVERSATION[vendor]][at]
	changes = [
		lambda: turn.__setitem__("role", "assistant"),
		lambda: turn.pop("role"),
		lambda: turn.update(role="assistant"),
		lambda: turn.setdefault("name", "someone"),
		lambda: turn.__delitem__("role"),
		lambda: turn.clear(),
		lambda: turn.__ior__({"role": "assistant"}),
	]
	for change in changes:
		with pytest.raises(TypeError, match=r"kept turn cannot be changed.*build a new dict"):
			change()
	for copied in (copy.deepcopy(body), pickle.loads(pickle.dumps(body))):
		mine = copied[CONVERSATION[vendor]][at]
		assert type(mine) is dict and mine == turn
		mine["role"] = "assistant"
	again = p.build(request)
	assert again[CONVERSATION[vendor]][at] is turn and encode(again) == _compact(again)


@pytest.mark.parametrize("vendor", VENDORS)
def test_the_body_build_hands_out_is_the_callers_own(vendor: str) -> None:
	"""A change to the body a provider's public build returns reaches no other request.

	It held the kept turns themselves: a change to one (a part added, a text replaced) was not
	sent in that body (its bytes are the turn's text), showed in every later body's dicts and,
	where a body copies a kept turn's parts (Gemma's first turn), was sent in another run's
	request: one user's text in another's.
	"""
	p = provider(vendor, lambda request: httpx.Response(500))
	request = make_request(VENDORS[vendor])
	request.messages = _history(1)
	sent = _builder(vendor).build(request)
	before = encode(sent)
	body = p.build(request)
	assert body == sent and not any(type(t) is Turn for t in body[CONVERSATION[vendor]])
	for turn in body[CONVERSATION[vendor]]:
		parts = turn.get("parts", turn.get("content"))
		if isinstance(parts, list):
			parts.append({"text": "user A's note"})
			parts[0]["text"] = "user A's note"
		turn["role"] = "someone"
	assert b"user A's note" not in encode(p.build(request))
	assert encode(_builder(vendor).build(request)) == before


def test_a_gemma_body_never_holds_a_change_another_body_made() -> None:
	"""Gemma's first turn copies the kept turn's parts: a change there was sent in other runs."""
	p = provider("google", lambda request: httpx.Response(500))
	mine = make_request("gemini-2.5-flash")
	mine.messages = [Message("user", "hello")]
	p.build(mine)["contents"][0]["parts"].append({"text": "user A's note"})
	theirs = make_request("gemma-3-27b-it")
	theirs.messages = [Message("user", "hello")]
	assert b"user A's note" not in encode(_builder("google").build(theirs))


def test_both_openai_apis_keep_one_turn_of_the_same_text() -> None:
	"""Responses' ``input`` and Chat Completions' ``messages`` hold a plain turn in one form:
	it is built, encoded and counted against the keepers' budget once, not once per API."""
	from openmolt_providers.openai import _chat, _responses

	request = make_request("gpt-5-mini", history=True)
	responses = _builder("openai").build(request)["input"]
	chat = _builder("chat").build(request)["messages"]
	shared = [turn for turn in responses if isinstance(turn, Turn)]
	assert shared
	for turn in shared:
		assert any(turn is other for other in chat), turn
	assert _responses._TURNS is _chat._TURNS
