"""AG-UI's tool calls show a URL's secrets masked, as the run store's events do (`mask_urls`).

The key an operator wrote in the instructions and the model put in ``httpRequest``'s URL
(``?api_key=``), or a password in a URL's userinfo, is no secret any source knows: the run keeps
it (the model needs it for its next call), the run store, the viewer and the spans mask it. The
AG-UI stream goes to the end user's client: the call's arguments and its result mask it too.
"""

from __future__ import annotations

import json

from openmolt_core.events import ToolCallEvent, ToolResponseEvent
from openmolt_core.secrets import Redactor
from openmolt_serve._agui_events import AguiEvents

KEY = "k3y-5d1e0f7a9b2c4e6f"
PASSWORD = "Pw-7f3a9e21c4d8"
URL = f"https://user:{PASSWORD}@api.example/v1/x?api_key={KEY}"


def test_a_tool_call_s_arguments_and_result_mask_a_url_s_secrets() -> None:
	events = AguiEvents("thread", "run", Redactor())
	given = {"url": URL, "method": "GET"}
	call = ToolCallEvent(agent="A", step=1, run_id="r", tool="httpRequest.request", input=given)
	answer = ToolResponseEvent(
		agent="A",
		step=1,
		run_id="r",
		tool="httpRequest.request",
		input=given,
		response={"status": 200, "body": {"next": f"{URL}&page=2"}},
	)
	sent = [*events.tool_call(call), *events.tool_result(answer)]
	shown = json.dumps([e.model_dump(mode="json") for e in sent])
	assert len(sent) == 4  # start, args, end, result: the result found its call
	assert KEY not in shown and PASSWORD not in shown, shown
	assert "api.example" in shown and "[redacted]" in shown
