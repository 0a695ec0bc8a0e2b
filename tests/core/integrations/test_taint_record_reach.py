"""An unreadable taint record marks what its FileSystems may have written, not the folders around.

A record that cannot be read fails closed: every place it may cover counts as written by a
tainted run. A record of this process's FileSystem covers that FileSystem's folders; a file
beside them (the agent file of the project the FileSystem's ``data/`` is in, ``/dev/zero`` when
the folder is on ``/dev/shm``) no FileSystem with that record could write, and was refused.
The default record stays read as covering every place: any process's FileSystem may keep it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.integrations._taintmarks import refuse_tainted, written_by_tainted
from openmolt_core.testing import ScriptedModel


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
	"""A project whose ``data/`` a FileSystem writes, with an unreadable record of its own."""
	monkeypatch.setenv("OPENMOLT_FILE_TAINT", str(tmp_path / "state" / "default-taint.json"))
	(tmp_path / "state").mkdir()
	record = tmp_path / "state" / "taint.json"
	record.write_text("garbage{")
	root = tmp_path / "project"
	(root / "data" / "notes").mkdir(parents=True)
	for name in ("agent.json", "data/agent.json", "data/notes/a.md"):
		(root / name).write_text("{}")
	om = OpenMolt(entry_points=False)
	om.register_integration(
		"fileSystem", OpenMolt.FileSystemIntegration(root / "data", taint_record=record)
	)
	om.create_agent(name="A", model=ScriptedModel([]), integrations=["fileSystem"])
	yield root.resolve()
	record.unlink()  # an unreadable record must not outlive the test (kept by the registry)


def test_a_file_beside_the_folders_is_not_marked(project: Path) -> None:
	"""The project's agent file and a file of another folder read as clean."""
	refuse_tainted(project / "agent.json", "the agent file")
	assert not written_by_tainted(project, [("agent.json",)])
	assert not written_by_tainted(project.parent, [("state", "default-taint.json")])
	assert not written_by_tainted(Path("/dev"), [("zero",)])


@pytest.mark.parametrize(
	"places",
	[
		[("data", "agent.json")],
		[("agent.json",), ("data", "notes", "a.md")],
		[("data",)],  # the folder itself (a listing's name)
		[("other", "..", "data", "x")],  # a '..' may lead in: counted as in
	],
)
def test_a_place_in_the_folders_is_marked(project: Path, places: list[tuple[str, ...]]) -> None:
	"""Inside the FileSystem's folders every place counts as marked (fail closed)."""
	assert written_by_tainted(project, places)


def test_the_refusal_names_the_unreadable_record(project: Path) -> None:
	"""A file in the folders is refused, saying the record cannot be read (not who wrote it)."""
	with pytest.raises(ConfigurationError, match=r"taint\.json' cannot be read"):
		refuse_tainted(project / "data" / "agent.json", "the agent file")


def test_an_unreadable_default_record_still_marks_every_place(
	project: Path, tmp_path: Path
) -> None:
	"""Any process's FileSystem may keep the default record: unreadable, it covers everything."""
	(tmp_path / "state" / "default-taint.json").write_text("garbage{")
	with pytest.raises(ConfigurationError, match=r"default-taint\.json' cannot be read"):
		refuse_tainted(project / "agent.json", "the agent file")
	assert written_by_tainted(Path("/dev"), [("zero",)])


def test_a_link_into_the_folders_is_followed(project: Path) -> None:
	"""A place beside the folders that links into them counts as in them."""
	(project / "link").symlink_to(project / "data", target_is_directory=True)
	assert written_by_tainted(project, [("link", "agent.json")])
	(project / "file-link.json").symlink_to(project / "data" / "agent.json")
	assert written_by_tainted(project, [("file-link.json",)])
