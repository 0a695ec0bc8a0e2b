"""Every loader of a path a user gives refuses, at once and by name, what is no regular file or too large.

``/dev/zero`` never ends, a named pipe blocks until something writes to it, a folder is no file,
and a file past the loader's limit is refused before it is read (they read forever, blocked, or
read the whole file). Each test has its own timeout, and reads are bounded in memory: a
regression fails here instead of hanging the run or taking the machine's memory.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import socket
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from openmolt_core.errors import ConfigurationError

pytestmark = pytest.mark.timeout(30)  # a loader that blocks on a pipe fails here, not hangs

QUICK = 10.0
"""Seconds a refusal may take (it reads nothing: a few milliseconds, on a loaded machine more)."""


@dataclass(frozen=True)
class Loader:
	"""One loader of a user's path: how a test calls it, and how its error names the option."""

	id: str
	read: Callable[[Path, pytest.MonkeyPatch], Any]
	names: str  # a regular expression: the option or field the error names
	limit: int
	suffix: str = ""  # what the loader reads the file's kind from (agent.json, tools.py)
	quiet: Any = ConfigurationError  # a peek returns this value instead (the full load says why)


def _json_agent(path: Path, _: pytest.MonkeyPatch) -> Any:
	from openmolt_core.cli._agentfile import load_json_file

	return load_json_file(path)


def _run_agent_file(path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
	from openmolt_core.agentfile import load

	monkeypatch.chdir(path.parent)  # no .env of the repository's is read
	return load(str(path), env_file=None, verbose=False)


def _python_agent(path: Path, _: pytest.MonkeyPatch) -> Any:
	from openmolt_core.cli._agentfile import load_python_file

	return load_python_file(path)


def _tool_file(path: Path, _: pytest.MonkeyPatch) -> Any:
	from openmolt_core.cli._run import _tool_file

	return _tool_file(f"{path}:add", path)


def _dotenv(path: Path, _: pytest.MonkeyPatch) -> Any:
	from openmolt_core.cli._keys import read_dotenv

	return read_dotenv(path)


def _key_store(path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
	from openmolt_core.cli import _keystore

	monkeypatch.setenv("OPENMOLT_KEYS_FILE", str(path))
	return _keystore.load()


def _credential_store(path: Path, _: pytest.MonkeyPatch) -> Any:
	from cryptography.fernet import Fernet

	from openmolt_core.credstore import EncryptedFileStore

	return EncryptedFileStore(path, key=Fernet.generate_key()).check()


def _instructions(path: Path, _: pytest.MonkeyPatch) -> Any:
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel

	om = OpenMolt(entry_points=False)
	return om.create_agent(name="A", model=ScriptedModel([]), instructions_path=path)


def _dataset(path: Path, _: pytest.MonkeyPatch) -> Any:
	from openmolt_evals import Dataset

	return Dataset.load(path)


def _compare(path: Path, _: pytest.MonkeyPatch) -> Any:
	from openmolt_evals.commands import _earlier

	return _earlier(str(path))


def _openapi(path: Path, _: pytest.MonkeyPatch) -> Any:
	from openmolt_core.integrations.openapi import from_openapi

	return from_openapi(path, id="t")


def _agent_file_openapi(path: Path, _: pytest.MonkeyPatch) -> Any:
	from openmolt import OpenMolt
	from openmolt_core.cli._openapi_sources import register_openapi

	om = OpenMolt(entry_points=False)
	return register_openapi(om, path.parent / "agent.json", {"t": path.name}, set())


def _skill(path: Path, _: pytest.MonkeyPatch) -> Any:
	from openmolt_core.skills import load_skills

	return load_skills([path.parent])


def _peek_tool_source(path: Path, _: pytest.MonkeyPatch) -> Any:
	from openmolt_core.cli._agentfile import is_tool_source

	return is_tool_source(path)


def _peek_provider_key(path: Path, _: pytest.MonkeyPatch) -> Any:
	from openmolt_core.cli._early import missing_provider_key

	return missing_provider_key(str(path), None)


def _peek_plugin_record(path: Path, _: pytest.MonkeyPatch) -> Any:
	from openmolt_core.cli._ecosystem import _read_record

	return _read_record(path)


def _peek_project(path: Path, _: pytest.MonkeyPatch) -> Any:
	from openmolt_core._hints import _project_text

	return _project_text(path)


def _limits() -> dict[str, int]:
	from openmolt_core import credstore
	from openmolt_core.assembly import MAX_INSTRUCTIONS_BYTES
	from openmolt_core.cli._agentfile import _MAX_PEEK, MAX_AGENT_FILE_BYTES
	from openmolt_core.cli._keys import MAX_DOTENV_BYTES
	from openmolt_core.cli._keystore import MAX_STORE_BYTES
	from openmolt_core.integrations._openapi_load import MAX_DOCUMENT_BYTES
	from openmolt_core.skills import MAX_SKILL_MD_BYTES
	from openmolt_evals import MAX_FILE_BYTES

	return {
		"agent": MAX_AGENT_FILE_BYTES,
		"peek": _MAX_PEEK,
		"dotenv": MAX_DOTENV_BYTES,
		"keys": MAX_STORE_BYTES,
		"credentials": credstore.MAX_STORE_BYTES,
		"instructions": MAX_INSTRUCTIONS_BYTES,
		"openapi": MAX_DOCUMENT_BYTES,
		"skill": MAX_SKILL_MD_BYTES,
		"evals": MAX_FILE_BYTES,
	}


LIMITS = _limits()

LOADERS = [
	Loader(
		"agent file (JSON)", _json_agent, r"cannot read the agent file", LIMITS["agent"], ".json"
	),
	Loader("openmolt run agent.json", _run_agent_file, r"the agent file", LIMITS["agent"], ".json"),
	Loader(
		"agent file (Python)", _python_agent, r"cannot read the agent file", LIMITS["agent"], ".py"
	),
	Loader(
		"--tool tools.py:add", _tool_file, r"--tool '.*:add': cannot read", LIMITS["agent"], ".py"
	),
	Loader("--env-file", _dotenv, r"the \.env file", LIMITS["dotenv"]),
	Loader("key store", _key_store, r"cannot read the key store", LIMITS["keys"]),
	Loader("credential store", _credential_store, r"the credential store", LIMITS["credentials"]),
	Loader("instructions_path", _instructions, r"instructions_path", LIMITS["instructions"]),
	Loader("eval dataset", _dataset, r"^dataset '", LIMITS["evals"], ".json"),
	Loader("--compare report", _compare, r"^--compare '", LIMITS["evals"], ".json"),
	Loader(
		"OpenAPI document",
		_openapi,
		r"cannot read the OpenAPI document",
		LIMITS["openapi"],
		".json",
	),
	Loader(
		"OpenAPI YAML", _openapi, r"cannot read the OpenAPI document", LIMITS["openapi"], ".yaml"
	),
	Loader(
		"agent file openapi",
		_agent_file_openapi,
		r"openapi\.t: cannot read",
		LIMITS["openapi"],
		".json",
	),
	Loader("skill's SKILL.md", _skill, r"SKILL\.md", LIMITS["skill"], "SKILL.md"),
	# Peeks that stay quiet: they return at once, and the full load says what is wrong.
	Loader("tool source peek", _peek_tool_source, "", LIMITS["peek"], ".json", quiet=False),
	Loader("early key check", _peek_provider_key, "", LIMITS["agent"], ".json", quiet=None),
	Loader("plugin record", _peek_plugin_record, "", 1 << 20, ".json", quiet={}),
	Loader("uv project hint", _peek_project, "", 1 << 20, ".toml", quiet=""),
]

KINDS = {
	"/dev/zero": r"character device|must be a regular file",
	"fifo": r"named pipe \(FIFO\)|is a FIFO",
	"folder": r"folder|directory",
	"too large": r"more than|too large",
}
"""What each kind of path is, as the error says it."""


@pytest.fixture(autouse=True)
def _memory_bound() -> Iterator[None]:
	"""A regression that reads /dev/zero whole gets a MemoryError within 2 GiB, not the machine's memory."""
	if not sys.platform.startswith("linux"):
		yield
		return
	soft, hard = resource.getrlimit(resource.RLIMIT_AS)
	with open("/proc/self/statm") as statm:
		now = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
	bound = now + (2 << 30)
	if hard != resource.RLIM_INFINITY:
		bound = min(bound, hard)
	resource.setrlimit(resource.RLIMIT_AS, (bound, hard))
	try:
		yield
	finally:
		resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@pytest.fixture
def fifos() -> Iterator[list[Path]]:
	"""Named pipes a test made: a reader a regression left blocked on one is let go at the end."""
	made: list[Path] = []
	yield made
	for fifo in made:
		try:
			fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # a blocked reader's open returns
		except OSError:
			continue  # nobody reads it
		os.close(fd)


def _make(kind: str, path: Path, limit: int, fifos: list[Path]) -> Path:
	"""Put a path of the kind at ``path`` (/dev/zero as a link, for the name a loader reads)."""
	path.parent.mkdir(parents=True, exist_ok=True)
	if kind == "/dev/zero":
		path.symlink_to("/dev/zero")
	elif kind == "fifo":
		os.mkfifo(path)
		fifos.append(path)
	elif kind == "folder":
		path.mkdir()
	else:
		with path.open("wb") as out:
			out.truncate(limit + 1)  # sparse: no disk, and nothing read unless a loader reads it
	return path


def _place(loader: Loader, tmp_path: Path) -> Path:
	if loader.suffix == "SKILL.md":
		return tmp_path / "skill" / "SKILL.md"
	return tmp_path / "given" / f"file{loader.suffix}"


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("loader", LOADERS, ids=[loader.id for loader in LOADERS])
def test_a_loader_refuses_what_is_no_regular_file_or_too_large_at_once(
	loader: Loader, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fifos: list[Path]
) -> None:
	"""/dev/zero, a named pipe, a folder or a file over the limit: a clear error naming the
	option and the path, quickly (they read forever, blocked, or read the whole file)."""
	path = _make(kind, _place(loader, tmp_path), loader.limit, fifos)
	began = time.monotonic()
	if loader.quiet is not ConfigurationError:
		assert loader.read(path, monkeypatch) == loader.quiet
	else:
		with pytest.raises(ConfigurationError) as caught:
			loader.read(path, monkeypatch)
		message = str(caught.value)
		assert re.search(loader.names, message, flags=re.M), message
		shown = "SKILL.md" if loader.suffix == "SKILL.md" else path.name
		assert shown in message, message
		assert re.search(KINDS[kind], message), message
	assert time.monotonic() - began < QUICK


def test_dev_zero_itself_is_refused_where_a_path_is_given() -> None:
	"""The device itself, not a link to it: ``--env-file /dev/zero`` and a dataset at /dev/zero."""
	from openmolt_core.cli._keys import default_dotenv, read_dotenv
	from openmolt_evals import Dataset

	with pytest.raises(ConfigurationError, match=r"--env-file /dev/zero: it is a character device"):
		default_dotenv("/dev/zero")
	with pytest.raises(ConfigurationError, match=r"'/dev/zero' cannot be read: it is a character"):
		read_dotenv(Path("/dev/zero"))
	with pytest.raises(ConfigurationError, match=r"dataset '/dev/zero': cannot be read: it is a"):
		Dataset.load("/dev/zero")


def test_a_file_that_grows_past_its_stated_size_is_read_no_further_than_the_limit(
	tmp_path: Path,
) -> None:
	"""A regular file whose size says 0 (as /proc's do) is still read no further than the limit."""
	from openmolt_core._support.paths import FileRefused, read_file

	with pytest.raises(FileRefused, match=r"holds more than the 4\.0 KiB read"):
		read_file("/proc/self/maps", limit=4096)  # regular, size 0, longer than 4 KiB
	small = tmp_path / "small.txt"
	small.write_bytes(b"x" * 4096)
	assert read_file(small, limit=4096) == b"x" * 4096  # the limit itself is read


def test_text_is_read_as_path_read_text_reads_it(tmp_path: Path) -> None:
	"""Line ends become ``\\n`` and a BOM goes with utf-8-sig, as Path.read_text did."""
	from openmolt_core._support.paths import read_text

	file = tmp_path / "a.txt"
	file.write_bytes(b"\xef\xbb\xbfa\r\nb\rc\n")
	assert read_text(file, limit=100, encoding="utf-8-sig") == file.read_text("utf-8-sig")


def _short_folder() -> Path:
	"""A folder with a short path: a socket's path holds at most about 100 bytes."""
	return Path(tempfile.mkdtemp(prefix="om-", dir="/tmp"))


def _run_store(path: Path) -> Any:
	from openmolt_core.runstore import RunStore

	return RunStore(path).check()


def _session_store(path: Path) -> Any:
	from openmolt_core.sessions import SQLiteSession

	return SQLiteSession("s", path)._connect()


def _history(path: Path) -> Any:
	from openmolt_core._history import SqliteHistory

	return SqliteHistory(path)._connect()


def _ledger(path: Path) -> Any:
	from openmolt_core.approvals import SQLiteLedger

	return SQLiteLedger(path)._claim("call", "approve")


def _serve_store(path: Path) -> Any:
	from openmolt_serve._sqlite import SqliteFile

	with SqliteFile(path, "").transaction():
		pass


STORES = {
	"run store": _run_store,
	"session store": _session_store,
	"schedule history": _history,
	"approval ledger": _ledger,
	"serve's store": _serve_store,
}


@pytest.mark.parametrize("kind", ["fifo", "folder", "socket"])
@pytest.mark.parametrize("store", list(STORES))
def test_a_store_refuses_a_path_that_is_no_regular_file_before_changing_its_mode(
	store: str, kind: str, fifos: list[Path]
) -> None:
	"""A SQLite store at a pipe, a folder or a socket is refused, its mode left as it was (a
	store at /dev/null, run as root, made the device 0600 and left /dev/null-journal behind)."""
	folder = _short_folder()
	path = folder / "s"
	try:
		if kind == "socket":
			server = socket.socket(socket.AF_UNIX)
			server.bind(str(path))
		else:
			_make(kind, path, 0, fifos)
		os.chmod(path, 0o755)
		began = time.monotonic()
		with pytest.raises((OSError, ConfigurationError)) as caught:
			STORES[store](path)
		assert time.monotonic() - began < QUICK
		message = str(caught.value)
		assert str(path) in message, message
		assert re.search(r"named pipe|folder|socket", message), message
		assert stat.S_IMODE(os.stat(path).st_mode) == 0o755  # not narrowed: not a store's file
		assert not Path(f"{path}-journal").exists()
	finally:
		if kind == "socket":
			server.close()
		shutil.rmtree(folder)


def test_stdin_is_read_no_further_than_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
	"""``openmolt -m MODEL < /dev/zero`` is refused once past the limit (it read forever)."""
	from openmolt_core import cli

	with open("/dev/zero", encoding="utf-8") as zero:
		monkeypatch.setattr(sys, "stdin", zero)
		began = time.monotonic()
		with pytest.raises(ConfigurationError, match=r"stdin: more than 8 Mi characters"):
			cli._stdin_text()
		assert time.monotonic() - began < QUICK
