"""The crash harness (`_crash_cases`) on PostgreSQL (the cluster .ci/run starts)."""

import pytest
from _crash_cases import *  # noqa: F403  # the cases and the crashed fixture


@pytest.fixture(scope="module")
def crash_store() -> str:
	return "postgres"
