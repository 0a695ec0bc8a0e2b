"""A file store made without a folder makes exactly one, however many saves race to make it."""

from __future__ import annotations

import tempfile
import time
from typing import Any

import anyio
import pytest

from openmolt_core import filestore
from openmolt_core.files import FileStore

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("view", [False, True])
async def test_concurrent_first_saves_share_one_folder(monkeypatch: Any, view: bool) -> None:
	"""Two saves at once used to make two temporary folders; the first file was then lost.

	A slow ``mkdtemp`` widens the window so the race is certain without the lock.
	"""
	real = tempfile.mkdtemp
	made: list[str] = []

	def slow_mkdtemp(*args: Any, **kwargs: Any) -> str:
		time.sleep(0.05)
		made.append(real(*args, **kwargs))
		return made[-1]

	monkeypatch.setattr(filestore.tempfile, "mkdtemp", slow_mkdtemp)
	store = FileStore()
	target = store.for_agent(allow_file_system=False) if view else store
	saved: list[dict[str, Any]] = []

	async def save(n: int) -> None:
		saved.append(await target.save(f"file {n}".encode(), media_type="text/plain"))

	try:
		async with anyio.create_task_group() as group:
			for n in range(4):
				group.start_soon(save, n)
		assert len(made) == 1, made
		for entry in saved:
			assert target.read(entry["file"]).data.startswith(b"file ")
	finally:
		store.close()
