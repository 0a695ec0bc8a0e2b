"""An input edited on the terminal is read as every other approval edit is: strictly.

The viewer and the served endpoints refuse ``NaN``, infinities, lone surrogates, integers
longer than Python writes and a key given twice; the terminal's ``[e]dit`` read the line with
``json.loads``, which takes all of them (``{"to": "a@x", "to": "b@x"}`` kept the last). Each is
now said and asked again, as text that is no JSON is.
"""

from __future__ import annotations

import io

import pytest

pytestmark = pytest.mark.anyio


class _Terminal(io.StringIO):
	def __init__(self, *answers: str) -> None:
		super().__init__("".join(f"{a}\n" for a in answers))

	def isatty(self) -> bool:
		return True


@pytest.mark.parametrize(
	("typed", "said"),
	[
		('{"to": "a@example.com", "to": "b@example.com"}', "twice"),
		('{"n": NaN}', "NaN"),
		('{"n": 1e999}', "too large"),
		('{"s": "\\ud800"}', "surrogate"),
		('{"n": ' + "9" * 5000 + "}", "digits"),
	],
	ids=["twice", "nan", "infinity", "surrogate", "digits"],
)
async def test_an_edit_a_state_cannot_hold_is_asked_again(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], typed: str, said: str
) -> None:
	"""The edit is refused with the reason, and the next line is the approver's edit."""
	from openmolt_core.approvals import Approvals
	from openmolt_core.cli import _approve
	from openmolt_core.decisions import ApprovalRequest

	monkeypatch.setattr("sys.stdin", _Terminal("e", typed, "e", '{"to": "a@example.com"}'))
	monkeypatch.setattr(_approve, "_lock", None)
	request = ApprovalRequest(
		run_id="r1",
		call="tool:1:0:local.send",
		agent="mailer",
		tool="local.send",
		input={"to": "a@example.com"},
		reason="send it",
		rule="local.send",
		digest="d",
		_approvals=Approvals(key="k" * 32),
	)
	decision = await _approve.approve_on_terminal(request)
	assert decision.approved and decision.input == {"to": "a@example.com"}
	err = capsys.readouterr().err
	assert said in err and "try again" in err
