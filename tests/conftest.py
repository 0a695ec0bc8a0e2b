import os
from collections.abc import Iterator

import pytest


@pytest.fixture
def anyio_backend() -> str:
	return "asyncio"


@pytest.fixture(autouse=True, scope="session")
def _run_store_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
	# The `openmolt` command records its runs under $XDG_STATE_HOME (openmolt_core.runstore):
	# tests, and the commands they start, write there instead of the user's home.
	old = os.environ.get("XDG_STATE_HOME")
	os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("state"))
	yield
	if old is None:
		os.environ.pop("XDG_STATE_HOME", None)
	else:
		os.environ["XDG_STATE_HOME"] = old
