import pytest


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
