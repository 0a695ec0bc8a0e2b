import json
from pathlib import Path

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ToolError
from openmolt_core.files import FileStore
from openmolt_core.integrations._sandbox import Sandbox
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio


def _post_file() -> ScriptedModel:
	return ScriptedModel(
		[
			call_tool(
				"httpRequest.request",
				method="POST",
				url="http://127.0.0.1:9/upload",
				body="fileSystem:a.txt",
				bodyFormat="binary",
			),
			finish(result="done"),
		]
	)


def _results(model: ScriptedModel) -> dict:
	turns = [json.loads(m.content) for m in model.requests[-1].messages if m.role == "user"]
	return turns[1]["results"][0]


@pytest.mark.parametrize(
	("integrations", "leaks"),
	[
		(["httpRequest"], False),
		(["httpRequest", {"integration": "fileSystem", "scopes": ["write"]}], False),
		(["httpRequest", {"integration": "fileSystem", "scopes": ["read"]}], True),
		(["httpRequest", "fileSystem"], True),
	],
)
async def test_file_system_references_need_the_file_system_read_scope(
	tmp_path: Path, integrations: list, leaks: bool
) -> None:
	"""Only an agent granted fileSystem with its read scope can send fileSystem: bytes."""
	(tmp_path / "a.txt").write_text("secret bytes")
	sent: list[bytes] = []

	def handler(request: httpx.Request) -> httpx.Response:
		sent.append(request.content)
		return httpx.Response(200, text="ok")

	om = OpenMolt(
		entry_points=False, http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler))
	)
	om.register_integration("fileSystem", OpenMolt.FileSystemIntegration(tmp_path))
	om.register_integration(
		"httpRequest", OpenMolt.HttpRequestIntegration(allow_internal_hosts=["127.0.0.1"])
	)
	model = _post_file()
	agent = om.create_agent(name="H", model=model, integrations=integrations)
	await agent.run("x")
	result = _results(model)
	if leaks:
		assert result["ok"] is True and sent == [b"secret bytes"]
	else:
		assert result["ok"] is False and "fileSystem" in result["error"] and sent == []
	await om.aclose()


async def test_agent_view_shares_the_store(tmp_path: Path) -> None:
	"""A view saves into and reads from the same store; only fileSystem: is refused."""
	(tmp_path / "f.txt").write_text("fs")
	store = FileStore(tmp_path / "store", file_system=Sandbox([tmp_path]).file)
	view = store.for_agent(allow_file_system=False)
	saved = await view.save(b"abc", name="x.bin")
	assert (await store.open(saved["file"])).data == b"abc"
	assert (await view.open(saved["file"] + "#bytes=1-")).data == b"bc"
	with pytest.raises(ToolError, match="fileSystem"):
		await view.open("fileSystem:f.txt")
	assert (await store.for_agent(allow_file_system=True).open("fileSystem:f.txt")).data == b"fs"
	view.close()
	assert (await store.open(saved["file"])).data == b"abc"
