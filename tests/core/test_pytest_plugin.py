"""The pytest plugin users get with openmolt-core, tried in a pytest run of its own."""

import re
import subprocess
import sys

USER_TESTS = """
import httpx
import pytest

from openmolt import OpenMolt, RunError
from openmolt_core.testing import ModelRequestsDisallowedError, call_tool, finish

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
	return "asyncio"


WEATHER = {
	"name": "Weather",
	"apiSetup": {"baseUrl": "https://api.weather.example/v2"},
	"tools": [
		{
			"handle": "getForecast",
			"description": "Forecast.",
			"method": "GET",
			"endpoint": "/forecast/{{ input.city }}",
			"inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
		}
	],
}


async def test_fixtures(scripted_model, mock_http):
	http = mock_http(lambda request: httpx.Response(200, json={"rain": True}))
	model = scripted_model([call_tool("weather.getForecast", city="Oslo"), finish(result="Umbrella.")])
	om = OpenMolt(http_client=http)
	om.register_integration("weather", WEATHER)
	agent = om.create_agent(name="U", model=model, integrations=["weather"])
	result = await agent.run("x")
	assert result.output == {"result": "Umbrella."}
	assert [str(r.url) for r in http.requests] == ["https://api.weather.example/v2/forecast/Oslo"]
	assert model.last_turn()["results"][0]["ok"] is True


async def test_refused():
	om = OpenMolt(llm_providers={"openai": {"api_key": "k", "base_url": "http://127.0.0.1:9/v1", "max_retries": 0}})
	agent = om.create_agent(name="R", model="openai:gpt-5-mini")
	with pytest.raises(ModelRequestsDisallowedError, match="mark the test"):
		await agent.run("x")


@pytest.mark.allow_model_requests
async def test_allowed():
	om = OpenMolt(llm_providers={"openai": {"api_key": "k", "base_url": "http://127.0.0.1:9/v1", "max_retries": 0}})
	agent = om.create_agent(name="A", model="openai:gpt-5-mini")
	with pytest.raises(RunError, match="nothing listens at http://127.0.0.1:9"):
		await agent.run("x")
	await om.aclose()


def test_unused_replies(scripted_model):
	scripted_model([finish(ok=True)])
"""


def _pytest(tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
	(tmp_path / "test_user.py").write_text(USER_TESTS)
	return subprocess.run(
		[
			sys.executable,
			"-m",
			"pytest",
			"-q",
			"-p",
			"no:cacheprovider",
			"--strict-markers",
			"-rA",
			*args,
		],
		cwd=tmp_path,
		capture_output=True,
		text=True,
		timeout=120,
	)


def test_the_plugin_gives_fixtures_and_refuses_real_model_requests(tmp_path) -> None:
	"""Fixtures work, a forgotten mock is refused, the marker allows, unused replies fail."""
	done = _pytest(tmp_path)
	status = {
		name: outcome
		for outcome, name in re.findall(
			r"^(PASSED|FAILED|ERROR) test_user.py::(\w+)", done.stdout, re.M
		)
	}
	assert status == {
		"test_fixtures": "PASSED",
		"test_refused": "PASSED",
		"test_allowed": "PASSED",
		"test_unused_replies": "ERROR",
	}, done.stdout
	assert "1 reply was scripted but the model was called 0 times" in done.stdout


def test_the_switch_can_be_turned_off_for_a_run(tmp_path) -> None:
	"""--openmolt-allow-model-requests lets the request out (and test_refused then fails)."""
	done = _pytest(tmp_path, "--openmolt-allow-model-requests", "-k", "refused")
	assert "FAILED test_user.py::test_refused" in done.stdout
