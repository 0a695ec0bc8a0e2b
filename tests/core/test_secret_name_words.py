"""Which names say a secret: one rule (`SECRET_HINTS`, read by `secret_name`) for every reader.

A passphrase, a GitHub personal access token (``GITHUB_PAT``), a JWT, a PEM, a bearer token, a
DSN (which holds a password), a webhook URL (Slack's and Discord's are credentials), a
``*_PWD``/``*_PASS``, a connection string: each is a secret by its name in the environment (a
name's end), in provider settings, a credential config, a URL's query, an MCP command line and an
agent file's places (anywhere in a name, as a whole word for the short ones: ``pat`` is not
``path``, ``compat`` or ``PATCH``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from openmolt_core._support.masking import (
	PUBLIC_ENV,
	environment_secrets,
	named_secrets,
	secret_name,
	secret_values,
	settings_secrets,
	url_secrets,
)
from openmolt_core._support.words import secret_place
from tests.core._sinks import instance, sink_texts

pytestmark = pytest.mark.anyio

VALUE = "v4lue-0f-the-n4me-0001"

SECRET_ENV = [
	"GITHUB_PAT",
	"GH_PAT",
	"GPG_PASSPHRASE",
	"SSH_KEY_PASSPHRASE",
	"AUTH_JWT",
	"SERVICE_JWT",
	"TLS_CERT_PEM",
	"SIGNING_PEM",
	"SSH_PRIVATE_KEY",
	"BEARER",
	"API_BEARER",
	"SENTRY_DSN",
	"DATABASE_DSN",
	"SLACK_WEBHOOK_URL",
	"DISCORD_WEBHOOK_URL",
	"TEAMS_INCOMING_WEBHOOK_URL",
	"MYSQL_PWD",
	"SMTP_PASS",
	"AZURE_STORAGE_CONNECTION_STRING",
	"AWS_CREDS",
	"VPN_PSK",
	"JWT_SIGNATURE",
]
LOOKALIKE_ENV = [
	"PATH",
	"PYTHONPATH",
	"LD_LIBRARY_PATH",
	"COMPAT",
	"GLIBC_COMPAT",
	"PATCH",
	"PATCH_LEVEL",
	"DISPATCH",
	"PWD",
	"OLDPWD",
	"JWT_ALGORITHM",
	"PEM_PATH",
	"DSN_HOST",
	"PASS_THROUGH",
	"BYPASS",
	"COMPASS",
	"WEBHOOK_URL_PATH",
	"DESIGN",
	"ASSIGNEE",
]


@pytest.mark.parametrize("name", SECRET_ENV)
def test_an_environment_variable_named_like_a_secret_is_one(name: str) -> None:
	assert secret_name(name, ends=True)
	assert environment_secrets({name: VALUE}) == {VALUE}


@pytest.mark.parametrize("name", LOOKALIKE_ENV)
def test_a_variable_whose_name_only_looks_like_one_is_not(name: str) -> None:
	"""``PWD`` ends with a hint, but is the shell's directory (`PUBLIC_ENV`)."""
	assert not secret_name(name, ends=True) or name in PUBLIC_ENV
	assert environment_secrets({name: VALUE}) == set()


SECRET_KEYS = [
	"githubPat",
	"pat",
	"PAT",
	"gh_pat_value",
	"passphrase",
	"keyPassphrase",
	"jwt",
	"jwtSecret",
	"serviceJWT",
	"pem",
	"certPem",
	"bearer",
	"bearerToken",
	"dsn",
	"sentryDsn",
	"webhookUrl",
	"webhook_url",
	"slackWebhookURL",
	"WebHookUrl",
	"passWord",
	"PassWd",
	"pwd",
	"dbPass",
	"connectionString",
	"signature",
	"x-amz-signature",
	"sig",
]
PUBLIC_KEYS = ["path", "compat", "patch", "dispatch", "pathPattern", "bypass", "design", "model"]


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_a_settings_key_holding_a_hint_anywhere_is_secret(key: str) -> None:
	"""Provider settings and a URL's query read a hint anywhere in the name."""
	assert secret_name(key)
	assert settings_secrets({key: VALUE}) == {VALUE}
	assert settings_secrets({"nested": {key: "abc1"}}) == {"abc1"}  # short, but named so
	assert "abc1" in url_secrets(f"https://x.example/v1?{key}=abc1")


@pytest.mark.parametrize("key", PUBLIC_KEYS)
def test_a_settings_key_that_only_looks_like_one_is_not(key: str) -> None:
	assert not secret_name(key)
	assert settings_secrets({key: VALUE}) == set()
	assert secret_place(["llm_providers", "openai", key]) is False


def test_a_passphrase_is_one_rule_for_settings_and_credential_configs() -> None:
	"""It was secret in a credential config (any long value is) but not in provider settings."""
	assert settings_secrets({"key_passphrase": "hunter22"}) == {"hunter22"}
	assert secret_values({"keyPassphrase": "hunter22"}) == {"hunter22"}


def test_a_webhook_url_under_a_public_suffix_is_secret_whole() -> None:
	"""``webhookUrl`` ends like a public URL, but the name says the URL is the credential."""
	url = "https://chat.example/hooks/abcdef0123456789"
	token = "abcdef0123456789"  # and the hook's token, shown apart (`url_secrets`)
	assert secret_values({"webhookUrl": url, "patchUrl": "https://x.example/patch"}) == {url, token}
	assert named_secrets({"SLACK_WEBHOOK_URL": url}) == {url, token}


def test_the_mcp_command_line_and_an_agent_files_places_read_the_same_rule() -> None:
	pytest.importorskip("openmolt_mcp")
	from openmolt_mcp._config import _arg_secrets

	assert _arg_secrets(["--github-pat=ghp_Value0001", "--path=/srv/data/dir"]) == {"ghp_Value0001"}
	assert _arg_secrets(["--passphrase", "hunter22", "--compat", "legacy-mode"]) == {"hunter22"}
	assert secret_place(["integrations", 0, "config", "githubPat"])


async def test_a_secret_named_so_in_the_environment_never_shows(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
	"""Through every sink: logs (httpx's line too), the tool's error, events, store, model."""
	secrets = {
		"GITHUB_PAT": "ghp_PatCanary00000000000001",
		"GPG_PASSPHRASE": "correct horse battery 0002",
		"SENTRY_DSN": "DsnCanary-0003",
		"AUTH_JWT": "eyJhbGciOiJIUzI1NiJ9.e30.JwtCanary0004",
	}
	for name, value in secrets.items():
		monkeypatch.setenv(name, value)
	om = instance(tmp_path)
	texts = await sink_texts(
		om,
		f"https://api.example/x?q={secrets['GITHUB_PAT']}",
		" ".join(secrets.values()),
		caplog,
		tmp_path,
	)
	leaked = [(v, t[:200]) for t in texts for v in secrets.values() if v in t]
	assert not leaked, leaked[:3]


def _each_hint(name: str, ends: bool) -> bool:
	"""`secret_name` as its docstring states it, one hint at a time (`SECRET_HINTS`)."""
	from openmolt_core._support.masking import SECRET_HINTS, _words

	words = _words(name)
	joined = words.replace("_", "")
	for hint in SECRET_HINTS:
		if hint.startswith("_"):  # a whole word
			if words.endswith((hint, f"{hint[:-1]}s_")) if ends else hint in words:
				return True
		else:
			bare = hint.replace("_", "")
			if joined.endswith((bare, f"{bare}s")) if ends else bare in joined:
				return True
	return False


def test_secret_name_reads_every_hint_as_one_at_a_time_would() -> None:
	"""`secret_name` searches two patterns made of the hints: for every hint, spelt in each
	style, inside a name, at its end, plural, or cut short, it answers as a loop over the hints
	one at a time would (with and without ``ends``)."""
	import os

	from openmolt_core._support.masking import PUBLIC_NAMES, SECRET_HINTS

	names = [*SECRET_ENV, *os.environ, *PUBLIC_NAMES, "", "_", "s", "PATH", "compat", "PATCH"]
	for hint in SECRET_HINTS:
		word = hint.strip("_")
		camel = "".join(p.title() for p in word.split("_"))
		for form in (word, word.upper(), camel, f"{word}s", word[:-1], f"{word}x", f"x{word}"):
			names += [form, f"my_{form}", f"{form}_url", f"MY_{form.upper()}S", f"my{form}Id"]
	for name in names:
		for ends in (False, True):
			assert secret_name(name, ends=ends) == _each_hint(name, ends), (name, ends)
