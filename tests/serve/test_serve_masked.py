"""Every response of the trigger server is masked with the secrets known now (`MaskedResponses`),
as everything the viewer serves: a page, a JSON refusal echoing a value, an event stream (a secret
split across two chunks masked whole); bytes pass as they are."""

from __future__ import annotations

import base64

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_ui._shown import MaskedResponses

pytestmark = pytest.mark.anyio

SECRET = "sk-live-0123456789abcdefXYZ"


async def test_a_refusal_that_echoes_a_known_secret_is_masked() -> None:
	om = OpenMolt(entry_points=False)
	om.secrets.add(SECRET)
	agent = om.create_agent(name="Triage", model=ScriptedModel([]))
	triggers = Triggers.model_validate(
		{"webhook": {"scheme": "hmac", "secret": "webhook-secret-for-tests"}}
	)
	async with TriggerServer([(agent, triggers)], port=0) as server:
		async with httpx.AsyncClient(base_url=server.url, timeout=20) as client:
			answer = await client.post(f"/hooks/{SECRET}", content=b"{}")
			assert answer.status_code == 404 and "[redacted]" in answer.json()["error"]
			assert SECRET not in answer.text
			assert answer.headers["content-length"] == str(len(answer.content))
			health = await client.get("/health")
			assert health.json() == {"ok": True, "agents": ["Triage"]}
	await om.aclose()


async def test_streams_are_masked_across_chunks_and_bytes_pass_as_they_are() -> None:
	om = OpenMolt(entry_points=False)
	om.secrets.add(SECRET)
	raw = b"\x00\xffbinary " + SECRET.encode()

	async def events(request: object) -> Response:
		async def body():  # type: ignore[no-untyped-def]
			yield f'event: a\ndata: {{"t": "{SECRET[:9]}'.encode()
			yield f'{SECRET[9:]}"}}\n\n'.encode()
			yield f"data: {base64.b64encode(SECRET.encode()).decode()}\n\n".encode()

		return StreamingResponse(body(), media_type="text/event-stream")

	async def data(request: object) -> Response:
		return JSONResponse({"said": SECRET})

	async def blob(request: object) -> Response:
		return Response(raw, media_type="application/octet-stream")

	app = Starlette(
		routes=[Route("/events", events), Route("/data", data), Route("/blob", blob)],
	)
	transport = httpx.ASGITransport(app=MaskedResponses(app))
	async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
		streamed = await http.get("/events")
		assert streamed.text == 'event: a\ndata: {"t": "[redacted]"}\n\ndata: [redacted]\n\n'
		assert (await http.get("/data")).json() == {"said": "[redacted]"}
		assert (await http.get("/blob")).content == raw
	await om.aclose()


async def test_a_response_that_only_says_it_was_screened_is_masked_all_the_same() -> None:
	"""A route that copies another server's headers (x-openmolt-screened: 1) is masked; only the
	process's own token passes a response as it is, and the header is never sent on."""
	from openmolt_ui._shown import SCREENED, SCREENED_TOKEN

	om = OpenMolt(entry_points=False)
	om.secrets.add(SECRET)

	async def forged(request: object) -> Response:
		return JSONResponse({"said": SECRET}, headers={SCREENED.decode(): "1"})

	async def own(request: object) -> Response:
		return JSONResponse(
			{"said": "[redacted]"}, headers={SCREENED.decode(): SCREENED_TOKEN.decode()}
		)

	app = Starlette(routes=[Route("/forged", forged), Route("/own", own)])
	transport = httpx.ASGITransport(app=MaskedResponses(app))
	async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
		answer = await http.get("/forged")
		assert answer.json() == {"said": "[redacted]"} and SECRET not in answer.text
		assert SCREENED.decode() not in answer.headers
		mine = await http.get("/own")
		assert mine.json() == {"said": "[redacted]"} and SCREENED.decode() not in mine.headers
	await om.aclose()


def test_an_a2a_value_whose_keys_mask_alike_keeps_them_all() -> None:
	"""The A2A screen masks keys as mask_deep does: two that mask alike are both kept."""
	from openmolt_core._support.masking import MASK
	from openmolt_serve._a2a_parts import screened

	other = "sk-live-0123456789abcdefXYZ-2"
	value = {"metadata": {SECRET: 1, other: 2}, SECRET: {"parts": []}, other: 3}
	out = screened(value, frozenset({SECRET, other}))
	assert out == {"metadata": {MASK: 1, f"{MASK} 2": 2}, MASK: {"parts": []}, f"{MASK} 2": 3}


async def test_text_of_any_type_the_route_names_or_none_is_masked() -> None:
	"""What is unknown is masked: a JSON subtype, a type in capitals, NDJSON, JavaScript, no type;
	a body that is no UTF-8 text (a file's bytes) still passes as it is."""
	om = OpenMolt(entry_points=False)
	om.secrets.add(SECRET)
	kinds = [
		"application/vnd.api+json",
		"Application/JSON",
		"TEXT/HTML; charset=utf-8",
		"application/x-ndjson",
		"application/javascript",
		None,
	]

	def route(kind: str | None) -> Route:
		async def answer(request: object) -> Response:
			return Response(f'{{"said": "{SECRET}"}}'.encode(), media_type=kind)

		return Route(f"/{kinds.index(kind)}", answer)

	async def caps_stream(request: object) -> Response:
		async def body():  # type: ignore[no-untyped-def]
			yield f"data: {SECRET[:9]}".encode()
			yield f"{SECRET[9:]}\n\n".encode()

		return StreamingResponse(body(), media_type="Text/Event-Stream")

	app = Starlette(routes=[*map(route, kinds), Route("/stream", caps_stream)])
	transport = httpx.ASGITransport(app=MaskedResponses(app))
	async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
		for n, kind in enumerate(kinds):
			answer = await http.get(f"/{n}")
			assert SECRET not in answer.text and "[redacted]" in answer.text, kind
			assert answer.headers["content-length"] == str(len(answer.content))
		streamed = await http.get("/stream")
		assert streamed.text == "data: [redacted]\n\n"
	await om.aclose()
