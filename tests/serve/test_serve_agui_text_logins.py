"""AG-UI's text for a person masks a URL's login, and keeps its links working.

The reply streamed to the end user's client (``TEXT_MESSAGE_CONTENT``), the text a run ends
with, a question, an error: masked with the secrets sources know only. A password in a
connection string the model read in a document (no source knows it) was shown. The rule for
text a person is sent (`mask_url_logins`): a URL's password and token user masked, its query
and path kept, so a presigned link or a consent link still works; whole, and as it streams
(the password cut across two deltas too).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from ag_ui.core import BaseEvent

from openmolt_core.llm import Usage
from openmolt_core.result import RunResult, RunState
from openmolt_core.secrets import Redactor
from openmolt_serve._agui_events import AguiEvents

PASSWORD = "Pw-7f3a9e21c4d8"
SIGNATURE = "5d1e0f7a9b2c4e6f8a0b"
LOGIN = f"postgresql://app:{PASSWORD}@db.example/runs"
LINK = f"https://b.s3.example/k.pdf?X-Amz-Expires=600&X-Amz-Signature={SIGNATURE}"
WORDS = f"Connect with {LOGIN} then download {LINK} today."


def _result(status: str = "success", words: str = WORDS, **state: Any) -> RunResult:
	return RunResult(None, status, words, [], 1, Usage(), RunState(run_id="r", **state))  # type: ignore[arg-type]


def _delta(text: str) -> Any:
	return SimpleNamespace(field="humanMessage", raw=False, step=1, index=0, attempt=1, text=text)


def _content(sent: list[BaseEvent]) -> str:
	return "".join(getattr(e, "delta", "") for e in sent if e.type == "TEXT_MESSAGE_CONTENT")


def _shown(sent: list[BaseEvent]) -> str:
	return " ".join(e.model_dump_json() for e in sent)


def test_words_sent_whole_mask_the_login_and_keep_the_link() -> None:
	events = AguiEvents("thread", "r", Redactor())
	sent = events.finished(_result(), None)
	text = _content(sent)
	assert PASSWORD not in _shown(sent)
	assert LINK in text and "postgresql://app:[redacted]@db.example/runs" in text, text


@pytest.mark.parametrize("cut", [5, len("Connect with postgresql://app:Pw-7f"), len(WORDS) - 3])
def test_streamed_words_mask_the_login_wherever_the_deltas_cut(cut: int) -> None:
	events = AguiEvents("thread", "r", Redactor())
	sent = [*events.text_delta(_delta(WORDS[:cut])), *events.text_delta(_delta(WORDS[cut:]))]
	sent += events.finished(_result(), None)
	text = _content(sent)
	assert PASSWORD not in _shown(sent) and PASSWORD not in text, text
	assert LINK in text and text.count("Connect with") == 1, text  # streamed once, not again
	assert sum(e.type == "TEXT_MESSAGE_START" for e in sent) == 1


def test_a_question_and_an_error_mask_the_login() -> None:
	events = AguiEvents("thread", "r", Redactor())
	asked = events.finished(
		_result("human_input_required", "", pending={"message": f"Is {LOGIN} right?"}), None
	)
	failed = AguiEvents("thread", "r", Redactor()).finished(
		_result("error", ""), RuntimeError(f"could not reach {LOGIN}")
	)
	for sent in (asked, failed):
		assert PASSWORD not in _shown(sent) and "[redacted]" in _shown(sent), _shown(sent)
