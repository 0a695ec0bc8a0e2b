"""What the telemetry tests share: the exporter every span of a test is read from."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
	"""An in-memory span exporter, shut down after the test."""
	exporter = InMemorySpanExporter()
	yield exporter
	exporter.shutdown()
