"""`openmolt run`'s live message masks a URL's login as it streams, wherever the deltas cut.

The terminal showed the reply's text as the model wrote it, unmasked: a connection string's
password the model read in a document (no source knows it) was on the screen, and the summary's
message (masked) then differed from it and was printed a second time. Now the live text holds
its last word until a space (a URL's password cut in two is no URL's yet), masks each whole
piece as AG-UI's and a chat's live text do, and the summary knows the message was shown.
"""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import Any

import pytest

from openmolt_core.cli._stream import LiveText

PASSWORD = "Pw-7f3a9e21c4d8"
SIGNATURE = "5d1e0f7a9b2c4e6f8a0b"
WORDS = (
	f"Connect with postgresql://app:{PASSWORD}@db.example/runs then download "
	f"https://b.s3.example/k.pdf?X-Amz-Signature={SIGNATURE} today."
)


class _Progress:
	def pause(self) -> None: ...
	def resume(self) -> None: ...
	def line(self, text: str) -> None: ...


def _delta(text: str) -> Any:
	return SimpleNamespace(
		parent_run_id="", field="humanMessage", step=1, attempt=1, text=text, cut=False
	)


@pytest.mark.parametrize("size", [1, 3, 7, 17, len(WORDS)])
def test_the_login_never_reaches_the_terminal(size: int) -> None:
	out = io.StringIO()
	live = LiveText(out, _Progress())  # type: ignore[arg-type]
	written: list[str] = []
	for at in range(0, len(WORDS), size):
		live._delta(_delta(WORDS[at : at + size]))
		written.append(out.getvalue())
	live._end(SimpleNamespace(parent_run_id=""))
	shown = out.getvalue()
	for text in [*written, shown]:
		assert not any(PASSWORD[:n] in text for n in range(5, len(PASSWORD) + 1)), text
	assert "postgresql://app:[redacted]@db.example/runs" in shown and SIGNATURE in shown, shown
	assert shown.startswith("Connect with") and shown.count("Connect") == 1


def test_the_summary_knows_the_masked_message_was_shown() -> None:
	from openmolt_core._support.masking import mask_url_logins

	out = io.StringIO()
	live = LiveText(out, _Progress())  # type: ignore[arg-type]
	live._delta(_delta(WORDS))
	live._end(SimpleNamespace(parent_run_id=""))
	assert live.shown(mask_url_logins(WORDS))
