"""MCP secrets in ``args`` (``${VAR}``), in the URL's path or query, and in env never show.

Not in the errors of a server that cannot start or be reached, its configuration's repr, the
MCP SDK's log records, nor in any percent-encoded or base64 spelling; and they join the instance's
secret set (`OpenMolt.secrets`), so every agent of the instance masks them.
"""

from __future__ import annotations

import base64
import logging
from urllib.parse import quote, quote_plus

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import IntegrationError
from openmolt_core.testing import ScriptedModel
from openmolt_mcp import MCP
from openmolt_mcp._config import parse_server, secrets_of

pytestmark = pytest.mark.anyio

ARG = "CANARYarg+/=secret1"
PATH = "CANARYpathSecret22"
QUERY = "CANARYquery/+key33"
FLAG = "CANARYflagValue44"


def spellings(secret: str) -> list[str]:
	data = secret.encode()
	return [
		secret,
		quote(secret, safe=""),
		quote(secret, safe="").lower(),
		quote_plus(secret),
		base64.b64encode(data).decode(),
		base64.urlsafe_b64encode(data).decode().rstrip("="),
	]


def assert_clean(*texts: str) -> None:
	for text in texts:
		for secret in (ARG, PATH, QUERY, FLAG):
			for spelling in spellings(secret):
				assert spelling not in text, (secret, spelling, text[:300])


async def test_args_from_the_environment_are_masked_in_the_error_repr_and_log(
	monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
	"""A server that cannot start: its ${VAR} argument and --api-key=X value never show."""
	caplog.set_level(logging.DEBUG)
	monkeypatch.setenv("MY_SERVICE_CRED", ARG)
	om = OpenMolt(entry_points=False)
	om.register_integration(
		"gone",
		MCP.stdio("/nonexistent/mcp-server", ["--cred", "${MY_SERVICE_CRED}", f"--api-key={FLAG}"]),
	)
	assert ARG in om.secrets.values() and FLAG in om.secrets.values()  # known once registered
	agent = om.create_agent(name="A", model=ScriptedModel([]), integrations=["gone"])
	with pytest.raises(IntegrationError) as caught:
		await agent.run("go")
	assert "/nonexistent/mcp-server" in str(caught.value)
	logging.getLogger("mcp.client.stdio").debug("spawning with %s", [ARG, quote(ARG, safe="")])
	assert_clean(str(caught.value), repr(om.plugins.integration("gone")), caplog.text)
	assert "[redacted]" in caplog.text
	await om.aclose()


async def test_secrets_in_the_url_path_and_query_are_masked(
	monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
	"""A server URL with a token in its path and query: masked in the error and the logs."""
	caplog.set_level(logging.DEBUG)
	monkeypatch.setenv("TENANT", PATH)
	listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
	port = listener.extra(anyio.abc.SocketAttribute.local_port)
	await listener.aclose()  # nothing listens there any more: the connection is refused
	url = f"http://127.0.0.1:{port}/${{TENANT}}/mcp?api_key={quote(QUERY, safe='')}"
	om = OpenMolt(entry_points=False)
	om.register_integration("remote", MCP.http(url, startup_timeout=2))
	agent = om.create_agent(name="A", model=ScriptedModel([]), integrations=["remote"])
	with pytest.raises(IntegrationError) as caught:
		await agent.run("go")
	assert f"127.0.0.1:{port}" in str(caught.value)
	assert_clean(str(caught.value), repr(om.plugins.integration("remote")), caplog.text)
	await om.aclose()


def test_the_secrets_of_a_configuration_and_its_repr() -> None:
	"""secrets_of finds ${VAR} values, secret flags, URL userinfo and query keys; repr hides them."""
	import os

	os.environ["OPENMOLT_TEST_MCP_TOKEN"] = ARG
	try:
		stdio = parse_server(
			"s",
			{
				"command": "server",
				"args": ["--token", "${OPENMOLT_TEST_MCP_TOKEN}", "--password", FLAG, "--verbose"],
				"env": {"LOG_LEVEL": "debug", "SERVICE_KEY": "k3y-value-1"},
			},
		)
		http = parse_server(
			"h", {"url": f"https://user:{PATH}@mcp.example/mcp?token={QUERY}&page=2"}
		)
	finally:
		del os.environ["OPENMOLT_TEST_MCP_TOKEN"]
	assert {ARG, FLAG, "k3y-value-1"} <= secrets_of(stdio)
	assert "--verbose" not in secrets_of(stdio) and "debug" not in secrets_of(stdio)
	assert {PATH, QUERY} <= secrets_of(http) and "2" not in secrets_of(http)
	assert_clean(repr(stdio), str(stdio), repr(http), str(http))
	assert "LOG_LEVEL" in repr(stdio) and "mcp.example" in repr(http)


def test_a_server_url_s_secrets_follow_the_core_s_one_rule() -> None:
	"""The MCP config reads a URL with the core's `url_secrets` (it had a rule of its own).

	The MCP rule missed a percent-encoded password's decoded value and a password under 4
	characters; the core's missed a password holding ``@``, a user that is a token beside a
	password, and a long query value under a key that hints at nothing. Both now hold.
	"""
	import openmolt_core.secrets as core_secrets
	import openmolt_mcp._config as mcp_config

	assert not hasattr(mcp_config, "_url_secrets")
	assert mcp_config.url_secrets is core_secrets.url_secrets
	config = parse_server(
		"s",
		{
			"url": "https://ghp_Tok3nUser99:p%40ss-w0rd@mcp.example/x?q=CANARYlooseValue9&sslmode=require"
		},
	)
	found = secrets_of(config)
	assert {"ghp_Tok3nUser99", "p@ss-w0rd", "CANARYlooseValue9"} <= found
	assert "require" not in found
	short = secrets_of(parse_server("s", {"url": "https://user:pw@mcp.example/x"}))
	assert "pw" in short and "user" not in short
	raw_at = secrets_of(parse_server("s", {"url": "https://user:p@ss-w0rd@mcp.example/x"}))
	assert "p@ss-w0rd" in raw_at


DB_PASSWORD = "HunterPassw0rd42"
DB_URL = f"postgresql://app:{DB_PASSWORD}@db.internal/prod"


@pytest.mark.parametrize("given", ["env", "${VAR}"])
async def test_a_database_urls_password_under_a_public_name_never_reaches_the_model(
	given: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A stdio server's DATABASE_URL: its password is a secret though the name ends in _URL.

	The server's tool fails naming its connection URL, as a database driver does; the model,
	the events, the run state and the result see the URL with its password masked.
	"""
	import sys
	from pathlib import Path

	from openmolt_core.events import EVENT_NAMES
	from openmolt_core.testing import call_tool, finish

	if given == "${VAR}":
		monkeypatch.setenv("OUR_DATABASE_URL", DB_URL)
	value = DB_URL if given == "env" else "${OUR_DATABASE_URL}"
	server = Path(__file__).parent / "db_stdio_server.py"
	om = OpenMolt(entry_points=False)
	om.register_integration(
		"db", MCP.stdio(sys.executable, [str(server)], env={"DATABASE_URL": value}, id="db")
	)
	assert DB_PASSWORD in om.secrets.values()
	model = ScriptedModel([call_tool("db.connect"), finish(result="done")])
	agent = om.create_agent(name="A", model=model, integrations=["db"])
	events: list[str] = []
	for name in EVENT_NAMES:
		if name != "schedule":
			agent.on(name, lambda e: events.append(repr(e)))
	with anyio.fail_after(60):
		result = await agent.run("go")
	sent = " ".join(repr(m) for request in model.requests for m in request.messages)
	assert "could not connect to server at postgresql://app:" in sent  # the error did arrive
	for text in (sent, " ".join(events), repr(result.state.to_dict()), repr(result)):
		for spelling in spellings(DB_PASSWORD):
			assert spelling not in text, text[:300]
	await om.aclose()


@pytest.mark.parametrize(
	"arg",
	[
		"--database-url=postgresql://app:Pw-7f3a9e21c4d8@db.internal/app",
		"--db=//app:Pw-7f3a9e21c4d8@db.internal/app",
		"--endpoint=https://api.example/v1?api_key=Pw-7f3a9e21c4d8",
		"--endpoint=HTTPS://app:Pw-7f3a9e21c4d8@[2001:db8::1]/v1",
		"DATABASE=postgresql://app:Pw-7f3a9e21c4d8@db.internal/app",
	],
)
def test_a_url_given_as_a_flag_s_value_has_its_secrets_found(arg: str) -> None:
	"""``--database-url=postgresql://user:PASSWORD@...`` (a flag not named like a secret): the
	URL's password or key is a secret of the server, as in a URL given alone."""
	config = parse_server("s", {"command": "server", "args": [arg]})
	assert "Pw-7f3a9e21c4d8" in secrets_of(config)
	assert_clean(repr(config), str(config))
