"""FileSystem against a hostile tree: symlink swaps, hard links, FIFOs, sockets, OS errors."""

import ctypes
import ctypes.util
import os
import socket
import stat
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openmolt_core.errors import ToolError
from openmolt_core.files import FileStore
from openmolt_core.integrations._sandbox import Sandbox
from openmolt_core.integrations.filesystem import file_system_integration
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio

SECRET = "OUTSIDE-SECRET-CONTENT"
RENAME_EXCHANGE = 2


def _renameat2() -> Any:
	libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
	func = getattr(libc, "renameat2", None)
	if func is None:
		pytest.skip("renameat2 is not available")
	func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
	return func


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
	root = tmp_path / "root"
	outside = tmp_path / "outside"
	(root / "dir").mkdir(parents=True)
	outside.mkdir()
	(root / "dir" / "f.txt").write_text("inside")
	(outside / "f.txt").write_text(SECRET)
	return root, outside


def tools(root: Path) -> dict[str, Any]:
	return {t.handle: t for t in file_system_integration(root).tools}


async def call(t: dict[str, Any], handle: str, **input: Any) -> Any:
	with anyio.fail_after(10):  # nothing may block
		return await t[handle].execute(input, ToolContext(agent="a", integration="fileSystem"))


def outside_state(outside: Path) -> dict[str, bytes]:
	return {str(p.relative_to(outside)): p.read_bytes() for p in outside.rglob("*") if p.is_file()}


async def test_a_concurrent_symlink_swap_never_leads_outside(tree: tuple[Path, Path]) -> None:
	"""An atomic dir/symlink exchange loop (renameat2) during reads and writes never escapes."""
	root, outside = tree
	os.symlink(outside, root / "swap")
	exchange = _renameat2()
	before = outside_state(outside)
	stop = threading.Event()
	swaps = [0]

	def swapper() -> None:
		a, b = str(root / "dir").encode(), str(root / "swap").encode()
		while not stop.is_set():
			if exchange(-100, a, -100, b, RENAME_EXCHANGE) == 0:  # AT_FDCWD
				swaps[0] += 1

	t = tools(root)
	thread = threading.Thread(target=swapper, daemon=True)
	thread.start()
	leaks: list[str] = []
	calls = 0
	deadline = time.monotonic() + 3.0
	try:
		while time.monotonic() < deadline:
			calls += 1
			for handle, args in (
				("read", {"path": "dir/f.txt"}),
				("write", {"path": "dir/w.txt", "content": "written"}),
				("append", {"path": "dir/f.txt", "content": "+"}),
				("copy", {"source": "dir/f.txt", "destination": "copied.txt", "overwrite": True}),
				("search", {"query": "OUTSIDE", "path": "dir"}),
				("list", {"path": "dir"}),
			):
				try:
					out = await call(t, handle, **args)
				except ToolError:
					continue
				if SECRET in repr(out):
					leaks.append(handle)
	finally:
		stop.set()
		thread.join()
	assert swaps[0] > 100 and calls > 50
	assert leaks == []
	assert outside_state(outside) == before
	if (root / "copied.txt").exists():
		assert SECRET not in (root / "copied.txt").read_text()


async def test_hard_links_are_not_read_appended_copied_or_searched(
	tree: tuple[Path, Path], tmp_path: Path
) -> None:
	"""A hard link to an outside file shows nothing and changes nothing outside."""
	root, outside = tree
	os.link(outside / "f.txt", root / "hard.txt")
	t = tools(root)
	for handle, args in (
		("read", {"path": "hard.txt"}),
		("append", {"path": "hard.txt", "content": "x"}),
		("copy", {"source": "hard.txt", "destination": "c.txt"}),
	):
		with pytest.raises(ToolError, match="hard link"):
			await call(t, handle, **args)
	assert (await call(t, "search", query="OUTSIDE")) == {"matches": []}
	store = FileStore(tmp_path / "store", file_system=Sandbox([root]).file)
	with pytest.raises(ToolError, match="hard link"):
		await store.open("fileSystem:hard.txt")
	assert (outside / "f.txt").read_text() == SECRET
	# A write replaces the name: the outside file keeps its content.
	await call(t, "write", path="hard.txt", content="mine")
	assert (root / "hard.txt").read_text() == "mine" and (outside / "f.txt").read_text() == SECRET


def _special_files(root: Path) -> list[str]:
	os.mkfifo(root / "pipe")
	sock = socket.socket(socket.AF_UNIX)
	sock.bind(str(root / "sock"))
	sock.close()
	names = ["pipe", "sock"]
	try:
		os.mknod(root / "dev", 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null
		names.append("dev")
	except (PermissionError, OSError):
		pass
	return names


async def test_fifos_sockets_and_devices_are_refused_without_blocking(
	tree: tuple[Path, Path], tmp_path: Path
) -> None:
	"""read, write, append, copy and fileSystem: refuse non-regular files; search skips them."""
	root, _ = tree
	names = _special_files(root)
	t = tools(root)
	store = FileStore(tmp_path / "store", file_system=Sandbox([root]).file)
	for name in names:
		for handle, args in (
			("read", {"path": name}),
			("append", {"path": name, "content": "x"}),
			("write", {"path": name, "content": "x"}),
			("copy", {"source": name, "destination": f"{name}.copy"}),
		):
			with pytest.raises(ToolError, match="not a regular file"):
				await call(t, handle, **args)
		with anyio.fail_after(10), pytest.raises(ToolError, match="not a regular file"):
			await store.open(f"fileSystem:{name}")
		assert (await call(t, "stat", path=name))["type"] in ("FIFO", "socket", "character device")
	(root / "dir" / "hit.txt").write_text("needle")
	assert (await call(t, "search", query="needle"))["matches"] == [
		{"path": "dir/hit.txt", "line": 1, "text": "needle"}
	]
	os.mkfifo(root / "dir" / "inner-pipe")
	with pytest.raises(ToolError, match="not a regular file"):
		await call(t, "copy", source="dir", destination="dir-copy")
	kinds = {e["path"]: e["type"] for e in (await call(t, "list"))["entries"]}
	assert kinds["pipe"] == "FIFO" and kinds["sock"] == "socket"


async def test_append_to_a_fifo_with_a_reader_is_refused(tree: tuple[Path, Path]) -> None:
	"""Even when a reader holds the FIFO open (so opening it would succeed), nothing is written."""
	root, _ = tree
	os.mkfifo(root / "pipe")
	reader = os.open(root / "pipe", os.O_RDONLY | os.O_NONBLOCK)
	try:
		with pytest.raises(ToolError, match="not a regular file"):
			await call(tools(root), "append", path="pipe", content="x")
		assert os.read(reader, 10) == b""  # nothing was written
	finally:
		os.close(reader)


@pytest.mark.parametrize(
	("handle", "args", "message"),
	[
		("read", {"path": "n" * 300}, "too long"),
		("write", {"path": "d/" + "n" * 300, "content": "x"}, "too long"),
		("mkdir", {"path": "dir/f.txt"}, "not a directory"),
		("read", {"path": "loop"}, "symlinks"),
		("write", {"path": "dir/f.txt/x", "content": "x"}, "not a directory"),
		("read", {"path": "missing/x.txt"}, "no directory"),
		("delete", {"path": "missing"}, "nothing at"),
		("move", {"source": "dir", "destination": "dir/sub"}, "inside"),
	],
)
async def test_os_errors_name_the_path_as_given_never_the_root(
	tree: tuple[Path, Path], handle: str, args: dict[str, Any], message: str
) -> None:
	"""Name too long, file where a directory should be, symlink loops: tool errors, no host paths."""
	root, _ = tree
	os.symlink("loop2", root / "loop")
	os.symlink("loop", root / "loop2")
	with pytest.raises(ToolError, match=message) as info:
		await call(tools(root), handle, **args)
	assert str(root) not in info.value.message and str(root.parent) not in info.value.message


OPS = st.sampled_from(
	["read", "write", "append", "list", "stat", "mkdir", "delete", "copy", "move", "search"]
)
NAMES = st.sampled_from(
	[
		"dir",
		"dir/f.txt",
		"pipe",
		"sock",
		"hard.txt",
		"loop",
		"link_out",
		"link_in",
		"new/x.txt",
		"n" * 260,
		".",
	]
)


@settings(
	max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=st.lists(st.tuples(OPS, NAMES, NAMES), min_size=1, max_size=6))
async def test_any_sequence_of_operations_fails_only_with_tool_errors(
	tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, str, str]]
) -> None:
	"""Whatever the model does in a hostile tree: results or ToolErrors, no host path, no escape."""
	base = tmp_path_factory.mktemp("hostile")
	root, outside = base / "root", base / "outside"
	(root / "dir").mkdir(parents=True)
	outside.mkdir()
	(root / "dir" / "f.txt").write_text("inside")
	(outside / "f.txt").write_text(SECRET)
	os.mkfifo(root / "pipe")
	sock = socket.socket(socket.AF_UNIX)
	sock.bind(str(root / "sock"))
	sock.close()
	os.link(outside / "f.txt", root / "hard.txt")
	os.symlink("loop", root / "loop")
	os.symlink(outside, root / "link_out")
	os.symlink("dir", root / "link_in")
	before = outside_state(outside)
	t = tools(root)
	for handle, a, b in ops:
		args: dict[str, Any] = {
			"read": {"path": a},
			"write": {"path": a, "content": "w"},
			"append": {"path": a, "content": "a"},
			"list": {"path": a, "recursive": True},
			"stat": {"path": a},
			"mkdir": {"path": a},
			"delete": {"path": a, "recursive": True},
			"copy": {"source": a, "destination": b, "overwrite": True},
			"move": {"source": a, "destination": b, "overwrite": True},
			"search": {"query": "OUTSIDE", "path": a},
		}[handle]
		try:
			out = await call(t, handle, **args)
		except ToolError as exc:
			assert str(base) not in exc.message
			continue
		assert SECRET not in repr(out)
	assert outside_state(outside) == before


async def test_a_nested_directory_swapped_for_a_symlink_is_not_followed(tmp_path: Path) -> None:
	"""A directory inside another, replaced by a link leading out, is refused, never followed."""
	data, outside = tmp_path / "data", tmp_path / "outside"
	(data / "docs" / "a").mkdir(parents=True)
	outside.mkdir()
	(outside / "f.txt").write_text(SECRET)
	os.symlink("..", data / "docs" / "a" / "up")  # an ordinary relative link, leading inside
	t = {t.handle: t for t in file_system_integration([data, data / "docs"]).tools}
	await call(t, "move", source="docs/a/up", destination="up")  # now it leads out of data
	await call(t, "move", source="docs", destination="docs-old")
	await call(t, "move", source="up", destination="docs")  # the second directory is that link
	before = outside_state(outside)
	for handle, extra in (("read", {}), ("write", {"content": "x"}), ("stat", {})):
		with pytest.raises(ToolError, match="replaced"):
			await call(t, handle, path=str(data / "docs" / "outside" / "f.txt"), **extra)
	with pytest.raises(ToolError, match="replaced"):
		await call(t, "list", path=str(data / "docs"))
	assert outside_state(outside) == before
