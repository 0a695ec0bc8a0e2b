"""A URL's secrets are secrets: a provider's base URL with a proxy's password or an ``api-key``
query, an integration's endpoint with userinfo, a ``DATABASE_URL`` or the durability URL."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import RunError
from openmolt_core.secrets import url_secrets
from openmolt_core.testing import ScriptedModel

pytestmark = pytest.mark.anyio

BASE_URL = "http://proxyuser:Pr0xy-Passw0rd@127.0.0.1:9/v1?api-key=AzureKey-0000111&x=1"


def test_a_url_gives_its_password_token_and_secret_query_values() -> None:
	assert url_secrets(BASE_URL) == {"Pr0xy-Passw0rd", "AzureKey-0000111"}
	assert url_secrets("https://ghp_Token0123@github.com/o/r.git") == {"ghp_Token0123"}
	assert url_secrets("postgresql://postgres@127.0.0.1:5432/postgres") == set()  # a user name
	assert url_secrets("redis://ghp_Token0123@cache:6379") == {"ghp_Token0123"}  # looks like one
	assert url_secrets("postgresql://u:p%40ss-word@db/runs") == {"p%40ss-word", "p@ss-word"}
	assert url_secrets("https://s.example/f?sig=AbC%2Bdef&se=2030") >= {"AbC%2Bdef", "AbC+def"}
	assert url_secrets("https://api.example/v1?page=2") == set()
	assert url_secrets("no url at all") == set()


async def test_a_provider_base_url_s_secrets_never_show(monkeypatch: pytest.MonkeyPatch) -> None:
	"""The connection error names the base URL: its password and key are masked."""
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test-key-0000000")

	def refuse(request: httpx.Request) -> httpx.Response:
		raise httpx.ConnectError("connection refused", request=request)

	http = httpx.AsyncClient(transport=httpx.MockTransport(refuse))
	om = OpenMolt(
		{"openai": {"base_url": BASE_URL, "max_retries": 0}}, entry_points=True, http_client=http
	)
	agent = om.create_agent(name="A", model="openai:some-model")
	seen: list[str] = []
	agent.on("error", lambda e: seen.append(repr(e)))
	with pytest.raises(RunError) as raised:
		await agent.run("go")
	error = raised.value
	texts = [str(error), repr(error), json.dumps(error.to_dict()), *seen]
	assert "127.0.0.1:9" in str(error)  # the URL is named, its secrets are not
	for text in texts:
		assert "Pr0xy-Passw0rd" not in text and "AzureKey-0000111" not in text, text
	await http.aclose()


def test_urls_in_integration_configs_the_environment_and_durability_are_secret(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	monkeypatch.setenv("DATABASE_URL", "postgresql://app:Db-Passw0rd-1@db.local/app")
	om = OpenMolt(
		integrations={"s3": {"endpoint": "https://minio:Minio-Secret-2@minio.local:9000"}},
		durability="postgresql://runs:Runs-Passw0rd-3@db.local/runs",
		entry_points=False,
	)
	known = om.secrets.values()
	assert {"Db-Passw0rd-1", "Minio-Secret-2", "Runs-Passw0rd-3"} <= known
	later = OpenMolt(entry_points=False)
	later.use_durability({"url": "postgresql://w:Worker-Passw0rd-4@db/runs"})
	assert "Worker-Passw0rd-4" in later.secrets.values()
	redact = om.create_agent(name="A", model=ScriptedModel([]))._redactor
	text: Any = redact("see https://minio:Minio-Secret-2@minio.local:9000/b")
	assert text == "see https://minio:[redacted]@minio.local:9000/b"


def test_one_rule_reads_userinfo_to_the_last_at_and_loose_query_values() -> None:
	"""The rule the MCP config had too: a raw ``@`` in a password, a token user, any long value."""
	assert url_secrets("https://user:p@ss-w0rd@db/x") == {"p@ss-w0rd"}
	assert url_secrets("https://ghp_Tok3n99:x-oauth-basic@github.com/o") == {
		"ghp_Tok3n99",
		"x-oauth-basic",
	}
	assert url_secrets("postgresql://postgres:Db-Pw-1@db/x?sslmode=require") == {"Db-Pw-1"}
	assert url_secrets("https://a.example/v1?api-version=2024-06-01&q=Loose-Value1") == {
		"Loose-Value1"
	}


@pytest.mark.parametrize(
	"password", ["pa/ss-W0rd-7", "pa?ss-W0rd-7", "pa#ss-W0rd-7", "pa:ss/W0rd?x#y-7"]
)
def test_a_database_password_is_read_as_the_database_driver_reads_it(
	password: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""SQLAlchemy (the sessions' and the durable store's driver) takes every character up to the
	``@`` as the password, ``/``, ``?`` and ``#`` included: the URL connects with it, so it is a
	secret whole (the rule had ended the userinfo at the ``/``, and found no password at all)."""
	from sqlalchemy.engine import make_url

	url = f"postgresql://app:{password}@db.local:5432/app"
	assert make_url(url).password == password  # what the driver connects with
	assert password in url_secrets(url)
	monkeypatch.setenv("DATABASE_URL", url)
	om = OpenMolt(entry_points=False)
	assert password in om.secrets.values()
	redact = om.create_agent(name="A", model=ScriptedModel([]))._redactor
	assert password not in redact(f"could not connect to {url}")


@pytest.mark.parametrize(
	"user",
	["app", "myadmin@mydemoserver", "ada.lovelace"],
)
@pytest.mark.parametrize("password", ["pa/ss-W0rd-7", "pa?ss-W0rd-7", "plain-W0rd-7"])
def test_a_user_name_with_an_at_sign_keeps_the_driver_password_found(
	user: str, password: str
) -> None:
	"""A user named ``name@server`` (Azure Database for PostgreSQL's single server wants it so)
	is read by SQLAlchemy up to the ``:``, and the password after it: a password holding a ``/``
	there was found by no rule (the authority ends at the ``/``, and the driver's rule allowed no
	``@`` in the user)."""
	from sqlalchemy.engine import make_url

	url = f"postgresql://{user}:{password}@db.example.com:5432/app"
	assert make_url(url).password == password
	assert password in url_secrets(url)
