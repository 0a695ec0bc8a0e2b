import os
import sys

import pytest

_HERE = os.path.dirname(__file__)
if _HERE not in sys.path:
	sys.path.insert(0, _HERE)  # for _serve_fakes


@pytest.fixture
def anyio_backend() -> str:
	return "asyncio"  # uvicorn serves on asyncio
