"""Skills: listed by name and description, loaded on demand, granting nothing."""

import ctypes
import ctypes.util
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt import ConfigurationError, OpenMolt
from openmolt_core.errors import ToolError
from openmolt_core.skills import (
	MAX_SKILL_CHARS,
	MAX_SKILL_MD_BYTES,
	Skill,
	load_skills,
	parse_skill,
	skill_tool,
)
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio

INVOICES = """---
name: invoices
description: How we check and pay supplier invoices.
allowed-tools: [local.pay, stripe.createRefund]
---
# Paying invoices

1. Check the VAT rate in vat-rates.csv.
2. Pay with local.pay.
"""


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
	root = tmp_path / "skills"
	(root / "invoices").mkdir(parents=True)
	(root / "invoices" / "SKILL.md").write_text(INVOICES)
	(root / "invoices" / "vat-rates.csv").write_text("country,rate\nNO,25\n")
	(root / "huge").mkdir()
	(root / "huge" / "SKILL.md").write_text(
		"---\nname: huge\ndescription: Too much to read.\n---\n" + "x" * (MAX_SKILL_CHARS + 10)
	)
	(tmp_path / "secret.txt").write_text("outside")
	(root / "invoices" / "escape").symlink_to(tmp_path / "secret.txt")
	return root


def pay(amount: int) -> str:
	"""Pay an amount."""
	return "paid"


def results(model: ScriptedModel, call: int) -> list[dict[str, Any]]:
	return json.loads(model.requests[call].messages[-1].content)["results"]


def test_skill_md_front_matter_is_read() -> None:
	"""name, description, allowed-tools and the body come from SKILL.md."""
	skill = parse_skill(INVOICES)
	assert skill.name == "invoices" and skill.description.startswith("How we check")
	assert skill.allowed_tools == ("local.pay", "stripe.createRefund")
	assert skill.instructions.startswith("# Paying invoices")


@pytest.mark.parametrize(
	("text", "message"),
	[
		("no front matter", "must start with front matter"),
		("---\nname: Bad Name\ndescription: x\n---\n", "lowercase letters"),
		("---\nname: ok\n---\nbody", "description must say"),
		("---\nname ok\ndescription: d\n---\n", "is not 'key: value'"),
	],
)
def test_malformed_skills_are_refused_with_the_fix(text: str, message: str) -> None:
	"""A bad SKILL.md is a ConfigurationError naming the problem."""
	with pytest.raises(ConfigurationError, match=message):
		parse_skill(text)


async def test_the_prompt_lists_skills_and_the_model_loads_one(skills_dir: Path) -> None:
	"""The first turn lists names and descriptions only; skills.load returns the body and files."""
	model = ScriptedModel(
		[
			call_tool("skills.load", name="invoices"),
			call_tool("skills.load", name="invoices", file="vat-rates.csv"),
			finish("ok"),
		]
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Clerk", model=model, tools=[pay], skills=[skills_dir])
	await agent.run("pay the invoice")
	first = json.loads(model.requests[0].messages[0].content)
	assert first["skills"] == [
		{"name": "huge", "description": "Too much to read."},
		{"name": "invoices", "description": "How we check and pay supplier invoices."},
	]
	assert "Paying invoices" not in model.requests[0].messages[0].content
	[loaded] = results(model, 1)
	assert loaded["result"]["instructions"].startswith("# Paying invoices")
	assert loaded["result"]["files"] == ["vat-rates.csv"]
	assert "stripe.createRefund" in loaded["result"]["unavailable"]
	assert "local.pay" not in loaded["result"]["unavailable"]
	[file] = results(model, 2)
	assert file["result"]["content"] == "country,rate\nNO,25\n"
	# the prefix stayed byte-identical: the load arrived as a result
	assert model.requests[2].messages[0].content == model.requests[0].messages[0].content


async def test_unknown_missing_escaping_and_huge_skills_are_errors_the_model_reads(
	skills_dir: Path,
) -> None:
	"""An unknown skill, a missing file, a file outside the skill and a huge skill are refused."""
	model = ScriptedModel(
		[
			call_tool("skills.load", name="invoice"),
			call_tool("skills.load", name="invoices", file="rates.csv"),
			call_tool("skills.load", name="invoices", file="../../secret.txt"),
			call_tool("skills.load", name="invoices", file="escape"),
			call_tool("skills.load", name="huge"),
			finish("ok"),
		]
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Clerk", model=model, skills=[skills_dir])
	await agent.run()
	unknown = results(model, 1)[0]["error"]
	assert "invalid input" in unknown and "'invoices'" in unknown
	assert "has no file 'rates.csv'" in results(model, 2)[0]["error"]
	assert "vat-rates.csv" in results(model, 2)[0]["error"]
	assert "give a path inside the skill" in results(model, 3)[0]["error"]
	assert "has no file 'escape'" in results(model, 4)[0]["error"]
	assert "too large to load" in results(model, 5)[0]["error"]
	assert "outside" not in json.dumps([r.messages[-1].content for r in model.requests])


def test_skills_from_code_and_duplicates() -> None:
	"""Skill objects and dicts work; two skills of one name are refused."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="A",
		model=ScriptedModel([]),
		skills=[Skill(name="tone", description="Write in our tone.", instructions="Be brief.")],
	)
	assert "skills.load" in agent.tools
	with pytest.raises(ConfigurationError, match="two skills are named 'tone'"):
		om.create_agent(
			name="B",
			model=ScriptedModel([]),
			skills=[{"name": "tone", "description": "a"}, {"name": "tone", "description": "b"}],
		)
	with pytest.raises(ConfigurationError, match="neither a skill folder"):
		om.create_agent(name="C", model=ScriptedModel([]), skills=["/no/such/folder"])


# -- the skill's folder is read through descriptors, like FileSystem's -------------------------

SECRET = "OUTSIDE-SECRET-CONTENT"
RENAME_EXCHANGE = 2


def loader(skills: list[Any]) -> Any:
	found = load_skills(skills)
	return skill_tool(found, available=[])


async def load(tool: Any, **input: Any) -> Any:
	with anyio.fail_after(10):
		return await tool.execute(input, ToolContext(agent="a", integration="skills"))


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
	"""A skill folder next to a folder it must never read."""
	root = tmp_path / "skills" / "invoices"
	(root / "refs").mkdir(parents=True)
	(root / "SKILL.md").write_text(INVOICES)
	(root / "refs" / "rates.csv").write_text("inside")
	outside = tmp_path / "outside"
	outside.mkdir()
	(outside / "rates.csv").write_text(SECRET)
	(outside / "SKILL.md").write_text(INVOICES.replace("# Paying", SECRET))
	return root, outside


async def test_a_hard_link_in_a_skill_folder_is_not_read(hostile: tuple[Path, Path]) -> None:
	"""Another name of the file may be outside: refused, and not listed."""
	root, outside = hostile
	os.link(outside / "rates.csv", root / "linked.csv")
	tool = loader([root])
	with pytest.raises(ToolError, match=r"has no file 'linked\.csv' it can read") as info:
		await load(tool, name="invoices", file="linked.csv")
	assert SECRET not in info.value.message
	listed = await load(tool, name="invoices")
	assert listed["files"] == ["refs/rates.csv"]
	assert (await load(tool, name="invoices", file="refs/rates.csv"))["content"] == "inside"


def test_a_hard_linked_or_escaping_skill_md_is_refused(hostile: tuple[Path, Path]) -> None:
	"""SKILL.md itself: a hard link or a symlink out of the folder is a ConfigurationError."""
	root, outside = hostile
	(root / "SKILL.md").unlink()
	os.link(outside / "SKILL.md", root / "SKILL.md")
	with pytest.raises(ConfigurationError, match="hard link") as info:
		load_skills([root])
	assert str(root) not in str(info.value) and SECRET not in str(info.value)
	(root / "SKILL.md").unlink()
	(root / "SKILL.md").symlink_to(outside / "SKILL.md")
	with pytest.raises(ConfigurationError, match="cannot be read") as info:
		load_skills([root])
	assert str(root) not in str(info.value) and SECRET not in str(info.value)


def test_a_plugin_skill_may_be_hard_linked(hostile: tuple[Path, Path]) -> None:
	"""Installers (uv) hard-link a package's files from their cache: plugins' skills read them."""
	root, _ = hostile
	os.link(root / "SKILL.md", root.parent / "cache-copy")
	[skill] = load_skills([root], hard_links=True)
	assert skill.instructions.startswith("# Paying invoices")


def _renameat2() -> Any:
	libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
	func = getattr(libc, "renameat2", None)
	if func is None:
		pytest.skip("renameat2 is not available")
	func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
	return func


_SWAPPER = """
import ctypes, ctypes.util, os, sys, time
libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
exchange = libc.renameat2
exchange.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
a, b, stop = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2]), sys.argv[3]
how, parent, until = int(sys.argv[4]), os.getppid(), time.monotonic() + 300
swaps = 0
print("swapping", flush=True)
while not os.path.exists(stop) and os.getppid() == parent and time.monotonic() < until:
	for _ in range(1000):
		swaps += exchange(-100, a, -100, b, how) == 0
print(swaps, flush=True)
"""
"""Exchanges two paths (renameat2) in a process of its own until a file exists (or the test's
process is gone, or 5 minutes passed: never left spinning); prints how many times it did."""

ROUNDS = 1500
"""Loads of each of the two paths while the swapper runs.

The swapper is a process of its own, so that it exchanges the folders while this one holds
the GIL: with the loader's folder walk opening directories without ``O_NOFOLLOW``, it read
outside after a median of 130 rounds (16 runs: at most 430, once 2,253). A thread of this
process, which swapped only when the loader let go of the GIL, took a median of 1,180 (6
runs: up to 1,762), and the test ran 3,000 rounds on each backend."""


def _swapper(a: Path, b: Path, stop: Path) -> subprocess.Popen[str]:
	"""Start `_SWAPPER` exchanging ``a`` and ``b`` until ``stop`` exists; return once it swaps."""
	args = [str(a), str(b), str(stop), str(RENAME_EXCHANGE)]
	swapper = subprocess.Popen(
		[sys.executable, "-c", _SWAPPER, *args], stdout=subprocess.PIPE, text=True
	)
	assert swapper.stdout is not None
	assert swapper.stdout.readline() == "swapping\n", swapper.communicate(timeout=30)
	return swapper


async def test_a_symlink_swap_race_never_reads_outside(
	hostile: tuple[Path, Path], tmp_path: Path
) -> None:
	"""A directory exchanged with a symlink to outside (renameat2) while loading: never outside."""
	root, outside = hostile
	os.symlink(outside, root / "swap")
	_renameat2()  # skips where there is no renameat2
	tool = loader([root])
	stop = tmp_path / "stop"
	swapper = _swapper(root / "refs", root / "swap", stop)
	read = 0
	try:
		for _ in range(ROUNDS):
			for file in ("refs/rates.csv", "swap/rates.csv"):
				try:
					out = await load(tool, name="invoices", file=file)
				except ToolError as exc:
					assert SECRET not in exc.message
					continue
				assert out["content"] == "inside", out
				read += 1
	finally:
		stop.touch()
		said, _ = swapper.communicate(timeout=30)
	assert int(said) > 100 and read > 0


async def test_the_skill_folder_swapped_after_loading_is_not_followed(
	hostile: tuple[Path, Path],
) -> None:
	"""The folder is pinned when loaded: replaced by a symlink to outside, it is refused."""
	root, outside = hostile
	tool = loader([root])
	os.rename(root, root.with_name("moved"))
	os.symlink(outside, root)
	(outside / "refs").mkdir()
	(outside / "refs" / "rates.csv").write_text(SECRET)
	with pytest.raises(ToolError) as info:
		await load(tool, name="invoices", file="refs/rates.csv")
	assert SECRET not in info.value.message and str(root) not in info.value.message


@pytest.mark.parametrize(
	("file", "message"),
	[
		("a\x00b", "control characters"),
		("refs/rates.csv\x00", "control characters"),
		("a\x85b", "control characters"),
		("n" * 300, "too long"),
		("refs/" + "n" * 256, "too long"),
		("\u00e9" * 200, "too long"),
		("p/" * 2100, "too long"),
		("/".join(["d"] * 65), "too deep"),
		("/etc/passwd", "give a path inside the skill"),
		("refs/../../../outside/rates.csv", "give a path inside the skill"),
	],
)
async def test_odd_file_names_are_clear_errors_without_host_paths(
	hostile: tuple[Path, Path], file: str, message: str
) -> None:
	"""NUL, control characters, names over NAME_MAX, paths over PATH_MAX or 64 levels."""
	root, _ = hostile
	tool = loader([root])
	with pytest.raises(ToolError, match=message) as info:
		await load(tool, name="invoices", file=file)
	assert str(root.parent.parent) not in info.value.message


@pytest.mark.parametrize("entry", ["a" * 300, "a\x00b", "x" * 5000])
def test_odd_skill_entries_are_configuration_errors(tmp_path: Path, entry: str) -> None:
	"""A folder name too long or with a NUL: a ConfigurationError, never OSError or ValueError."""
	for given in (entry, str(tmp_path / entry)):
		with pytest.raises(ConfigurationError) as info:
			load_skills([given], plugins=lambda name: None)
		assert str(tmp_path) not in str(info.value)


def test_a_huge_skill_md_is_refused_before_reading(hostile: tuple[Path, Path]) -> None:
	"""A 600 MB SKILL.md (sparse) is refused from its size, without reading it."""
	root, _ = hostile
	with open(root / "SKILL.md", "r+b") as f:
		f.truncate(600 * 1024 * 1024)
	tracemalloc.start()
	try:
		with pytest.raises(ConfigurationError, match=r"SKILL\.md is too large") as info:
			load_skills([root])
		peak = tracemalloc.get_traced_memory()[1]
	finally:
		tracemalloc.stop()
	assert peak < 4 * 1024 * 1024
	assert str(root) not in str(info.value)
	assert str(MAX_SKILL_MD_BYTES) in str(info.value)


async def test_a_huge_skill_file_is_refused_before_reading(hostile: tuple[Path, Path]) -> None:
	"""A 600 MB file of a skill is refused from its size, without reading it."""
	root, _ = hostile
	(root / "refs" / "big.bin").write_bytes(b"")
	os.truncate(root / "refs" / "big.bin", 600 * 1024 * 1024)  # sparse
	tool = loader([root])
	tracemalloc.start()
	try:
		with pytest.raises(ToolError, match="is too large") as info:
			await load(tool, name="invoices", file="refs/big.bin")
		peak = tracemalloc.get_traced_memory()[1]
	finally:
		tracemalloc.stop()
	assert peak < 4 * 1024 * 1024 and str(root) not in info.value.message


def test_skill_md_that_is_not_utf8_is_a_configuration_error(hostile: tuple[Path, Path]) -> None:
	"""A SKILL.md in another encoding says so, instead of a UnicodeDecodeError."""
	root, _ = hostile
	(root / "SKILL.md").write_bytes(INVOICES.encode() + b"\xff\xfe")
	with pytest.raises(ConfigurationError, match="not UTF-8"):
		load_skills([root])


async def test_special_files_and_symlinks_are_not_listed_or_read(
	hostile: tuple[Path, Path],
) -> None:
	"""A FIFO never blocks a load; symlinks (even inside) are not listed."""
	root, _ = hostile
	os.mkfifo(root / "pipe")
	(root / "inner").symlink_to(root / "refs" / "rates.csv")
	tool = loader([root])
	assert (await load(tool, name="invoices"))["files"] == ["refs/rates.csv"]
	with pytest.raises(ToolError, match="has no file 'pipe' it can read"):
		await load(tool, name="invoices", file="pipe")


async def test_a_plugin_skill_object_may_read_hard_linked_files(
	hostile: tuple[Path, Path],
) -> None:
	"""A Skill object a plugin registers reads its hard-linked files; one in code does not."""
	root, _ = hostile
	os.link(root / "refs" / "rates.csv", root.parent / "cache-copy")
	made = Skill(name="invoices", description="d", root=root)
	assert made.files() == []  # refs/rates.csv now has two links
	plugin = Skill(name="invoices", description="d", root=root)
	[found] = load_skills([plugin], hard_links=True)
	tool = skill_tool([found], available=[])
	assert (await load(tool, name="invoices", file="refs/rates.csv"))["content"] == "inside"


async def test_a_plugin_skill_given_as_a_dict_may_read_hard_linked_files(
	hostile: tuple[Path, Path],
) -> None:
	"""A plugin may register a skill's fields as a dict: its files are read as a Skill's are."""
	root, _ = hostile
	os.link(root / "refs" / "rates.csv", root.parent / "cache-copy")
	[found] = load_skills([{"name": "invoices", "description": "d", "root": root}], hard_links=True)
	assert found.files() == ["refs/rates.csv"]
	tool = skill_tool([found], available=[])
	assert (await load(tool, name="invoices", file="refs/rates.csv"))["content"] == "inside"


def test_a_symlinked_subfolder_is_not_a_skill(hostile: tuple[Path, Path]) -> None:
	"""In a folder of skills, a symlink to a folder elsewhere is not followed."""
	root, outside = hostile
	(outside / "SKILL.md").write_text(INVOICES.replace("invoices", "evil"))
	(root.parent / "evil").symlink_to(outside)
	assert [s.name for s in load_skills([root.parent])] == ["invoices"]


async def test_hidden_files_of_a_skill_folder_are_never_listed_or_read(skills_dir: Path) -> None:
	"""A .env (or a .git folder) beside SKILL.md is no part of the skill: its secret never
	reaches the model, whatever path the model asks for."""
	folder = skills_dir / "invoices"
	(folder / ".env").write_text("BANK_TOKEN=tok-live-0123456789abcdef\n")
	(folder / ".git").mkdir()
	(folder / ".git" / "config").write_text("[remote] url = https://user:pw-9876@host/x\n")
	(folder / "notes").mkdir()
	(folder / "notes" / ".draft.md").write_text("hidden draft")
	model = ScriptedModel(
		[
			call_tool("skills.load", name="invoices"),
			call_tool("skills.load", name="invoices", file=".env"),
			call_tool("skills.load", name="invoices", file=".git/config"),
			call_tool("skills.load", name="invoices", file="notes/.draft.md"),
			finish("ok"),
		]
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Clerk", model=model, tools=[pay], skills=[skills_dir])
	await agent.run("pay the invoice")
	[loaded] = results(model, 1)
	assert loaded["result"]["files"] == ["vat-rates.csv"]
	for call in (2, 3, 4):
		[refused] = results(model, call)
		assert refused["ok"] is False and "hidden file" in refused["error"], refused
	sent = json.dumps([m.content for r in model.requests for m in r.messages])
	assert "tok-live" not in sent and "pw-9876" not in sent and "hidden draft" not in sent


def test_a_hidden_folder_of_a_folder_of_skills_is_no_skill(skills_dir: Path) -> None:
	"""A hidden folder beside the skills (``.old-invoices``, a tool's ``.cache``) is not loaded,
	as a hidden file of a skill is not read."""
	hidden = skills_dir / ".old-invoices"
	hidden.mkdir()
	(hidden / "SKILL.md").write_text(INVOICES.replace("invoices", "stale"))
	names = [s.name for s in load_skills([skills_dir])]
	assert "stale" not in names and "invoices" in names


# -- front matter and fields of every shape -----------------------------------------------------


def test_a_skill_md_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
	"""A UTF-8 BOM (Windows editors write one) does not hide the front matter."""
	folder = tmp_path / "tone"
	folder.mkdir()
	(folder / "SKILL.md").write_bytes(
		"\ufeff---\r\nname: tone\r\ndescription: How we write.\r\n---\r\nBe brief.".encode()
	)
	[skill] = load_skills([folder])
	assert (skill.name, skill.description, skill.instructions) == (
		"tone",
		"How we write.",
		"Be brief.",
	)
	assert parse_skill("\ufeff" + INVOICES).name == "invoices"


@pytest.mark.parametrize(
	("text", "message"),
	[
		("---\n---\nbody", "skill name ''"),  # empty front matter: the field is missing
		("---\n---", "skill name ''"),
		("---\nname: [a, b]\ndescription: d\n---\n", "name must be text"),
		("---\nname: ok\ndescription: [a, b]\n---\n", "description must be text"),
		("---\nname: ok\ndescription:\n  - a\n  - b\n---\n", "description must be text"),
	],
)
def test_front_matter_fields_of_the_wrong_shape_are_refused(text: str, message: str) -> None:
	"""An empty front matter says what is missing; a list where text is due is refused."""
	with pytest.raises(ConfigurationError, match=r"SKILL\.md") as info:
		parse_skill(text)
	assert message in str(info.value)


@pytest.mark.parametrize(
	("fields", "message"),
	[
		({"name": 5, "description": "d"}, "name must be text"),
		({"name": "x", "description": 5}, "description must be text"),
		({"name": "x", "description": "d", "instructions": 5}, "instructions must be text"),
		({"name": "x", "description": "d", "allowed_tools": "a.b"}, "a list of tool handles"),
		({"name": "x", "description": "d", "allowed_tools": [1]}, "a list of tool handles"),
		({"name": "x", "description": "d", "root": 5}, "root must be a folder's path"),
	],
)
def test_skill_fields_of_the_wrong_type_are_refused_where_given(
	fields: dict[str, Any], message: str
) -> None:
	"""A Skill, or a dict of its fields, with a field of the wrong type names the field."""
	with pytest.raises(ConfigurationError) as info:
		load_skills([fields])
	assert message in str(info.value)


def test_a_dict_skill_takes_skill_md_spellings_and_lists(tmp_path: Path) -> None:
	"""A dict may spell allowed-tools as SKILL.md does; lists become tuples, a root a Path."""
	(tmp_path / "notes.txt").write_text("n")
	[skill] = load_skills(
		[
			{
				"name": "x",
				"description": "d",
				"allowed-tools": ["local.pay"],
				"root": str(tmp_path),
			}
		]
	)
	assert skill.allowed_tools == ("local.pay",) and skill.root == tmp_path
	assert skill.files() == ["notes.txt"]
	assert hash(skill) == hash(
		Skill(name="x", description="d", root=tmp_path, allowed_tools=("local.pay",))
	)


@pytest.mark.parametrize("indent", ["  ", ""])
def test_allowed_tools_as_a_block_list_are_read(indent: str) -> None:
	"""``allowed-tools:`` then ``- item`` lines is a list (its items were all dropped)."""
	text = (
		f"---\nname: x\ndescription: |\n  - a point\n  - another\nallowed-tools:\n"
		f"{indent}- local.pay\n{indent}- stripe\n---\n"
	)
	skill = parse_skill(text)
	assert skill.allowed_tools == ("local.pay", "stripe")
	assert skill.description == "- a point - another"  # a block of text keeps its dashes
