import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.integrations._ssrf import unpinned_url
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio

KEY = "AIzaSy-secret-gemini-key-123"


async def test_a_video_download_follows_the_storage_redirect_without_the_key() -> None:
	"""downloadVideo follows Google's redirect to another host, and the API key never goes there."""
	seen: list[httpx.Request] = []

	def google(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		if request.url.host == "generativelanguage.googleapis.com":
			return httpx.Response(
				302, headers={"location": "https://storage.example.com/v/abc.mp4?sig=1"}
			)
		return httpx.Response(
			200, content=b"\x00\x00\x00\x18ftypmp42", headers={"content-type": "video/mp4"}
		)

	om = OpenMolt(http_client=httpx.AsyncClient(transport=httpx.MockTransport(google)))
	model = ScriptedModel([call_tool("veo.downloadVideo", uri="files/abc123"), finish(done=True)])
	agent = om.create_agent(
		name="V",
		model=model,
		integrations=[{"integration": "veo", "credential": {"config": {"apiKey": KEY}}}],
	)
	responses: list[object] = []
	agent.on("tool:response", lambda e: responses.append(e.response))
	await agent.run()
	first, second = seen
	assert first.headers["x-goog-api-key"] == KEY
	assert str(unpinned_url(second)) == "https://storage.example.com/v/abc.mp4?sig=1"
	assert KEY not in str(second.url) and all(KEY not in v for v in second.headers.values())
	assert responses[0]["file"].startswith("openmolt-file:") and responses[0]["size"] == 12
	await om.aclose()


async def test_other_credentialed_tools_still_refuse_cross_origin_redirects() -> None:
	"""Without the opt-in, a credentialed redirect to another host is refused, not followed."""
	seen: list[httpx.Request] = []

	def google(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(302, headers={"location": "https://elsewhere.example.com/x"})

	om = OpenMolt(http_client=httpx.AsyncClient(transport=httpx.MockTransport(google)))
	model = ScriptedModel(
		[
			call_tool("veo.getInteraction", id="int-1"),
			finish(done=True),
		]
	)
	agent = om.create_agent(
		name="V",
		model=model,
		integrations=[{"integration": "veo", "credential": {"config": {"apiKey": KEY}}}],
	)
	errors: list[str] = []
	agent.on("error", lambda e: errors.append(e.message))
	await agent.run()
	assert len(seen) == 1 and "redirected to another origin" in errors[0]
