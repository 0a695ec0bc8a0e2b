"""Our warnings are masked before they exist: a library user's process shows them as they are.

A warning is built from values that may hold a secret (a URL, a setting, a model name from a
config); outside the ``openmolt`` command nothing masked it (``warnings.showwarning``, recorded
warnings). Every warning goes through `openmolt_core._support.masking.warn`.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from openmolt_core._support.masking import warn

ROOT = Path(__file__).resolve().parents[2]


def test_a_warning_is_masked_with_the_secrets_known_now(monkeypatch: pytest.MonkeyPatch) -> None:
	secret = "CANARY-warned-key-5150"
	monkeypatch.setenv("OPENMOLT_SOME_API_KEY", secret)
	with warnings.catch_warnings(record=True) as seen:
		warnings.simplefilter("always")
		warn(f"the base URL https://x.example/?api-key={secret} was adjusted", UserWarning)
	assert len(seen) == 1 and seen[0].category is UserWarning
	assert secret not in str(seen[0].message) and "[redacted]" in str(seen[0].message)
	assert seen[0].filename == __file__  # the caller's line, as warnings.warn gives it


@pytest.mark.parametrize(
	"url",
	[
		"https://bob:Passw0rd-xyz9Q@api.example.com/v1",
		"https://api.example.com/v1?page=2&api_key=Passw0rd-xyz9Q",
		"postgresql://runs:Passw0rd-xyz9Q@db.local/runs",
	],
	ids=["login", "query key", "database"],
)
def test_a_warning_naming_a_url_masks_its_secrets_though_no_source_knows_them(url: str) -> None:
	"""As a log record would: the URL's password, its query values named like secrets."""
	with warnings.catch_warnings(record=True) as seen:
		warnings.simplefilter("always")
		warn(f"retrying {url} after a refusal", UserWarning)
	said = str(seen[0].message)
	assert "Passw0rd-xyz9Q" not in said and "[redacted]" in said, said


def test_a_provider_s_model_warning_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
	"""A real site: a provider warns about a model whose name came from a config."""
	import httpx

	from openmolt_providers._common import ModelConfigWarning
	from openmolt_providers.openai import OpenAIProvider

	secret = "CANARY-model-key-8086"
	monkeypatch.setenv("OPENMOLT_OTHER_TOKEN", secret)
	provider = OpenAIProvider({"api_key": "sk-test-0000000000"}, httpx.AsyncClient)
	with warnings.catch_warnings(record=True) as seen:
		warnings.simplefilter("always")
		provider.warn(f"m-{secret}", "temperature", "dropped")
	assert [w.category for w in seen] == [ModelConfigWarning]
	assert secret not in str(seen[0].message)


def test_no_module_warns_without_masking() -> None:
	"""Fail closed: a new ``warnings.warn`` call would bypass the mask."""
	direct = re.compile(r"\bwarnings\.warn\(|^from warnings import .*\bwarn\b", re.MULTILINE)
	found = [
		str(path.relative_to(ROOT))
		for path in ROOT.glob("openmolt_*/src/**/*.py")
		if direct.search(path.read_text("utf-8")) and path.name != "masking.py"
	]
	assert found == []


def test_an_agent_s_lethal_trifecta_warning_points_at_the_create_agent_line() -> None:
	"""It pointed into OpenMolt (agent.py's ``self._mark(self._tools.values())``), whatever the
	caller: a fixed stacklevel counted for another path. It is the first line outside OpenMolt."""
	from openmolt import OpenMolt
	from openmolt_core.taint import LethalTrifectaWarning
	from openmolt_core.testing import ScriptedModel

	om = OpenMolt(integrations={"slack": {"token": "x"}})
	with warnings.catch_warnings(record=True) as seen:
		warnings.simplefilter("always")
		line = _line() + 1
		om.create_agent(name="a", model=ScriptedModel([]), integrations=["slack"])
	found = [(w.filename, w.lineno) for w in seen if w.category is LethalTrifectaWarning]
	assert found == [(__file__, line)]


@pytest.mark.anyio
async def test_a_model_setting_dropped_in_a_run_points_at_the_run_not_the_provider() -> None:
	"""A `ModelConfigWarning` raised deep in a run pointed into the provider's request builder."""
	import httpx

	from openmolt import OpenMolt
	from openmolt_providers._common import ModelConfigWarning

	reply = {
		"output": [{"type": "message", "content": [{"type": "output_text", "text": "{}"}]}],
		"usage": {"input_tokens": 1, "output_tokens": 1},
	}
	http = httpx.AsyncClient(
		transport=httpx.MockTransport(lambda r: httpx.Response(200, json=reply))
	)
	om = OpenMolt(llm_providers={"openai": {"api_key": "sk-test-0000000000"}}, http_client=http)
	agent = om.create_agent(
		name="a", model="openai:gpt-5-mini", model_config={"temperature": 0.2}, max_steps=1
	)
	with warnings.catch_warnings(record=True) as seen:
		warnings.simplefilter("always")
		line = _line() + 1
		await agent.run("hi")
	found = [(w.filename, w.lineno) for w in seen if issubclass(w.category, ModelConfigWarning)]
	assert found and set(found) == {(__file__, line)}
	await om.aclose()


def _line() -> int:
	"""The caller's line number."""
	import sys

	return sys._getframe(1).f_lineno


def test_a_plugin_conflict_points_at_the_application_s_line_not_into_pluggy() -> None:
	"""Two plugins named as plugins are (``openmolt_<thing>``) registering one id: the warning
	pointed into pluggy's ``_execution.py``, the frame above their registration hooks."""
	import types

	from openmolt import OpenMolt
	from openmolt_core.plugins import PluginConflictWarning

	source = (
		"from openmolt_core import hookimpl\n"
		"@hookimpl\n"
		"def register_integrations(register):\n"
		"\tregister({'name': 'W', 'apiSetup': {'baseUrl': 'https://x.example'}, 'tools': []},"
		" id='dup')\n"
	)
	plugins = []
	for name in ("openmolt_weather_one", "openmolt_weather_two"):
		module = types.ModuleType(name)
		exec(compile(source, f"<{name}>", "exec"), module.__dict__)
		plugins.append(module)
	om = OpenMolt(plugins=plugins, entry_points=False)
	with warnings.catch_warnings(record=True) as seen:
		warnings.simplefilter("always")
		line = _line() + 1
		om.plugins.integration("dup")
	found = [(w.filename, w.lineno) for w in seen if w.category is PluginConflictWarning]
	assert found == [(__file__, line)]


def test_a_warning_at_the_caller_with_no_python_caller_is_still_given() -> None:
	"""`warn(at_caller=True)` called from C (a thread's target) raised 'call stack is not deep
	enough' instead of warning: the frame walk asked for a frame two above it."""
	import _thread
	import threading

	from openmolt_core._support.masking import warn

	done = threading.Event()
	failed: list[BaseException] = []

	def target() -> None:
		try:
			warn("no caller", UserWarning, at_caller=True)
		except BaseException as exc:
			failed.append(exc)
		finally:
			done.set()

	with warnings.catch_warnings(record=True) as seen:
		warnings.simplefilter("always")
		_thread.start_new_thread(warn, ("from C", UserWarning), {"at_caller": True})
		_thread.start_new_thread(target, ())
		assert done.wait(10)
		for _ in range(100):  # the first thread has no event to say it is done
			if any(str(w.message) == "from C" for w in seen):
				break
			threading.Event().wait(0.05)
	assert failed == []
	assert {str(w.message) for w in seen} >= {"from C", "no caller"}
