"""Hints for what is missing, and the credential check before a run."""

import pytest

from openmolt import ConfigurationError, OpenMolt
from openmolt_core import _hints
from openmolt_core.hooks import Hooks
from openmolt_core.integrations import (
	ApiSetup,
	BasicCredential,
	BearerCredential,
	Credential,
	CustomCredential,
	HttpTool,
	Integration,
	OAuth2Credential,
)
from openmolt_core.integrations.preflight import missing_credentials, misspelled_keys
from openmolt_core.testing import ScriptedModel, finish
from openmolt_integrations._aws import AUTHS, sigv4_credential

pytestmark = pytest.mark.anyio


@pytest.fixture
def extras(monkeypatch):
	monkeypatch.setattr(_hints, "known_extras", lambda: frozenset({"notion", "google-drive"}))


@pytest.mark.parametrize(
	("asked", "available", "expected"),
	[
		("notionn", ["notion"], "no such integration; did you mean 'notion'?"),
		("notion", [], "not installed; run: pip install 'openmolt[notion]'"),
		("googleDrive", [], "not installed; run: pip install 'openmolt[google-drive]'"),
		("google-drive", [], "not installed; run: pip install 'openmolt[google-drive]'"),
		("notoin", [], "did you mean 'notion'? run: pip install 'openmolt[notion]'"),
		("weather2", [], "no installed plugin and no built-in has this id"),
	],
)
def test_integration_hints_suggest_only_what_exists(
	extras, monkeypatch, asked, available, expected
) -> None:
	"""Typos get 'did you mean'; only real extras get an install command."""
	monkeypatch.setattr(_hints, "install_command", lambda req: f"pip install '{req}'")
	message = _hints.missing_integration(asked, available=available)
	assert expected in message
	if asked == "weather2":
		assert "pip install" not in message


@pytest.fixture
def _nowhere(monkeypatch, tmp_path):
	"""A plain Python outside any tool folder, uv run or project, with pip."""
	import importlib.util
	import sys

	monkeypatch.setattr(sys, "prefix", str(tmp_path / "venv"))
	monkeypatch.setattr(sys, "base_prefix", "/usr")
	monkeypatch.setenv("HOME", str(tmp_path / "home"))
	for name in (
		"UV",
		"UV_TOOL_DIR",
		"PIPX_HOME",
		"XDG_DATA_HOME",
		"UV_CACHE_DIR",
		"XDG_CACHE_HOME",
		"VIRTUAL_ENV",
	):
		monkeypatch.delenv(name, raising=False)
	monkeypatch.chdir(tmp_path)
	monkeypatch.setattr(_hints, "installed_extras", frozenset)  # openmolt with no extra
	real = importlib.util.find_spec
	monkeypatch.setattr(
		_hints.importlib.util, "find_spec", lambda n: object() if n == "pip" else real(n)
	)
	return tmp_path


def test_the_install_command_follows_the_environment(monkeypatch, _nowhere) -> None:
	"""uv tool, pipx, a uv project, OpenMolt's own clone, a venv with pip, or uv pip."""
	import sys

	home = _nowhere / "home"
	monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)  # activated: its `pip` is on the PATH
	assert _hints.install_command("openmolt[ui]") == "pip install 'openmolt[ui]'"
	monkeypatch.delenv("VIRTUAL_ENV")  # .venv/bin/openmolt run as is: another pip may come first
	assert _hints.install_command("openmolt[ui]") == (
		f"{sys.executable} -m pip install 'openmolt[ui]'"
	)
	monkeypatch.setattr(sys, "prefix", str(home / ".local/share/uv/tools/openmolt"))
	assert _hints.install_command("openmolt[ui]") == "uv tool install 'openmolt[ui]'"
	monkeypatch.setattr(sys, "prefix", str(home / ".local/share/pipx/venvs/openmolt"))
	assert _hints.install_command("openmolt[ui]") == "pipx install --force 'openmolt[ui]'"
	monkeypatch.setattr(sys, "prefix", str(_nowhere / "project/.venv"))
	(_nowhere / "pyproject.toml").write_text('[project]\nname = "my-app"\n')
	monkeypatch.setenv("UV", "/usr/bin/uv")
	assert _hints.install_command("openmolt[ui]") == "uv add 'openmolt[ui]'"
	(_nowhere / "pyproject.toml").write_text('[project]\nname = "openmolt"\n')
	assert _hints.install_command("openmolt[ui]") == "uv sync --all-packages --all-extras"
	(_nowhere / "pyproject.toml").unlink()
	monkeypatch.setattr(_hints.importlib.util, "find_spec", lambda n: None)
	assert _hints.install_command("openmolt[ui]") == (
		f"uv pip install --python {sys.executable} 'openmolt[ui]'"
	)
	monkeypatch.setattr(_hints.importlib.util, "find_spec", lambda n: object())
	monkeypatch.delenv("UV")
	monkeypatch.setattr(sys, "prefix", "/usr")
	assert _hints.install_command("openmolt[ui]") == "python -m pip install 'openmolt[ui]'"


@pytest.mark.parametrize("has_pip", [True, False])
def test_a_uv_projects_venv_used_directly_gets_uv_add(monkeypatch, _nowhere, has_pip) -> None:
	""".venv/bin/openmolt (or an activated .venv) of a uv project: `uv add`, not `uv pip install`.

	Without `uv run` there is no UV variable; the uv.lock beside the environment says whose it
	is, and a `uv pip install` there would be removed by the next `uv sync`.
	"""
	import sys

	app = _nowhere / "app"
	(app / "src").mkdir(parents=True)
	monkeypatch.setattr(sys, "prefix", str(app / ".venv"))
	monkeypatch.setattr(_hints.importlib.util, "find_spec", lambda n: object() if has_pip else None)
	(app / "pyproject.toml").write_text('[project]\nname = "my-app"\n')
	before = _hints.install_command("openmolt[ui]")
	assert "uv add" not in before  # no uv.lock: any venv
	(app / "uv.lock").write_text("version = 1\n")
	monkeypatch.chdir(app / "src")
	assert _hints.install_command("openmolt[ui]") == "uv add 'openmolt[ui]'"
	monkeypatch.chdir(_nowhere)  # run from elsewhere: uv is told which project
	assert (
		_hints.install_command("openmolt[ui]") == f"uv add --project {app.resolve()} 'openmolt[ui]'"
	)


def test_uvx_gets_uvx_with_not_an_install_into_its_cached_environment(
	monkeypatch, _nowhere
) -> None:
	"""`uvx openmolt` runs in uv's cache: adding to a project or its cached venv changes nothing."""
	import sys

	monkeypatch.setenv("UV", "/usr/bin/uv")
	(_nowhere / "pyproject.toml").write_text('[project]\nname = "my-app"\n')  # uvx inside a project
	cached = _nowhere / "home/.cache/uv/archive-v0/iPtz-Lu-kOeCte-3"
	monkeypatch.setattr(sys, "prefix", str(cached))
	assert _hints.install_command("openmolt[ui]") == "uvx --with 'openmolt[ui]' openmolt ..."
	monkeypatch.setenv("UV_CACHE_DIR", str(_nowhere / "cache"))
	monkeypatch.setattr(sys, "prefix", str(_nowhere / "cache/archive-v0/abc"))
	assert _hints.install_command("openmolt[ui]") == "uvx --with 'openmolt[ui]' openmolt ..."


def test_the_known_extras_are_the_umbrellas() -> None:
	"""The extras come from the installed openmolt distribution's metadata, minus 'all'."""
	extras = _hints.known_extras()
	assert {"notion", "google-drive", "s3"} <= extras and "all" not in extras


def test_provider_hints(_nowhere) -> None:
	"""A typo of an installed provider gets 'did you mean'; nothing installed gets the package."""
	assert "did you mean 'openai'?" in _hints.missing_provider("opnai", available=["openai"])
	assert "openmolt-providers" in _hints.missing_provider("openai", available=[])
	far = _hints.missing_provider("zzz", available=["openai"])
	assert "'provider': 'openai'" in far


def _spec(*credentials: Credential) -> Integration:
	return Integration(
		name="Svc",
		auths=AUTHS,
		api_setup=ApiSetup(base_url="https://svc.example/{{ config.region }}"),
		credential_setup=list(credentials),
		tools=[HttpTool(handle="get", description="Get.", method="GET", endpoint="/x")],
	)


def _tools(spec: Integration, config: dict, credential: str | None = None):
	om = OpenMolt(entry_points=False)
	om.register_integration("svc", spec)
	entry = {"integration": "svc", "credential": {"type": credential, "config": config}}
	return om.create_agent(name="A", model=ScriptedModel([]), integrations=[entry])._tools.values()


@pytest.mark.parametrize(
	("credential", "config", "missing"),
	[
		(
			BearerCredential(
				type="bearer", headers={"Authorization": "Bearer {{ config.apiKey }}"}
			),
			{},
			("apiKey",),
		),
		(
			BearerCredential(
				type="bearer", headers={"Authorization": "Bearer {{ config.apiKey }}"}
			),
			{"apiKey": "k"},
			None,
		),
		(
			CustomCredential(type="custom", query_params={"key": "{{ config.token }}"}),
			{"token": ""},
			("token",),
		),
		(OAuth2Credential(type="oauth2", token_url="https://t.example"), {}, ("accessToken",)),
		(  # a refresh names the client: the token endpoint refuses one without its id
			OAuth2Credential(type="oauth2", token_url="https://t.example"),
			{"refreshToken": "r"},
			("clientId",),
		),
		(
			OAuth2Credential(type="oauth2", token_url="https://t.example"),
			{"refreshToken": "r", "clientId": "c"},
			None,
		),
		(  # the id as the credential's template reads it (TikTok's clientKey)
			OAuth2Credential(
				type="oauth2", token_url="https://t.example", client_id="{{ config.clientKey }}"
			),
			{"refreshToken": "r", "clientId": "c"},
			("clientKey",),
		),
		(OAuth2Credential(type="oauth2", token_url="https://t"), {"accessToken": "a"}, None),
		(
			BasicCredential(type="basic", username="{{ config.sid | default: config.account }}"),
			{},
			("sid",),
		),
		(
			BasicCredential(type="basic", username="{{ config.sid | default: config.account }}"),
			{"account": "a"},
			None,
		),
		(sigv4_credential(), {"accessKeyId": "a"}, ("secretAccessKey",)),
	],
)
def test_missing_credentials_follow_what_signing_needs(credential, config, missing) -> None:
	"""Each credential type names the keys it cannot do without, and nothing more."""
	found = missing_credentials(_tools(_spec(credential), {"region": "eu", **config}))
	assert (found[0].keys if found else None) == missing


async def test_a_run_without_its_key_stops_before_the_model() -> None:
	"""agent.run raises ConfigurationError naming the integration and key; the model is not called."""
	spec = _spec(
		BearerCredential(type="bearer", headers={"Authorization": "Bearer {{ config.apiKey }}"})
	)
	om = OpenMolt(entry_points=False)
	om.register_integration("svc", spec)
	model = ScriptedModel([finish(ok=True)])
	agent = om.create_agent(name="A", model=model, integrations=["svc"])
	with pytest.raises(
		ConfigurationError,
		match=r"svc needs config 'apiKey' and 'region' for its bearer credential",  # the URL's too
	):
		await agent.run("x")
	assert model.calls == 0
	om.integration_configs["svc"] = {"apiKey": "k", "region": "eu"}
	agent = om.create_agent(name="B", model=model, integrations=["svc"])
	assert (await agent.run("x")).status == "success"


async def test_the_credential_check_wraps_only_agents_with_integrations() -> None:
	"""A run missing a key is refused outside the observers; it does not change the fingerprint."""
	from openmolt_core.observe import RunObserver

	heard: list[str] = []

	class Recorder(RunObserver):
		async def started(self, run: object) -> None:
			heard.append("started")

	spec = _spec(
		BearerCredential(type="bearer", headers={"Authorization": "Bearer {{ config.apiKey }}"})
	)
	om = OpenMolt(entry_points=False, observers=[Recorder()])
	om.register_integration("svc", spec)
	plain = om.create_agent(name="A", model=ScriptedModel([finish(ok=True)]))
	bound = om.create_agent(name="A", model=ScriptedModel([finish(ok=True)]), integrations=["svc"])
	assert "credential-check" not in plain._hooks.by_name
	assert next(iter(bound._hooks.by_name)) == "credential-check"  # outermost
	with pytest.raises(ConfigurationError, match="svc needs config 'apiKey'"):
		await bound.run("x")
	assert heard == []  # a refused run never started
	await plain.run("x")
	assert heard == ["started"]
	om.integration_configs["svc"] = {"apiKey": "k", "region": "eu"}
	keyed = om.create_agent(name="A", model=ScriptedModel([]), integrations=["svc"])
	without = om.create_agent(name="A", model=ScriptedModel([]), integrations=["svc"])
	without._hooks = Hooks([c for c in keyed._hooks.capabilities if c.name != "credential-check"])
	assert keyed.fingerprint() == without.fingerprint()


def test_misspelled_config_keys_are_caught_and_others_left_alone() -> None:
	"""apikey and api_key look like apiKey; a key like nothing the integration reads passes."""
	spec = _spec(
		BearerCredential(type="bearer", headers={"Authorization": "Bearer {{ config.apiKey }}"})
	)
	assert misspelled_keys(spec, {"apikey": 1, "api_key": 2, "myOwnThing": 3, "apiKey": 4}) == [
		("apikey", "apiKey"),
		("api_key", "apiKey"),
	]
	# two letters swapped, which difflib rates below its cutoff (tokne for token)
	assert misspelled_keys(spec, {"apiKye": 1, "paiKey": 2, "apiKeyy": 3, "ipaKey": 4}) == [
		("apiKye", "apiKey"),
		("paiKey", "apiKey"),
		("apiKeyy", "apiKey"),  # difflib's, as before
	]
	om = OpenMolt(entry_points=False, integrations={"svc": {"apikey": "k"}})
	om.register_integration("svc", spec)
	with pytest.raises(ConfigurationError, match="did you mean 'apiKey'"):
		om.create_agent(name="A", model=ScriptedModel([]), integrations=["svc"])


def test_an_http_tool_given_without_its_integration_is_refused_when_the_agent_is_made() -> None:
	"""A declarative HTTP tool needs its integration's base URL and credential: it is refused
	at create_agent, whether or not another agent of the process bound an integration."""
	import subprocess
	import sys

	from openmolt_core.integrations.model import HttpTool

	om = OpenMolt(entry_points=False)
	stray = HttpTool(handle="get", description="Get.", method="GET", endpoint="/x")
	with pytest.raises(
		ConfigurationError, match=r"tools\[0\] is a HttpTool.*give it in an integration"
	):
		om.create_agent(name="A", model=ScriptedModel([finish("x")]), tools=[stray])
	fresh = (  # no integration bound anywhere in the process: the same refusal
		"import sys\n"
		"from openmolt import ConfigurationError, OpenMolt\n"
		"from openmolt_core.integrations.model import HttpTool\n"
		"from openmolt_core.testing import ScriptedModel, finish\n"
		"assert 'openmolt_core.integrations.binding' not in sys.modules\n"
		"tool = HttpTool(handle='get', description='Get.', method='GET', endpoint='/x')\n"
		"try:\n"
		"    OpenMolt(entry_points=False).create_agent(\n"
		"        name='A', model=ScriptedModel([finish('x')]), tools=[tool])\n"
		"except ConfigurationError as exc:\n"
		"    print(exc)\n"
	)
	done = subprocess.run([sys.executable, "-c", fresh], capture_output=True, text=True, check=True)
	assert "is a HttpTool, which runs with its integration" in done.stdout, (
		done.stdout + done.stderr
	)


def test_a_tool_reinstall_keeps_the_extras_installed_now(monkeypatch, _nowhere) -> None:
	"""uv tool and pipx replace the tool's environment: the command names the extras it has
	(``dbos`` stays when ``ui`` is added), and adds another distribution beside openmolt."""
	import sys

	home = _nowhere / "home"
	monkeypatch.setattr(_hints, "installed_extras", lambda: frozenset({"dbos", "notion"}))
	monkeypatch.setattr(_hints, "known_extras", lambda: frozenset({"dbos", "notion", "ui", "mcp"}))
	monkeypatch.setattr(sys, "prefix", str(home / ".local/share/uv/tools/openmolt"))
	assert _hints.install_command("openmolt[ui]") == "uv tool install 'openmolt[dbos,notion,ui]'"
	assert _hints.install_command("openmolt-providers") == (
		"uv tool install --with 'openmolt-providers' 'openmolt[dbos,notion]'"
	)
	monkeypatch.setattr(sys, "prefix", str(home / ".local/share/pipx/venvs/openmolt"))
	assert (
		_hints.install_command("openmolt[ui]") == "pipx install --force 'openmolt[dbos,notion,ui]'"
	)
	assert (
		_hints.install_command("openmolt-providers") == "pipx inject openmolt 'openmolt-providers'"
	)
	monkeypatch.setattr(_hints, "installed_extras", lambda: frozenset({"dbos", "notion", "mcp"}))
	assert _hints.install_command("openmolt[ui]") == "pipx install --force 'openmolt[all]'"


def test_installed_extras_are_read_from_the_distribution(monkeypatch) -> None:
	"""An extra is installed when every distribution it requires is."""
	requires = [
		"openmolt-core==0.1.0",
		"openmolt-ui==0.1.0; extra == 'ui'",
		"openmolt-dbos==0.1.0; extra == 'dbos'",
		"not-installed-anywhere>=1; extra == 'dbos'",
		"openmolt-ui==0.1.0; extra == 'all'",
	]
	monkeypatch.setattr(_hints.metadata, "requires", lambda name: requires)
	_hints.installed_extras.cache_clear()
	try:
		assert _hints.installed_extras() == frozenset({"ui"})
	finally:
		_hints.installed_extras.cache_clear()
