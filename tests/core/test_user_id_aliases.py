"""``agent.run(input, user=...)`` refuses a user id that can alias another user's key.

A user id is the key of that user's connected accounts, sessions, memory and runs in the store.
``"alice\\x00"`` (cut at the NUL by a C library, a file name), ``"alice\\u200b"`` (a zero-width
space no one sees), ``"ａｌｉｃｅ"`` (full-width: NFKC makes it ``alice``), ``"аlice"`` (a
Cyrillic ``а`` among Latin letters), ``" alice"`` (trimmed by a form or a store) each read as
``alice`` somewhere, or pass for her to a person: the run is refused with an error naming
``user=``, what is wrong and the fix. Ids from real sign-ins stay accepted: an e-mail address,
``slack:T1:alice``, a name in another script, Japanese mixing kanji and kana.
"""

from __future__ import annotations

import pytest

from openmolt_core import OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.testing import ScriptedModel, finish

REFUSED = {
	"NUL": "alice\x00",
	"NUL inside": "ali\x00ce",
	"line break": "alice\nbob",
	"carriage return": "alice\r",
	"tab": "al\tice",
	"escape": "alice\x1b[0m",
	"DEL": "alice\x7f",
	"C1 control": "alice\x85",
	"zero-width space": "alice\u200b",
	"zero-width joiner": "al\u200dice",
	"byte order mark": "\ufeffalice",
	"right-to-left override": "alice\u202egnp.exe",
	"line separator": "alice\u2028",
	"soft hyphen": "ali\u00adce",
	"leading space": " alice",
	"trailing space": "alice ",
	"non-breaking space": "alice\u00a0smith",
	"full-width": "\uff41\uff4c\uff49\uff43\uff45",
	"ligature": "\ufb01nn",  # "ﬁnn", NFKC "finn"
	"decomposed accent": "jose\u0301",  # NFC makes it "josé": two keys for one name
	"Cyrillic a among Latin": "\u0430lice",
	"Greek omicron among Latin": "b\u03bfb",
	"Cyrillic a in a word after a prefix": "slack:T1:\u0430lice",
	"lone surrogate": "alice\ud800",
	"private use": "alice\ue000",
	"too long": "a" * 1025,
}

ACCEPTED = [
	"alice",
	"Alice",
	"alice@example.com",
	"slack:T1:alice",
	"telegram:42",
	"a2a:Helper:crm",
	"hook:b:carol",
	"jos\u00e9",  # composed
	"Ren\u00e9e O'Brien",
	"\u0438\u0432\u0430\u043d",  # "иван": Cyrillic alone
	"slack:T1:\u0438\u0432\u0430\u043d",  # a Latin prefix, a Cyrillic name: words apart
	"\u0438\u0432\u0430\u043d@example.com",
	"\u03bd\u03af\u03ba\u03bf\u03c2 papadopoulos",  # "νίκος": a Greek word, a Latin one
	"\u7530\u4e2d\u305f\u308d\u3046",  # "田中たろう": kanji and kana
	"user 42",
	"42",
]


def _agent():  # type: ignore[no-untyped-def]
	om = OpenMolt(entry_points=False)
	return om.create_agent(name="Helper", model=ScriptedModel([finish(result="ok")] * 2))


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(REFUSED))
async def test_a_user_id_that_can_alias_another_is_refused(name: str) -> None:
	with pytest.raises(ConfigurationError) as caught:
		await _agent().run("hi", user=REFUSED[name])
	said = str(caught.value)
	assert "user=" in said and "user id" in said, said
	assert not [c for c in REFUSED[name] if not c.isprintable() and c in said], said  # escaped


@pytest.mark.anyio
@pytest.mark.parametrize("user", ACCEPTED)
async def test_an_ordinary_user_id_is_accepted(user: str) -> None:
	result = await _agent().run("hi", user=user)
	assert result.ok and result.state.user == user


@pytest.mark.anyio
async def test_a_stream_checks_it_too() -> None:
	agent = _agent()
	with pytest.raises(BaseException) as caught:
		async with agent.stream("hi", user="alice\x00") as stream:
			async for _ in stream:
				pass
			await stream.result()
	error = caught.value
	while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
		error = error.exceptions[0]
	assert isinstance(error, ConfigurationError) and "user=" in str(error), repr(caught.value)
