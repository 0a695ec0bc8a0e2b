"""What an MCP server returns as bytes (embedded resources, images, audio) never keeps a secret.

A real SDK server over stdio (``hostile_stdio_server.py``) returns blobs whose bytes hold the token
it was given. Text results were masked; blobs went to the file store as they were, and an image
was attached to the model's next request with the token in it.
"""

from __future__ import annotations

import base64
import logging
import sys
from pathlib import Path

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core.events import EVENT_NAMES
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_mcp import MCP
from tests._results import results_at

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
SECRET = "sk-demo-0123456789abcdef"


def spellings(secret: str) -> list[str]:
	data = secret.encode()
	return [
		secret,
		base64.b64encode(data).decode(),
		base64.urlsafe_b64encode(data).decode().rstrip("="),
		data.hex(),
	]


async def test_blobs_holding_a_secret_are_masked_or_withheld_everywhere(
	tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
	"""A text blob is stored masked; an image or audio holding the token is not kept nor shown.

	The clean image is stored as it came and shown to the model; no file of the store, nothing
	the model reads, no event, the run's state and its result hold the token in any spelling.
	"""
	caplog.set_level(logging.WARNING)
	om = OpenMolt(entry_points=False, files_dir=tmp_path / "files")
	om.register_integration(
		"h",
		MCP.stdio(
			sys.executable, [str(HERE / "hostile_stdio_server.py")], env={"DEMO_TOKEN": SECRET}
		),
	)
	model = ScriptedModel([call_tool("h.blobs"), finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["h"])
	events: list[str] = []
	for name in EVENT_NAMES:
		if name != "schedule":
			agent.on(name, lambda e: events.append(repr(e)))
	try:
		with anyio.fail_after(60):
			result = await agent.run("go")
		(entry,) = results_at(model, 1)
		assert entry["ok"] is True, entry
		text, image, audio, clean = entry["result"]
		assert text["type"] == "resource" and text["mimeType"] == "text/plain"
		kept = await om.files.open(text["file"])
		assert kept.data == b"config dump\napi_token=[redacted]\n"
		for withheld in (image, audio):
			assert "file" not in withheld and "a secret" in withheld["withheld"], withheld
		assert clean["type"] == "image"
		shown = model.requests[1].messages[-1].attachments  # only the clean image is shown
		assert [a.media_type for a in shown] == ["image/png"]
		assert base64.b64decode(shown[0].data) == (await om.files.open(clean["file"])).data
		assert base64.b64decode(shown[0].data).startswith(b"\x89PNG")
		stored = [p.read_bytes() for p in (tmp_path / "files").rglob("*") if p.is_file()]
		assert len(stored) == 4  # two files, each with its metadata
		sent = " ".join(repr(m) for r in model.requests for m in r.messages)
		texts = [sent, " ".join(events), repr(result.state.to_dict()), repr(result)]
		texts += [s.decode("latin-1") for s in stored]
		texts += [s.decode("utf-16-le", errors="replace") for s in stored]
		for text_ in texts:
			for spelling in spellings(SECRET):
				assert spelling not in text_, text_[:300]
	finally:
		await om.aclose()


async def test_a_tool_whose_name_holds_a_secret_is_left_out_and_said_so(
	caplog: pytest.LogCaptureFixture,
) -> None:
	"""A listed name is the server's text: one that holds a secret never becomes a handle.

	Before, the name reached the run's state (its listed tools), the finish event and the result.
	"""
	caplog.set_level(logging.WARNING)
	om = OpenMolt(entry_points=False)
	om.register_integration(
		"h",
		MCP.stdio(
			sys.executable, [str(HERE / "hostile_stdio_server.py")], env={"DEMO_TOKEN": SECRET}
		),
	)
	model = ScriptedModel([call_tool("h.echo", text="hi"), finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["h"])
	try:
		with anyio.fail_after(60):
			result = await agent.run("go")
	finally:
		await om.aclose()
	assert result.status == "success"
	listed = result.state.to_dict()["ext"]["tool-sources"]["listed"]
	assert "h.echo" in listed and not any("leak" in h for h in listed)
	assert "is left out: its name holds a secret" in caplog.text
	assert SECRET not in caplog.text and SECRET not in repr(result.state.to_dict())
