import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openmolt import OpenMolt
from openmolt_core.errors import ToolError
from openmolt_core.files import FileStore
from openmolt_core.integrations._sandbox import Sandbox, write_file
from openmolt_core.integrations.filesystem import file_system_integration
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
	root = tmp_path / "root"
	outside = tmp_path / "outside"
	(root / "sub").mkdir(parents=True)
	outside.mkdir()
	(outside / "secret.txt").write_text("top secret")
	(root / "sub" / "a.txt").write_text("hello world\nsecond line\n")
	os.symlink(outside, root / "link_out")
	os.symlink(outside / "secret.txt", root / "file_out")
	os.symlink(root / "sub", root / "link_in")
	return root, outside


def tools(root: Path, **kw: Any) -> dict[str, Any]:
	return {t.handle: t for t in file_system_integration(root, **kw).tools}


async def call(t: dict[str, Any], handle: str, files: FileStore | None = None, **input: Any) -> Any:
	return await t[handle].execute(
		input, ToolContext(agent="a", integration="fileSystem", files=files)
	)


async def test_read_write_append_stat_list_search(tree: tuple[Path, Path]) -> None:
	"""The basic tools work inside the directory."""
	root, _ = tree
	t = tools(root)
	assert (await call(t, "write", path="new/dir/b.txt", content="abc"))["size"] == 3
	await call(t, "append", path="new/dir/b.txt", content="def")
	assert (root / "new/dir/b.txt").read_text() == "abcdef"
	assert (await call(t, "read", path="new/dir/b.txt"))["content"] == "abcdef"
	part = await call(t, "read", path="sub/a.txt", offset=6, limit=5)
	assert part["content"] == "world" and part["truncated"] and part["nextOffset"] == 11
	assert (await call(t, "stat", path="sub/a.txt"))["type"] == "file"
	flat = await call(t, "list", path="sub")
	assert flat == {"entries": [{"path": "sub/a.txt", "type": "file", "size": 24}]}
	deep = await call(t, "list", recursive=True)
	paths = [e["path"] for e in deep["entries"]]
	assert "new/dir/b.txt" in paths and "link_out" in paths
	assert not any(p.startswith("link_out/") for p in paths)
	found = await call(t, "search", query="SECOND")
	assert found == {"matches": [{"path": "sub/a.txt", "line": 2, "text": "second line"}]}


async def test_mkdir_move_copy_delete(tree: tuple[Path, Path]) -> None:
	"""mkdir, move, copy and delete work, refuse overwriting and deleting the root."""
	root, outside = tree
	t = tools(root)
	await call(t, "mkdir", path="x/y")
	await call(t, "copy", source="sub/a.txt", destination="x/y/c.txt")
	with pytest.raises(ToolError, match="exists"):
		await call(t, "move", source="sub/a.txt", destination="x/y/c.txt")
	await call(t, "move", source="x/y/c.txt", destination="x/d.txt")
	assert (root / "x/d.txt").read_text().startswith("hello") and not (root / "x/y/c.txt").exists()
	with pytest.raises(ToolError, match="not empty"):
		await call(t, "delete", path="x")
	await call(t, "delete", path="x", recursive=True)
	assert not (root / "x").exists()
	await call(t, "delete", path="link_out")
	assert not (root / "link_out").exists() and (outside / "secret.txt").exists()
	with pytest.raises(ToolError, match="allowed directory"):
		await call(t, "delete", path=".", recursive=True)


@pytest.mark.parametrize(
	"path",
	[
		"../outside/secret.txt",
		"sub/../../outside/secret.txt",
		"link_out/secret.txt",
		"file_out",
		"/etc/passwd",
		"sub/%2e%2e/x",
		"a\x00b",
		"sub\\..\\x",
		"x\ny",
	],
)
async def test_escapes_are_refused(tree: tuple[Path, Path], path: str) -> None:
	"""'..', absolute paths elsewhere, symlinks out and odd encodings are refused."""
	root, _ = tree
	with pytest.raises(ToolError):
		await call(tools(root), "read", path=path)


async def test_new_file_under_a_symlinked_directory_cannot_escape(tree: tuple[Path, Path]) -> None:
	"""Writing a new file through a symlink to outside is refused; nothing is created outside."""
	root, outside = tree
	with pytest.raises(ToolError, match="outside"):
		await call(tools(root), "write", path="link_out/new.txt", content="x")
	assert not (outside / "new.txt").exists()
	with pytest.raises(ToolError, match="outside"):
		await call(tools(root), "write", path="link_out/deeper/new.txt", content="x")
	assert not (outside / "deeper").exists()


async def test_write_replaces_a_planted_symlink_instead_of_following_it(
	tree: tuple[Path, Path],
) -> None:
	"""The atomic rename replaces the name; the data never goes through a symlink planted there."""
	root, outside = tree
	box = Sandbox([root])
	with box.locate("sub/a.txt") as place:
		assert place.name == "a.txt"
		(root / "sub" / "a.txt").unlink()
		os.symlink(outside / "secret.txt", root / "sub" / "a.txt")  # planted after the check
		write_file(place.dir_fd, place.name, b"new", None)
	assert (outside / "secret.txt").read_text() == "top secret"
	assert not (root / "sub/a.txt").is_symlink() and (root / "sub/a.txt").read_bytes() == b"new"
	assert [p.name for p in (root / "sub").iterdir()] == ["a.txt"]  # no temporary file left


async def test_absolute_path_inside_and_several_roots(tmp_path: Path) -> None:
	"""An absolute path inside any of several directories is allowed."""
	a, b = tmp_path / "a", tmp_path / "b"
	a.mkdir()
	b.mkdir()
	(b / "f.txt").write_text("in b")
	t = tools([a, b])  # type: ignore[arg-type]
	assert (await call(t, "read", path=str(b / "f.txt")))["content"] == "in b"


async def test_read_only_and_binary_files(tree: tuple[Path, Path]) -> None:
	"""read_only offers only reading tools; a binary file reads as a file reference."""
	root, _ = tree
	assert sorted(tools(root, read_only=True)) == ["list", "read", "search", "stat"]
	(root / "img.png").write_bytes(b"\x89PNG\xff\xfe")
	out = await call(tools(root), "read", path="img.png")
	assert out == {
		"path": "img.png",
		"binary": True,
		"file": "fileSystem:img.png",
		"mediaType": "image/png",
		"size": 6,
	}


async def test_write_from_a_file_reference(tree: tuple[Path, Path], tmp_path: Path) -> None:
	"""write saves the bytes of an openmolt-file reference."""
	root, _ = tree
	store = FileStore(tmp_path / "store")
	ref = await store.save(b"\x00bytes", media_type="application/octet-stream")
	await call(tools(root), "write", files=store, path="dl/out.bin", file=ref["file"])
	assert (root / "dl/out.bin").read_bytes() == b"\x00bytes"


SEGMENTS = st.sampled_from(
	[
		"..",
		".",
		"",
		"sub",
		"a.txt",
		"link_out",
		"link_in",
		"file_out",
		"new",
		"%2e%2e",
		"..%2f",
		"\x00",
		"~",
		"secret.txt",
		"...",
	]
)


@settings(
	max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(parts=st.lists(SEGMENTS, max_size=6), absolute=st.booleans())
def test_generated_paths_never_escape(
	tree: tuple[Path, Path], parts: list[str], absolute: bool
) -> None:
	"""Whatever the path, it is refused or its directory descriptor is inside the root."""
	root, _ = tree
	box = Sandbox([root])
	real_root = Path(os.path.realpath(root))
	path = ("/" if absolute else "") + "/".join(parts)
	if absolute:
		path = str(root) + path if parts and parts[0] == "" else path
	for follow in (True, False):
		try:
			with box.locate(path, follow=follow) as place:
				held = Path(os.readlink(f"/proc/self/fd/{place.dir_fd}"))
		except ToolError:
			continue
		assert held == real_root or real_root in held.parents


async def test_registered_with_an_agent_and_usable_as_file_reference(
	tree: tuple[Path, Path],
) -> None:
	"""FileSystem works through an agent, and fileSystem: paths resolve in the file store."""
	root, _ = tree
	model = ScriptedModel(
		[call_tool("fileSystem.write", path="out/r.txt", content="report"), finish(result="ok")]
	)
	om = OpenMolt(entry_points=False)
	om.register_integration("fileSystem", OpenMolt.FileSystemIntegration(root))
	agent = om.create_agent(
		name="W", model=model, integrations=[{"integration": "fileSystem", "scopes": ["write"]}]
	)
	assert agent.tools == [
		"fileSystem.write",
		"fileSystem.append",
		"fileSystem.mkdir",
		"fileSystem.delete",
		"fileSystem.move",
		"fileSystem.copy",
	]
	await agent.run("go")
	assert (root / "out/r.txt").read_text() == "report"
	assert (await om.files.open("fileSystem:out/r.txt")).data == b"report"
	with pytest.raises(ToolError):
		await om.files.open("fileSystem:../outside/secret.txt")
	await om.aclose()
