"""OpenMolt's pytest plugin: fixtures for agent tests, and no real model requests by accident.

Installed with ``openmolt-core`` (a ``pytest11`` entry point), so it is active in any project that
has OpenMolt and pytest; nothing to import or configure:

```python
import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.testing import call_tool, finish

pytestmark = pytest.mark.anyio


async def test_forecast(scripted_model, mock_http) -> None:
	http = mock_http(lambda request: httpx.Response(200, json={"rain": True}))
	model = scripted_model([call_tool("httpRequest.request", ...), finish(result="Umbrella.")])
	om = OpenMolt(http_client=http)
	...
```

- ``scripted_model(replies, **options)`` makes a `openmolt_core.testing.ScriptedModel` and, when
  the test ends, fails it unless every scripted reply was used (``check=False`` opts out).
- ``mock_http(handler)`` makes an ``httpx.AsyncClient`` whose requests go to ``handler``; every
  request is kept in ``client.requests`` (a list of ``httpx.Request``).
- Real model requests are refused during tests (``openmolt_core.testing.ALLOW_MODEL_REQUESTS``
  is off): an OpenMolt instance that would call a provider through its own HTTP client raises
  `openmolt_core.testing.ModelRequestsDisallowedError`. Allow them for one test with
  ``@pytest.mark.allow_model_requests``, for a whole run with ``--openmolt-allow-model-requests``,
  or in the configuration with ``openmolt_allow_model_requests = true``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from openmolt_core import testing

if TYPE_CHECKING:
	import httpx

__all__ = [
	"mock_http",
	"openmolt_model_requests",
	"pytest_addoption",
	"pytest_configure",
	"scripted_model",
]

_INI = "openmolt_allow_model_requests"


def pytest_addoption(parser: pytest.Parser) -> None:
	"""Add ``--openmolt-allow-model-requests`` and the ini setting of the same meaning."""
	group = parser.getgroup("openmolt")
	group.addoption(
		"--openmolt-allow-model-requests",
		action="store_true",
		default=False,
		help="let tests send real model requests (refused by default)",
	)
	parser.addini(_INI, "let tests send real model requests (refused by default)", type="bool")


def pytest_configure(config: pytest.Config) -> None:
	"""Register the ``allow_model_requests`` marker (``--strict-markers`` knows it)."""
	config.addinivalue_line(
		"markers", "allow_model_requests: let this test send real model requests"
	)


@pytest.fixture(autouse=True)
def openmolt_model_requests(request: pytest.FixtureRequest) -> Iterator[bool]:
	"""Turn `openmolt_core.testing.ALLOW_MODEL_REQUESTS` off for the test, unless allowed.

	Yields:
		Whether real model requests are allowed in this test.
	"""
	config = request.config
	allowed = bool(
		config.getoption("--openmolt-allow-model-requests")
		or config.getini(_INI)
		or request.node.get_closest_marker("allow_model_requests")
	)
	before = testing.ALLOW_MODEL_REQUESTS
	testing.ALLOW_MODEL_REQUESTS = allowed
	try:
		yield allowed
	finally:
		testing.ALLOW_MODEL_REQUESTS = before


@pytest.fixture
def scripted_model() -> Iterator[Callable[..., testing.ScriptedModel]]:
	"""Make scripted models; each must have used all its replies when the test ends.

	Yields:
		``make(replies, *, check=True, **options)``: a `ScriptedModel` (``options`` go to it).
	"""
	made: list[testing.ScriptedModel] = []

	def make(
		replies: Sequence[testing.Reply], *, check: bool = True, **options: Any
	) -> testing.ScriptedModel:
		model = testing.ScriptedModel(replies, **options)
		if check:
			made.append(model)
		return model

	yield make
	for model in made:
		model.assert_consumed()


@pytest.fixture
def mock_http() -> Callable[[Callable[[httpx.Request], httpx.Response]], httpx.AsyncClient]:
	"""Make mock HTTP clients that answer with a handler and record every request.

	Returns:
		``make(handler)``: an ``httpx.AsyncClient``; ``client.requests`` lists what it was sent.
	"""

	def make(handler: Callable[[httpx.Request], httpx.Response]) -> httpx.AsyncClient:
		requests: list[httpx.Request] = []

		def record(request: httpx.Request) -> httpx.Response:
			requests.append(request)
			return handler(request)

		client = testing.mock_http(record)
		client.requests = requests  # type: ignore[attr-defined]  # the record, for assertions
		return client

	return make
