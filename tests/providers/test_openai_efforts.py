"""Each OpenAI reasoning family is sent only an effort it accepts, and no temperature unless its
default effort is ``none``.

From OpenAI's reference (``reasoning.effort`` in the API reference and the model pages, as quoted
by its 400s ``Unsupported value: 'none' is not supported with the 'gpt-5.1-codex' model.
Supported values are: 'low', 'medium', and 'high'.``): ``gpt-5`` accepts minimal, low, medium,
high; ``gpt-5-pro`` only high; ``gpt-5.1`` none, low, medium, high and defaults to none;
``gpt-5.2`` and later add xhigh; ``gpt-5-codex`` and ``gpt-5.1-codex`` (and -mini) accept low,
medium, high, ``gpt-5.1-codex-max`` and the later codex models add xhigh (no none, no minimal);
``gpt-5.2-pro`` and the later pro models accept medium, high, xhigh; the o-series and
``codex-mini-latest`` low, medium, high, but the deep research models (``o3-deep-research``,
``o4-mini-deep-research``) medium only.
"""

from __future__ import annotations

import warnings

import httpx
import pytest

from openmolt_providers import ModelConfigWarning
from openmolt_providers.openai import OpenAIProvider

pytestmark = pytest.mark.anyio

ACCEPTS = {
	"gpt-5": {"minimal", "low", "medium", "high"},
	"gpt-5-mini-2025-08-07": {"minimal", "low", "medium", "high"},
	"gpt-5-pro": {"high"},
	"gpt-5-codex": {"low", "medium", "high"},
	"gpt-5.1": {"none", "low", "medium", "high"},
	"gpt-5.1-2025-11-13": {"none", "low", "medium", "high"},
	"gpt-5.1-codex": {"low", "medium", "high"},
	"gpt-5.1-codex-mini": {"low", "medium", "high"},
	"gpt-5.1-codex-max": {"low", "medium", "high", "xhigh"},
	"gpt-5.2": {"none", "low", "medium", "high", "xhigh"},
	"gpt-5.2-codex": {"low", "medium", "high", "xhigh"},
	"gpt-5.2-pro": {"medium", "high", "xhigh"},
	"gpt-5.2-pro-2025-12-11": {"medium", "high", "xhigh"},
	"gpt-5.4-pro": {"medium", "high", "xhigh"},
	"openai/gpt-5.1-codex": {"low", "medium", "high"},
	"o3": {"low", "medium", "high"},
	"o4-mini": {"low", "medium", "high"},
	"codex-mini-latest": {"low", "medium", "high"},
	"o3-deep-research": {"medium"},
	"o4-mini-deep-research-2025-06-26": {"medium"},
}
"""What each family accepts (the module docstring's sources)."""


def _provider(server, api_mode: str) -> OpenAIProvider:
	return OpenAIProvider({"api_key": "sk-test-123456", "api_mode": api_mode}, server.http)


def _effort(body: dict, api_mode: str) -> str | None:
	# A Responses-only model goes to the Responses API whatever the api_mode: read what was sent.
	if "messages" in body:
		return body.get("reasoning_effort")
	return body.get("reasoning", {}).get("effort")


def _answer(server, load) -> None:
	"""Each API's reply, by the path asked (a Responses-only model goes there in chat mode)."""
	import httpx

	def handle(request: httpx.Request) -> httpx.Response:
		chat = request.url.path.endswith("/chat/completions")
		return httpx.Response(200, json=load("openai_chat" if chat else "openai_text"))

	server.reply(handle)


@pytest.mark.parametrize("api_mode", ["responses", "chat"])
@pytest.mark.parametrize("thinking", [True, False, "low", "medium", "high"])
@pytest.mark.parametrize("model", sorted(ACCEPTS))
async def test_every_effort_sent_is_one_the_model_accepts(
	server, load, req, model, thinking, api_mode
) -> None:
	"""Whatever thinking asks, the effort sent is one the model's family accepts."""
	_answer(server, load)
	with warnings.catch_warnings():
		warnings.simplefilter("ignore", ModelConfigWarning)
		await _provider(server, api_mode).generate(req(model, thinking=thinking))
	assert _effort(server.body, api_mode) in ACCEPTS[model]


@pytest.mark.parametrize(
	("model", "thinking", "effort"),
	[
		("gpt-5.1-codex", False, "low"),
		("gpt-5-codex", False, "low"),
		("gpt-5.2-pro", False, "medium"),
		("gpt-5.2-pro", "low", "medium"),
		("gpt-5-pro", "medium", "high"),
		("o3-deep-research", False, "medium"),
		("o4-mini-deep-research", "high", "medium"),
	],
)
async def test_an_effort_the_model_lacks_warns_and_sends_the_nearest(
	server, load, req, model, thinking, effort
) -> None:
	"""An effort the model refuses is raised to the nearest it accepts, with a warning."""
	server.reply(load("openai_text"))
	with pytest.warns(ModelConfigWarning, match="effort"):
		await _provider(server, "responses").generate(req(model, thinking=thinking))
	assert server.body["reasoning"] == {"effort": effort}


@pytest.mark.parametrize(
	("model", "thinking", "effort"),
	[("gpt-5.1", False, "none"), ("gpt-5", False, "minimal"), ("gpt-5.2", "high", "high")],
)
async def test_an_accepted_effort_is_sent_without_a_warning(
	server, load, req, model, thinking, effort
) -> None:
	"""No warning when the model has the effort asked (False: none, else minimal)."""
	server.reply(load("openai_text"))
	with warnings.catch_warnings():
		warnings.simplefilter("error", ModelConfigWarning)
		await _provider(server, "responses").generate(req(model, thinking=thinking))
	assert server.body["reasoning"] == {"effort": effort}


@pytest.mark.parametrize("api_mode", ["responses", "chat"])
@pytest.mark.parametrize(
	"model", ["gpt-5.2-pro", "gpt-5.1-codex", "gpt-5.2-codex", "gpt-5.1-codex-max", "gpt-5-pro"]
)
async def test_temperature_is_dropped_where_the_default_effort_is_not_none(
	server, load, req, model, api_mode
) -> None:
	"""A pro or codex model of GPT-5.1 and later does not default to effort none: it rejects
	temperature and top_p as every reasoning model does, so they are dropped with a warning."""
	_answer(server, load)
	with pytest.warns(ModelConfigWarning) as warned:
		await _provider(server, api_mode).generate(req(model, temperature=0.2, top_p=0.5))
	assert any("reject" in str(w.message) for w in warned)
	assert "temperature" not in server.body and "top_p" not in server.body


@pytest.mark.parametrize("model", ["gpt-5.1", "gpt-5.2", "gpt-5.4-mini"])
async def test_temperature_is_kept_where_the_default_effort_is_none(
	server, load, req, model
) -> None:
	"""GPT-5.1 and later (not pro, not codex) default to effort none and take temperature."""
	server.reply(load("openai_text"))
	await _provider(server, "responses").generate(req(model, temperature=0.2))
	assert server.body["temperature"] == 0.2


def _sdk_models() -> tuple[set[str], set[str]]:
	"""The ``openai`` SDK's model names: Chat Completions', and the Responses API's own."""
	import typing

	from openai.types.shared.chat_model import ChatModel
	from openai.types.shared.responses_model import ResponsesModel

	chat = set(typing.get_args(ChatModel))
	responses = {
		name
		for arg in typing.get_args(ResponsesModel)
		if typing.get_origin(arg) is typing.Literal
		for name in typing.get_args(arg)
	}
	return chat, responses - chat


def test_the_responses_only_models_are_the_sdks() -> None:
	"""Every model the SDK names for the Responses API only is one, and no Chat model is."""
	from openmolt_providers.openai._models import responses_only

	chat, only = _sdk_models()
	assert only and {m for m in only if not responses_only(m)} == set()
	assert {m for m in chat if responses_only(m)} == set()


@pytest.mark.parametrize("model", ["gpt-5-pro", "gpt-5-codex", "o3-deep-research", "o3-pro"])
async def test_api_mode_chat_asks_a_responses_only_model_on_responses(
	server, load, req, model
) -> None:
	"""With api_mode 'chat' on api.openai.com, a model Chat Completions refuses (400 "only
	supported in v1/responses") is asked on the Responses API, with a warning."""
	server.reply(load("openai_text"))
	with pytest.warns(ModelConfigWarning, match="Responses API only"):
		response = await _provider(server, "chat").generate(req(model))
	assert str(server.requests[-1].url) == "https://api.openai.com/v1/responses"
	assert response.text


async def test_api_mode_chat_keeps_chat_for_the_other_models(server, load, req) -> None:
	"""Any other model keeps Chat Completions, as api_mode says."""
	server.reply(load("openai_chat"))
	with warnings.catch_warnings():
		warnings.simplefilter("error", ModelConfigWarning)
		await _provider(server, "chat").generate(req("gpt-5.2-pro"))
	assert str(server.requests[-1].url) == "https://api.openai.com/v1/chat/completions"


@pytest.mark.parametrize(
	"model", ["gpt-4o-search-preview", "gpt-4o-mini-search-preview-2025-03-11"]
)
def test_the_search_models_are_not_sent_temperature_or_top_p(req, model) -> None:
	"""The search models refuse them ("Model incompatible request arguments supplied:
	temperature, top_p", 400): dropped with a warning."""
	openai = OpenAIProvider({"api_key": "k", "api_mode": "chat"}, httpx.AsyncClient)
	with pytest.warns(ModelConfigWarning, match="search models"):
		body = openai.build(req(model, temperature=0.2, top_p=0.9))
	assert "temperature" not in body and "top_p" not in body


@pytest.mark.parametrize(
	"model",
	["gpt-4o-search-preview", "gpt-4o-mini-search-preview", "gpt-4o-audio-preview", "gpt-audio"],
)
async def test_a_chat_only_model_is_asked_on_chat_completions(server, load, req, model) -> None:
	"""The search and audio models are Chat Completions models (the Responses API searches with
	its web_search tool and takes no audio): on the Responses API, OpenAI's default, every call
	was refused. Asked on Chat Completions, with a warning once."""
	server.reply(load("openai_chat"))
	with pytest.warns(ModelConfigWarning, match="Chat Completions only"):
		response = await _provider(server, None).generate(req(model))
	assert str(server.requests[-1].url) == "https://api.openai.com/v1/chat/completions"
	assert response.text


async def test_the_responses_api_keeps_the_other_models(server, load, req) -> None:
	server.reply(load("openai_text"))
	with warnings.catch_warnings():
		warnings.simplefilter("error", ModelConfigWarning)
		await _provider(server, None).generate(req("gpt-4o"))
	assert str(server.requests[-1].url) == "https://api.openai.com/v1/responses"


@pytest.mark.parametrize("model", ["gpt-5-search-api", "gpt-5-search-api-2025-10-14"])
async def test_the_gpt5_search_model_is_asked_on_chat_completions(server, load, req, model) -> None:
	"""``gpt-5-search-api`` is the search model of Chat Completions now (the web search guide:
	"Existing Chat Completions search integration: use gpt-5-search-api"; the Responses API
	searches with its web_search tool), as the ``-search-preview`` models were: it was asked on
	the Responses API, OpenAI's default."""
	server.reply(load("openai_chat"))
	with pytest.warns(ModelConfigWarning, match="Chat Completions only"):
		response = await _provider(server, None).generate(req(model))
	assert str(server.requests[-1].url) == "https://api.openai.com/v1/chat/completions"
	assert response.text
