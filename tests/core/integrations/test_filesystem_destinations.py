import os
import stat
from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt_core.errors import ToolError
from openmolt_core.integrations.filesystem import file_system_integration
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
	root = tmp_path / "root"
	outside = tmp_path / "outside"
	root.mkdir()
	outside.mkdir()
	(root / "a.txt").write_text("payload")
	(root / "d").mkdir()
	(root / "d" / "inner").mkdir()
	(root / "d" / "inner" / "x.txt").write_text("x")
	os.symlink(outside, root / "link")
	return root, outside


async def call(root: Path, handle: str, **input: Any) -> Any:
	tool = {t.handle: t for t in file_system_integration(root).tools}[handle]
	return await tool.execute(input, ToolContext(agent="a", integration="fileSystem"))


@pytest.mark.parametrize("handle", ["copy", "move"])
async def test_a_symlinked_directory_destination_is_never_written_through(
	tree: tuple[Path, Path], handle: str
) -> None:
	"""copy/move onto a symlink to an outside directory write nothing outside, even with overwrite."""
	root, outside = tree
	for overwrite in (False, True):
		with pytest.raises(ToolError, match="symlink"):
			await call(root, handle, source="a.txt", destination="link", overwrite=overwrite)
	assert list(outside.iterdir()) == []
	assert (root / "link").is_symlink() and (root / "a.txt").read_text() == "payload"


@pytest.mark.parametrize("handle", ["copy", "move"])
async def test_a_symlink_to_a_file_inside_is_replaced_not_followed(
	tree: tuple[Path, Path], handle: str
) -> None:
	"""A destination symlink needs overwrite=true, then the link itself is replaced."""
	root, _ = tree
	(root / "kept.txt").write_text("kept")
	os.symlink(root / "kept.txt", root / "alias")
	with pytest.raises(ToolError, match="symlink"):
		await call(root, handle, source="a.txt", destination="alias")
	await call(root, handle, source="a.txt", destination="alias", overwrite=True)
	assert not (root / "alias").is_symlink() and (root / "alias").read_text() == "payload"
	assert (root / "kept.txt").read_text() == "kept"


@pytest.mark.parametrize("handle", ["copy", "move"])
async def test_into_a_real_directory_checks_the_final_name(
	tree: tuple[Path, Path], handle: str
) -> None:
	"""A real directory destination means dir/<name>; a symlink planted there is not followed."""
	root, outside = tree
	(root / "box").mkdir()
	os.symlink(outside / "a.txt", root / "box" / "a.txt")
	with pytest.raises(ToolError, match="outside"):
		await call(root, handle, source="a.txt", destination="box", overwrite=True)
	assert not (outside / "a.txt").exists()
	(root / "box" / "a.txt").unlink()
	out = await call(root, handle, source="a.txt", destination="box")
	assert out["destination"] == "box/a.txt" and (root / "box" / "a.txt").read_text() == "payload"


async def test_merging_a_tree_does_not_follow_symlinks_in_the_destination(
	tree: tuple[Path, Path],
) -> None:
	"""copy of a directory merging into one holding symlinks replaces the links, writes nothing outside."""
	root, outside = tree
	dest = root / "dest" / "d"
	dest.mkdir(parents=True)
	os.symlink(outside, dest / "inner")
	(root / "kept.txt").write_text("kept")
	os.symlink(root / "kept.txt", dest / "top.txt")
	(root / "d" / "top.txt").write_text("new top")
	await call(root, "copy", source="d", destination="dest", overwrite=True)
	assert list(outside.iterdir()) == []
	assert not (dest / "inner").is_symlink() and (dest / "inner" / "x.txt").read_text() == "x"
	assert not (dest / "top.txt").is_symlink() and (dest / "top.txt").read_text() == "new top"
	assert (root / "kept.txt").read_text() == "kept"


async def test_copy_into_itself_is_refused(tree: tuple[Path, Path]) -> None:
	"""Copying a directory into itself is refused instead of recursing."""
	root, _ = tree
	with pytest.raises(ToolError, match="inside"):
		await call(root, "copy", source="d", destination="d/inner")


async def test_parallel_appends_keep_every_line(tree: tuple[Path, Path]) -> None:
	"""Twenty concurrent appends to one file keep all twenty lines."""
	root, _ = tree

	async def one(n: int) -> None:
		await call(root, "append", path="log.txt", content=f"line {n}\n")

	async with anyio.create_task_group() as group:
		for n in range(20):
			group.start_soon(one, n)
	lines = (root / "log.txt").read_text().splitlines()
	assert sorted(lines) == sorted(f"line {n}" for n in range(20))


async def test_new_files_honour_the_umask(tree: tuple[Path, Path]) -> None:
	"""write and append create files with 0o666 less the umask, not 0o600."""
	root, _ = tree
	old = os.umask(0o022)
	try:
		await call(root, "write", path="w.txt", content="w")
		await call(root, "append", path="ap.txt", content="a")
	finally:
		os.umask(old)
	assert stat.S_IMODE((root / "w.txt").stat().st_mode) == 0o644
	assert stat.S_IMODE((root / "ap.txt").stat().st_mode) == 0o644


async def test_append_refuses_a_symlink_planted_at_the_path(tree: tuple[Path, Path]) -> None:
	"""append never writes through a symlink leading outside; nothing is created there."""
	root, outside = tree
	os.symlink(outside / "s.txt", root / "planted")
	with pytest.raises(ToolError, match="outside"):
		await call(root, "append", path="planted", content="x")
	assert not (outside / "s.txt").exists()
