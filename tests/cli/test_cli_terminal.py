"""What the command prints from outside (a model, a tool, a service) cannot steer the terminal.

A terminal obeys the control characters it prints: ``ESC [2K`` and a carriage return erase a
line, OSC 8 makes a link show one address and open another, OSC 52 writes the clipboard. The
model's question and its call's reason (a prompt injection in any tool result can steer them),
a server's error, a stored run's text were printed as written: a reason could erase itself and
leave a harmless one above "Approve? [y]es". They are printed with each such character escaped.
"""

from __future__ import annotations

import io
import json
from types import SimpleNamespace
from typing import Any

import pytest

from openmolt_core.cli._terminal import printable

pytestmark = pytest.mark.anyio

ERASE = "\x1b[2K\rcall 'lookup' (read only)"
"""A reason that would erase itself and show a harmless one in its place."""
LINK = "\x1b]8;;https://evil.example/\x1b\\https://docs.example/\x1b]8;;\x1b\\"
"""An OSC 8 link whose text is one address and whose target another."""


class _Terminal(io.StringIO):
	"""stdin as a terminal a person types ``answers`` on."""

	def __init__(self, *answers: str) -> None:
		super().__init__("".join(f"{a}\n" for a in answers))

	def isatty(self) -> bool:
		return True


def _raw_controls(text: str) -> list[str]:
	return [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]


def test_printable_escapes_what_a_terminal_obeys_and_keeps_the_rest() -> None:
	"""C0/C1 controls, DEL and bidi overrides as \\uXXXX; newlines, tabs and other text as they are."""
	assert printable("plain text, ünïcode ✓\n\tindented") == "plain text, ünïcode ✓\n\tindented"
	assert printable(ERASE) == "\\u001b[2K\\u000dcall 'lookup' (read only)"
	assert printable("a\x9bb\x7fc\u202ed\x00") == "a\\u009bb\\u007fc\\u202ed\\u0000"
	assert not _raw_controls(printable(LINK))


def test_json_printed_through_it_means_the_same() -> None:
	"""The escapes are JSON's: a result holding C1 controls or bidi marks still parses to itself."""
	value = {"output": "x\x9by\u202ez", "n": 1}
	text = json.dumps(value, ensure_ascii=False)
	assert json.loads(printable(text)) == value


async def test_an_approval_prompt_shows_the_reason_escaped(monkeypatch, capsys) -> None:
	"""The call's reason and input are the model's: the approver reads them escaped, then decides."""
	from openmolt_core.approvals import Approvals
	from openmolt_core.cli import _approve
	from openmolt_core.decisions import ApprovalRequest

	monkeypatch.setattr("sys.stdin", _Terminal("y"))
	monkeypatch.setattr(_approve, "_lock", None)
	request = ApprovalRequest(
		run_id="r1",
		call="tool:1:0:local.send",
		agent="mailer",
		tool="local.send",
		input={"to": LINK},
		reason=ERASE,
		rule="local.send",
		digest="d",
		_approvals=Approvals(key="k" * 32),
	)
	decision = await _approve.approve_on_terminal(request)
	assert decision.approved
	said = capsys.readouterr().err
	assert not _raw_controls(said)
	assert "reason: \\u001b[2K\\u000dcall 'lookup'" in said


async def test_a_question_asked_on_the_terminal_is_escaped(monkeypatch, capsys) -> None:
	"""The model's question is printed escaped before the person answers."""
	from openmolt_core.cli._progress import ask_on_terminal

	monkeypatch.setattr("sys.stdin", _Terminal("yes"))
	assert await ask_on_terminal(f"Is it {LINK}?") == "yes"
	said = capsys.readouterr().err
	assert not _raw_controls(said) and "\\u001b]8;;https://evil.example/" in said


def test_progress_lines_and_the_spinner_escape_their_text() -> None:
	"""A line (an error a tool sent) and the spinner's text; the spinner's own control stays."""
	from openmolt_core.cli._progress import Progress

	out = io.StringIO()
	progress = Progress("spinner", out)
	progress.status(f"calling {ERASE}")
	progress.line(f"error: {LINK}")
	written = out.getvalue()
	assert written.count("\r\x1b[K") >= 2  # the spinner's own erase-line, as before
	without_ours = written.replace("\r\x1b[K", "")
	assert not _raw_controls(without_ours)
	assert "\\u001b[2K" in without_ours and "\\u001b]8;;" in without_ours


def test_a_streamed_message_is_written_escaped() -> None:
	"""The humanMessage as the model writes it, piece by piece, reaches the terminal escaped."""
	from openmolt_core.cli._progress import Progress
	from openmolt_core.cli._stream import LiveText

	out = io.StringIO()
	live = LiveText(out, Progress("plain", io.StringIO()))
	for piece in ("Done: ", "\x1b]52;c;", "ZXZpbA==\x07", " ok"):
		event = SimpleNamespace(
			parent_run_id=None, field="humanMessage", step=1, attempt=1, text=piece
		)
		live._delta(event)
	assert not _raw_controls(out.getvalue())
	assert "\\u001b]52;c;ZXZpbA==\\u0007" in out.getvalue()


def test_an_error_quoting_outside_text_is_printed_escaped(tmp_path: Any, capsys) -> None:
	"""An error's text (here a file's name) goes to stderr escaped, each line in the command's voice."""
	from openmolt_core.cli import main

	code = main([str(tmp_path / "agent\x1b]0;owned\x07.json")])
	assert code == 2
	said = capsys.readouterr().err
	assert said.startswith("openmolt: ") and not _raw_controls(said)
	assert "\\u001b]0;owned\\u0007" in said


def test_a_tool_listing_escapes_a_description_from_outside(capsys) -> None:
	"""``openmolt tools``: a registered (e.g. OpenAPI-imported) integration's description is printed escaped."""
	from openmolt import OpenMolt
	from openmolt_core.cli._info import list_tools
	from openmolt_core.cli._terminal import printing

	om = OpenMolt(entry_points=False)
	om.register_integration(
		"evil",
		{
			"name": "Evil",
			"description": f"Reads things {LINK}",
			"tools": [
				{
					"handle": "read",
					"description": f"Read {ERASE}",
					"method": "GET",
					"endpoint": "https://api.example.com/read",
					"inputSchema": {"type": "object", "properties": {}},
				}
			],
		},
	)
	out = io.StringIO()
	list_tools(om, "evil", printing(out), as_json=False)
	assert "Evil (evil)" in out.getvalue()
	assert not _raw_controls(out.getvalue()) and "\\u001b]8;;" in out.getvalue()


# An input edited on the terminal is read as every other approval edit is: strictly. The viewer
# and the served endpoints refuse NaN, infinities, lone surrogates, integers longer than Python
# writes and a key given twice; the terminal's [e]dit read the line with json.loads, which takes
# all of them ({"to": "a@x", "to": "b@x"} kept the last). Each is now said and asked again.


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
