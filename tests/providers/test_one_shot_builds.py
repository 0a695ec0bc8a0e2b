"""A one-shot run builds only the pydantic models it uses, and no error-message helpers.

The run of ``benchmarks/oneshot.py`` (figure 7) in a fresh interpreter: one agent on the
``openai`` provider (Chat Completions, a mock server), one function tool, one call, finish. Every
option and command model is built on first use (``defer_build``), so the models a run never
validates (the model configuration of an agent on the defaults, the other providers' settings,
the memory options, the commands its replies do not hold) cost it nothing.
"""

import functools
import json
import subprocess
import sys
import textwrap

ONE_SHOT = textwrap.dedent(
	"""
	import json, sys, anyio, httpx
	from pydantic import BaseModel
	from openmolt import FunctionTool, OpenMolt
	from openmolt_core.testing import call_tool, finish

	replies = [call_tool("local.add", a=0, b=1), finish("1")]

	def handle(request):
		content = json.dumps({"commands": [replies.pop(0)]})
		message = {"role": "assistant", "content": content}
		return httpx.Response(200, json={"choices": [{"message": message, "finish_reason": "stop"}]})

	async def main():
		client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
		settings = {"openai": {"api_key": "sk-test", "base_url": "http://127.0.0.1:9/v1", "api_mode": "chat"}}
		schema = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}
		async with OpenMolt(llm_providers=settings, http_client=client) as om:
			tool = FunctionTool("add", "Add.", lambda i, c: i["a"] + i["b"], input_schema=schema)
			agent = om.create_agent(name="A", model="openai:gpt-5-mini", tools=[tool])
			result = await agent.run("add 0 and 1")
			assert (result.status, result.steps) == ("success", 2), (result.status, result.error)

	anyio.run(main)

	def models(cls):
		for sub in cls.__subclasses__():
			yield sub
			yield from models(sub)

	built = {
		f"{m.__module__}.{m.__qualname__}"
		for m in models(BaseModel)
		if m.__module__.startswith("openmolt") and m.__pydantic_complete__
	}
	loaded = sorted(m for m in sys.modules if m.startswith(("openmolt_providers", "openmolt_core.")))
	print(json.dumps({"built": sorted(built), "difflib": "difflib" in sys.modules, "loaded": loaded}))
	"""
)

# What a one-shot run builds, by name (a new one shows here): the provider's settings and the
# commands its replies hold. The reply schema describes the others from a generated file
# (`openmolt_core.envelope.command_schema`), without building them.
BUILT = [
	"openmolt_core.commands.CallTool",
	"openmolt_core.commands.Finish",
	"openmolt_providers.settings.OpenAISettings",
]


@functools.cache
def _one_shot() -> dict[str, object]:
	"""What the run built and loaded (one fresh interpreter for the tests here)."""
	out = subprocess.run(
		[sys.executable, "-c", ONE_SHOT], capture_output=True, text=True, timeout=120
	)
	assert out.returncode == 0, out.stderr
	result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
	return result


def test_a_one_shot_run_builds_only_the_models_it_uses() -> None:
	"""Not the agent's model configuration, nor the options and settings it was not given."""
	assert _one_shot()["built"] == BUILT


def test_a_one_shot_run_loads_no_error_message_helper() -> None:
	"""difflib ("did you mean ...?") loads only when there is a near miss to name."""
	assert _one_shot()["difflib"] is False


# What a Chat Completions run without streaming never uses: the other API, the stream parsers,
# the install hints of a plugin that is missing, the image limits (no attachment), the old
# path of the structured-output fitting (the providers import it from its home), and the
# create_agent option models (the provider's settings need only their base class).
NOT_LOADED = [
	"openmolt_providers._images",
	"openmolt_core.structured",
	"openmolt_core.options",
	"openmolt_providers.openai._responses",
	"openmolt_providers.openai._stream",
	"openmolt_providers._sse",
	"openmolt_core.streaming",
	"openmolt_core._hints",
]


def test_a_one_shot_chat_run_loads_neither_the_other_api_nor_stream_code() -> None:
	"""The Responses API's module and the stream parsers load when a call needs them."""
	loaded = set(_one_shot()["loaded"])  # type: ignore[call-overload]
	assert loaded.isdisjoint(NOT_LOADED), sorted(loaded & set(NOT_LOADED))
	assert "openmolt_providers.openai._chat" in loaded  # the API it spoke


def test_a_model_built_on_first_use_still_refuses_with_its_message() -> None:
	"""Deferring the build changes when a model is built, not what it accepts or says."""
	code = textwrap.dedent(
		"""
		from openmolt_core.llm import DEFAULT_MODEL_CONFIG, ModelConfig
		from pydantic import ValidationError
		assert not ModelConfig.__pydantic_complete__
		assert DEFAULT_MODEL_CONFIG == ModelConfig() and DEFAULT_MODEL_CONFIG.model_fields_set == set()
		try:
			ModelConfig(temperature=3)
		except ValidationError as exc:
			print(exc.errors()[0]["loc"], exc.errors()[0]["type"])
		"""
	)
	out = subprocess.run(
		[sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
	)
	assert out.stdout.strip() == "('temperature',) less_than_equal"


def test_an_agent_file_without_a_schedule_builds_no_schedule_model(tmp_path) -> None:
	"""The command validates its file; the schedule models wait for a schedule.

	A file without schedules, triggers, OpenAPI sources or config is validated by the agent-file
	model less those fields (`openmolt_core.cli._agentfile.validate`), the whole model unbuilt.
	"""
	path = tmp_path / "agent.json"
	path.write_text(json.dumps({"name": "A", "model": "openai:gpt-5-mini"}))
	code = textwrap.dedent(
		f"""
		from pathlib import Path
		from openmolt_core import schedule
		from openmolt_core.cli._agentfile import AgentFile, _WithoutRare, load_json_file
		load_json_file(Path({str(path)!r}))
		print(AgentFile.__pydantic_complete__, _WithoutRare.__pydantic_complete__)
		print(schedule.CronSchedule.__pydantic_complete__)
		print(schedule.parse_schedule({{"type": "interval", "value": 60}}).value)
		"""
	)
	out = subprocess.run(
		[sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
	)
	assert out.stdout.split() == ["False", "True", "False", "60.0"]


THREADS = textwrap.dedent(
	"""
	import threading
	from openmolt_core.llm import ModelConfig
	from openmolt_core.options import AgentMemory

	assert not ModelConfig.__pydantic_complete__ and not AgentMemory.__pydantic_complete__
	start = threading.Barrier(16)
	made, failed = [], []

	def first_use():
		start.wait()
		try:
			made.append(ModelConfig.model_validate({"temperature": 0.5, "maxOutputTokens": 10}))
			made.append(AgentMemory.model_validate({"longTerm": {"data": "x"}}))
		except Exception as exc:
			failed.append(repr(exc))

	threads = [threading.Thread(target=first_use) for _ in range(16)]
	for t in threads:
		t.start()
	for t in threads:
		t.join()
	assert not failed, failed
	assert len(made) == 32 and len({repr(m) for m in made}) == 2, {repr(m) for m in made}
	print("ok")
	"""
)


def test_deferred_models_built_first_in_many_threads_at_once_validate_alike() -> None:
	"""Sixteen threads use two unbuilt models at the same moment: every one validates the same.

	A deferred model is built by whichever thread uses it first; pydantic makes that build
	thread-safe from 2.14 (``_rebuild_lock``; before it, another thread could validate with the
	parent class's validator), which is why openmolt-core requires ``pydantic>=2.14``.
	"""
	out = subprocess.run(
		[sys.executable, "-c", THREADS], capture_output=True, text=True, timeout=120
	)
	assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
