"""A file store reference names only a file the store kept, never another file of its folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openmolt_core.errors import ToolError
from openmolt_core.filestore import FileStore

pytestmark = pytest.mark.anyio


async def test_a_file_the_store_did_not_keep_is_an_unknown_reference(tmp_path: Path) -> None:
	"""A file of ``files_dir`` with a name like an id (a Dockerfile) is not read as one."""
	(tmp_path / "Dockerfile").write_text("FROM secret-base")
	outside = tmp_path.parent / f"{tmp_path.name}-outside"
	outside.mkdir()
	(outside / "key").write_text("OUTSIDE")
	os.symlink(outside / "key", tmp_path / "linked-key")
	store = FileStore(tmp_path)
	kept = await store.save(b"mine", media_type="text/plain")
	assert (await store.open(kept["file"])).data == b"mine"
	for ref in ("openmolt-file:Dockerfile", "openmolt-file:linked-key"):
		with pytest.raises(ToolError, match="unknown file reference"):
			await store.open(ref)
		with pytest.raises(ToolError, match="unknown file reference"):
			await store.info(ref)


async def test_a_kept_file_swapped_for_a_symlink_is_unknown(tmp_path: Path) -> None:
	"""A stored file replaced by a symlink (with its record) is not followed."""
	outside = tmp_path / "outside"
	outside.mkdir()
	(outside / "key").write_text("OUTSIDE")
	store = FileStore(tmp_path / "files")
	kept = await store.save(b"mine", media_type="text/plain")
	path = store.path_of(kept["file"])
	path.unlink()
	os.symlink(outside / "key", path)
	with pytest.raises(ToolError, match="unknown file reference"):
		await store.open(kept["file"])


def test_a_data_url_over_the_cap_is_refused_however_it_is_encoded() -> None:
	"""A percent-encoded data: URL larger than MAX_DATA_URL_BYTES decoded is refused too."""
	from openmolt_core.filestore import MAX_DATA_URL_BYTES, parse_data_url

	assert len(parse_data_url("data:text/plain,abc").data) == 3
	with pytest.raises(ToolError, match="larger than"):
		parse_data_url("data:text/plain," + "a" * (MAX_DATA_URL_BYTES + 1))
