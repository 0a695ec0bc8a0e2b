"""Which names hold a secret: one list in the core (`SECRET_HINTS`, `PUBLIC_NAMES`,
`PUBLIC_HEADERS` in `openmolt_core._support.masking`), read by every rule of the core and by the
MCP package; a second list anywhere fails here."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import openmolt_mcp
from openmolt_core._support import masking
from openmolt_core._support.masking import (
	PUBLIC_HEADERS,
	PUBLIC_NAMES,
	SECRET_HINTS,
	environment_secrets,
	named_secrets,
	secret_values,
	settings_secrets,
	url_secrets,
)
from openmolt_mcp._config import _arg_secrets, parse_server, secrets_of


def _is_secret(name: str, value: str) -> bool:
	"""Whether the core's rule for named values (an MCP server's env) calls a value secret."""
	return value in named_secrets({name: value})


_WORDS = {"token", "password", "secret", "path", "host", "accept", "content-type", "region"}


def _lists(module: object) -> list[tuple[str, object]]:
	"""The module-level tuples, lists and sets of strings that hold a hint or a public name."""
	found = []
	for name, value in vars(module).items():
		if isinstance(value, tuple | list | set | frozenset) and value:
			if all(isinstance(v, str) for v in value) and _WORDS & {str(v).lower() for v in value}:
				found.append((name, value))
	return found


def _modules() -> list[object]:
	names = [f"openmolt_mcp.{m.name}" for m in pkgutil.iter_modules(openmolt_mcp.__path__)]
	return [masking, *(importlib.import_module(n) for n in names)]


def test_no_second_list_of_secret_names() -> None:
	"""Every list of secret hints or public names in the MCP package is the core's own object."""
	core = {id(SECRET_HINTS), id(PUBLIC_NAMES), id(PUBLIC_HEADERS)}
	for module in _modules():
		for name, value in _lists(module):
			if module is masking and name.startswith("_PUBLIC_") and "id" in value:
				continue  # a credential config's public keys (ids, tenants, shops): its own rule
			assert id(value) in core, (
				f"{module.__name__}.{name} is a second list: import the core's"
			)


def _every_module() -> list[object]:
	"""Every importable module of the core and of the MCP package."""
	import openmolt_core

	out: list[object] = []
	for package in (openmolt_core, openmolt_mcp):
		for found in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
			try:
				out.append(importlib.import_module(found.name))
			except ImportError:  # an optional extra's module
				continue
	return out


def test_no_module_keeps_its_own_list_of_secret_words() -> None:
	"""A list of the words of secrets' names anywhere in the core or MCP is `SECRET_HINTS`.

	``integrations.connect`` kept one (``key``, ``token``, ``secret``, ``password``,
	``signature``) to say which config keys are secret: a name the core's rule knew
	(``passphrase``, ``GITHUB_PAT``) was no secret there.
	"""
	words = {"token", "password", "secret", "passwd"}
	for module in _every_module():
		for name, value in vars(module).items():
			if isinstance(value, tuple | list | set | frozenset) and value:
				if all(isinstance(v, str) for v in value) and words & {v.lower() for v in value}:
					assert value is SECRET_HINTS, (
						f"{module.__name__}.{name} is a second list: use masking.secret_name"
					)


def test_only_secret_name_reads_the_hints() -> None:
	"""A hint between underscores (``_pat_``) is a whole word: a reader testing ``hint in name``
	would miss ``GITHUB_PAT``; every reader outside the masking calls `secret_name`."""
	from pathlib import Path

	root = Path(masking.__file__).parents[4]
	sources = list(root.glob("openmolt_*/src/**/*.py"))
	if len(sources) < 50:
		pytest.skip("the packages are not installed from the repository's sources")
	readers = [
		str(path.relative_to(root))
		for path in sources
		if path.name != "masking.py" and "SECRET_HINTS" in path.read_text(encoding="utf-8")
	]
	assert not readers, f"{readers}: call masking.secret_name instead"


@pytest.mark.parametrize("hint", SECRET_HINTS)
def test_every_rule_reads_the_same_hints(hint: str) -> None:
	"""A short value under a name holding any hint is secret for every rule, core and MCP."""
	value = "abc1"
	assert _is_secret(f"MY_{hint.upper()}_X", value)
	assert _arg_secrets([f"--my-{hint}={value}"]) == {value}
	assert value in url_secrets(f"https://x.example/v1?my_{hint}={value}")
	assert value in settings_secrets({f"my_{hint}": value})
	assert "abcdef12" in environment_secrets({f"MY_{hint.upper()}": "abcdef12"})
	assert "abcdef12" in secret_values({f"my{hint}Id": "abcdef12"})  # the hint beats "id"


def test_an_account_sid_is_a_secret_though_it_ends_like_an_id() -> None:
	assert secret_values({"accountSid": "AC0123456789", "accountId": "acct-0123456789"}) == {
		"AC0123456789"
	}


@pytest.mark.parametrize("public", PUBLIC_NAMES)
def test_every_rule_reads_the_same_public_names(public: str) -> None:
	"""A long value under a public name stays readable in an MCP env and in a URL's query."""
	value = "long-public-value"
	assert not _is_secret(f"MY_{public.upper()}", value)
	assert value not in url_secrets(f"https://x.example/v1?my_{public}={value}")
	assert _is_secret("MY_THING", value)  # (a long value under another name is secret)


@pytest.mark.parametrize("header", sorted(PUBLIC_HEADERS))
def test_public_headers_are_the_same_for_providers_and_mcp(header: str) -> None:
	value = "application/json-and-more"
	server = parse_server("s", {"url": "https://x.example/mcp", "headers": {header: value}})
	assert value not in secrets_of(server)
	assert value not in settings_secrets({"headers": {header: value}})


@pytest.mark.parametrize("name", ["DATABASE_URL", "DB_HOST", "PGPASS_PATH", "MY_THING"])
def test_a_urls_password_is_secret_under_any_name(name: str) -> None:
	"""A URL's password is secret whatever the name above it, for the core and for MCP."""
	url = "postgresql://app:HunterPassw0rd42@db.internal/prod"
	assert "HunterPassw0rd42" in named_secrets({name: url})
	assert "HunterPassw0rd42" in environment_secrets({name: url})
	server = parse_server("db", {"command": "db-server", "env": {name: url}})
	assert "HunterPassw0rd42" in secrets_of(server)
