"""Fixtures for the Google integrations: the conformance helpers and the googleapis protos.

The protos come from Google's ``google-proto-files`` npm package, cached in ``.cache/refs/``
(never committed). ``nox -s tests`` fills the cache; by hand:
``npm pack google-proto-files@6.0.1 --pack-destination .cache/refs``.
"""

import os
import tarfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
REFS = Path(os.environ.get("OPENMOLT_REFS_DIR", ROOT / ".cache" / "refs"))
PROTO_FILES = ("google-proto-files", "6.0.1", "google-proto-files-6.0.1.tgz")
"""The npm package of googleapis protos (noxfile.py packs the same version)."""


@pytest.fixture(scope="session")
def googleapis_protos():
	"""A reader of the .proto files in google-proto-files: ``read("google/ads/...proto")``."""
	package, version, filename = PROTO_FILES
	path = REFS / filename
	if not path.is_file():
		pytest.fail(
			f"official reference {package}@{version} is not cached at {path}; run "
			f"`npm pack {package}@{version} --pack-destination .cache/refs` from the repository "
			"root (or `uv run nox -s tests`, which does it)",
			pytrace=False,
		)
	tar = tarfile.open(path, "r:gz")
	names = set(tar.getnames())

	def read(relative: str) -> str:
		member = f"package/{relative}"
		if member not in names:
			pytest.fail(f"{relative} is not in {package}@{version}", pytrace=False)
		handle = tar.extractfile(member)
		assert handle is not None
		return handle.read().decode("utf-8")

	read.names = names  # type: ignore[attr-defined]
	yield read
	tar.close()


@pytest.fixture
def fake_send():
	"""A maker of fake ``send`` functions for the composed Google tools (no HTTP).

	``sent, send = fake_send({"getEvent": [reply, ...]})``: ``send`` answers each handle's
	replies in turn, and ``sent`` records each call as ``(handle, input)``.
	"""

	def fake(replies: dict[str, list[Any]]) -> tuple[list[tuple[str, dict[str, Any]]], Any]:
		sent: list[tuple[str, dict[str, Any]]] = []

		async def send(handle: str, input: dict[str, Any]) -> Any:
			sent.append((handle, input))
			return replies[handle].pop(0)

		return sent, send

	return fake
