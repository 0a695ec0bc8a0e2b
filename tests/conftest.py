import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest


def _load_activate():
	path = Path(__file__).parent / "plugins" / "activate.py"
	spec = importlib.util.spec_from_file_location("openmolt_test_plugins", path)
	module = importlib.util.module_from_spec(spec)
	spec.loader.exec_module(module)
	return module


_plugins = _load_activate()
_root = _plugins.activate()  # before any test (or plugin cache) reads the entry points


def pytest_unconfigure(config: pytest.Config) -> None:
	_plugins.deactivate(_root)


@pytest.fixture
def anyio_backend() -> str:
	return "asyncio"


@pytest.fixture(autouse=True)
def _no_dns(monkeypatch: pytest.MonkeyPatch) -> None:
	"""Tests never resolve names: the SSRF guard's default resolver answers a public address.

	A test about resolution passes its own resolver (``SsrfGuard(resolver=...)``) or replaces
	this one; IP literals never reach a resolver.
	"""
	from openmolt_core.integrations import _ssrf

	async def public(host: str, port: int) -> list[str]:
		return ["93.184.216.34"]

	monkeypatch.setattr(_ssrf, "resolve_host", public)


@pytest.fixture(autouse=True, scope="session")
def _run_store_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
	# The `openmolt` command records its runs under $XDG_STATE_HOME (openmolt_core.runstore):
	# tests, and the commands they start, write there instead of the user's home. Likewise the
	# key store of `openmolt keys` ($XDG_CONFIG_HOME/openmolt/keys.json).
	names = ("XDG_STATE_HOME", "XDG_CONFIG_HOME")
	old = {name: os.environ.get(name) for name in names}
	os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("state"))
	os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("config"))
	yield
	for name, value in old.items():
		if value is None:
			os.environ.pop(name, None)
		else:
			os.environ[name] = value
