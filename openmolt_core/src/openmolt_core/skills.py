"""Skills: know-how an agent loads when it needs it, in the open Agent Skills format.

A skill is a folder with a ``SKILL.md``: front matter with ``name`` and ``description`` (and
optionally ``allowed-tools``, the tools the skill expects), then the instructions in Markdown; other
files of the folder (references, templates, scripts) are the skill's files.

```text
skills/
└── invoices/
    ├── SKILL.md         front matter (name: invoices, description: ...), then instructions
    └── vat-rates.csv    a file of the skill
```

An agent gets skills from folders (``create_agent(skills=["./skills"])``), from plugins (a bare
name, ``skills=["pdf-forms"]``: the ``openmolt.skills`` entry points, whose ``register_skills``
hook registers them), `Skill` objects, and agent files (``"skills": [...]``). The first turn lists only each skill's name and description; the model
calls the built-in tool ``skills.load`` to read a skill's instructions, or one of its files, and the
text arrives as that call's result, so the prompt's prefix never changes. Loading a skill grants
nothing: the tools it names still need the agent's integrations and scopes, and the result says
which of them the agent lacks.

A skill's files are read the way the FileSystem integration reads (one module both use,
`openmolt_core.integrations._sandbox`): walked from a descriptor of the skill's folder, taken
when it was loaded, component by component with ``O_NOFOLLOW``, so a symlink leads nowhere
outside the folder even when swapped while it is read; only regular files with one hard link
(another name may be outside the folder); the size from ``fstat`` before anything is read, and
the reading stops at the cap. Paths are capped like FileSystem's (`MAX_PATH_BYTES`,
`MAX_NAME_BYTES`, `MAX_DEPTH`, no control characters), ``SKILL.md`` at `MAX_SKILL_MD_BYTES`,
and errors name paths as given, never the host's absolute path. Hidden files and folders (a
name that starts with ``.``: a ``.env``, ``.git``) are no part of a skill: never listed, never
read; a hidden folder in a folder of skills is no skill. The listing visits at most
`MAX_SKILL_ENTRIES` entries of the folder.

Taint is not laundered through a skill's folder: what a run that had read untrusted content
wrote there through the FileSystem integration (its marks, `openmolt_core.integrations._taintmarks`)
loads ``untrusted`` (a file, or instructions listing a file whose name it chose), and a skill
whose ``SKILL.md`` it wrote is listed without its description.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openmolt_core.errors import ConfigurationError, ToolError
from openmolt_core.integrations._paths import (
	MAX_DEPTH,
	MAX_NAME_BYTES,
	MAX_PATH_BYTES,
	check_path,
)
from openmolt_core.integrations._sandbox import Sandbox, open_regular, os_error, read_capped

if TYPE_CHECKING:
	from openmolt_core.functiontools import FunctionTool
	from openmolt_core.tools import ToolContext

__all__ = [
	"MAX_DEPTH",
	"MAX_NAME_BYTES",
	"MAX_PATH_BYTES",
	"MAX_SKILL_CHARS",
	"MAX_SKILL_ENTRIES",
	"MAX_SKILL_FILES",
	"MAX_SKILL_MD_BYTES",
	"Skill",
	"describe",
	"load_skills",
	"parse_skill",
	"skill_tool",
]

MAX_SKILL_CHARS = 40_000
"""The most characters ``skills.load`` returns for a skill's instructions or one of its files."""

MAX_SKILL_MD_BYTES = 1024 * 1024
"""The largest ``SKILL.md`` read when a skill is loaded (its size is checked before reading)."""

MAX_SKILL_FILES = 500
"""The most files of a skill that ``skills.load`` lists."""

MAX_SKILL_ENTRIES = 10_000
"""The most entries (files and folders) of a skill's folder the listing visits."""


def _hidden(path: str) -> bool:
	"""Whether a path of a skill names a hidden file or passes through a hidden folder."""
	return any(part.startswith(".") and part not in (".", "..") for part in path.split("/"))


_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# The front matter may be empty ("---" then "---"): then the fields are missing, said as such.
_FRONT = re.compile(r"\A---[ \t]*\r?\n(?:(.*?)\r?\n)?---[ \t]*(?:\r?\n|\Z)", re.S)


@dataclass(frozen=True, slots=True)
class Skill:
	"""One skill.

	Args:
		name: The skill's name (lowercase letters, digits and hyphens, at most 64 characters).
		description: What it is for and when to use it (at most 1,024 characters).
		instructions: The body of ``SKILL.md`` (read when loaded, or given directly).
		root: The skill's folder, for its files (None for a skill made in code).
		allowed_tools: The tools (``integration.tool`` handles, or integration ids) it expects.
	"""

	name: str
	description: str
	instructions: str = ""
	root: Path | None = None
	allowed_tools: tuple[str, ...] = field(default_factory=tuple)
	_folder: _Folder | None = field(default=None, init=False, repr=False, compare=False)
	_tainted: bool = field(default=False, init=False, repr=False, compare=False)
	"""Its ``SKILL.md`` was written by a run that had read untrusted content (when read)."""

	def __post_init__(self) -> None:
		if not isinstance(self.name, str):
			raise ConfigurationError(
				f"a skill's name must be text (lowercase letters, digits and hyphens), not "
				f"{type(self.name).__name__}"
			)
		if len(self.name) > 64 or not _NAME.match(self.name):
			raise ConfigurationError(
				f"skill name {self.name[:100]!r}: use lowercase letters, digits and hyphens (at "
				"most 64)"
			)
		for key in ("description", "instructions"):
			value = getattr(self, key)
			if not isinstance(value, str):
				raise ConfigurationError(
					f"skill {self.name!r}: the {key} must be text, not {type(value).__name__}"
				)
		if not self.description.strip() or len(self.description) > 1024:
			raise ConfigurationError(
				f"skill {self.name!r}: the description must say what it is for, in 1 to 1024 characters"
			)
		tools = self.allowed_tools
		if not isinstance(tools, list | tuple) or not all(isinstance(t, str) for t in tools):
			raise ConfigurationError(
				f"skill {self.name!r}: allowed_tools must be a list of tool handles or integration "
				"ids, like ['local.pay', 'stripe']"
			)
		object.__setattr__(self, "allowed_tools", tuple(tools))
		if self.root is not None:
			if not isinstance(self.root, str | os.PathLike):
				raise ConfigurationError(
					f"skill {self.name!r}: root must be a folder's path, not "
					f"{type(self.root).__name__}"
				)
			object.__setattr__(self, "root", Path(self.root))

	def files(self) -> list[str]:
		"""The skill's other files, as paths relative to its folder (at most `MAX_SKILL_FILES`).

		Only what ``skills.load`` can read: regular files with one link, no symlinks, no
		``SKILL.md``, within the path caps.
		"""
		folder = self._folder_or_none()
		return [] if folder is None else folder.files()

	def _folder_or_none(self) -> _Folder | None:
		"""The skill's folder, held from its first use (None for a skill made in code)."""
		if self.root is None:
			return None
		if self._folder is None:
			object.__setattr__(self, "_folder", _Folder.of(self.root, where=self.name))
		return self._folder


class _Folder:
	"""A skill's folder, read through directory descriptors (`Sandbox`), pinned at load.

	Args:
		box: The sandbox of the folder.
		hard_links: Read files with more than one hard link (an installed plugin's files,
			which an installer such as uv may hard-link from its cache).
	"""

	__slots__ = ("box", "hard_links")

	def __init__(self, box: Sandbox, *, hard_links: bool = False) -> None:
		self.box = box
		self.hard_links = hard_links

	@classmethod
	def of(cls, root: Path, *, where: str, hard_links: bool = False) -> _Folder:
		"""The folder at ``root``.

		Raises:
			ToolError: It is not a directory (``where`` names it, never the host path).
		"""
		try:
			return cls(Sandbox([root], pin=True), hard_links=hard_links)
		except (OSError, ValueError):
			raise ToolError(f"skill {where!r}: its folder is gone or is not a directory") from None

	def read(self, path: str, most: int) -> bytes:
		"""The bytes of a regular file of the folder, refused when over ``most`` bytes.

		Raises:
			ToolError: The path is refused or too long, the file is missing, not a regular
				file, hard-linked, outside the folder or too large (named as given).
		"""
		with self.box.locate(path) as place:
			if place.name is not None and place.lstat() is None:
				raise _Missing(path)
			fd, info = open_regular(place, path, hard_links=self.hard_links)
			try:
				if info.st_size > most:
					raise _TooLarge(info.st_size)
				data = read_capped(fd, most)
			except OSError as err:
				raise os_error(err, path, "read") from None
			finally:
				os.close(fd)
		if data is None:
			raise _TooLarge(most + 1)
		return data

	def files(self) -> list[str]:
		"""The readable files below the folder, sorted, at most `MAX_SKILL_FILES`."""
		out: list[str] = []
		try:
			with self.box.locate(".") as place:
				walk = os.fwalk(".", dir_fd=place.dir_fd, follow_symlinks=False)
				visited = 0
				for folder, dirs, names, folder_fd in walk:
					rel = [p for p in folder.split("/") if p not in ("", ".")]
					visited += len(dirs) + len(names)
					if len(rel) + 1 >= MAX_DEPTH or visited > MAX_SKILL_ENTRIES:
						dirs.clear()
					dirs[:] = sorted(d for d in dirs if not d.startswith("."))
					for name in sorted(names):
						path = "/".join([*rel, name])
						if name == "SKILL.md" or name.startswith(".") or not self._fits(path):
							continue
						try:
							info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
						except OSError:
							continue
						if stat.S_ISREG(info.st_mode) and (info.st_nlink == 1 or self.hard_links):
							out.append(path)
		except (OSError, ToolError):
			pass  # the folder went away while listed: what was found so far
		return sorted(out)[:MAX_SKILL_FILES]

	def _fits(self, path: str) -> bool:
		try:
			check_path(path)
		except ToolError:
			return False
		return True

	def children(self) -> list[str]:
		"""The names of the folder's subdirectories (not symlinks, not hidden), sorted."""
		out = []
		with self.box.locate(".") as place, os.scandir(place.dir_fd) as entries:
			for entry in entries:
				if _hidden(entry.name):
					continue  # a hidden folder is no skill, as a hidden file is no part of one
				try:
					if stat.S_ISDIR(entry.stat(follow_symlinks=False).st_mode):
						out.append(entry.name)
				except OSError:
					continue
		return sorted(out)


class _Missing(Exception):
	"""A file of a skill is not there."""


class _TooLarge(Exception):
	"""A file of a skill is over its cap (its size in bytes, or the cap plus one)."""

	def __init__(self, size: int) -> None:
		super().__init__(size)
		self.size = size


def _scalar(text: str) -> str:
	text = text.strip()
	if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
		return text[1:-1]
	return text


def _front_matter(text: str, where: str) -> tuple[dict[str, Any], str]:
	"""The front matter (a YAML subset: scalars, ``[a, b]`` and ``- item`` lists) and the body."""
	match = _FRONT.match(text)
	if match is None:
		raise ConfigurationError(
			f"{where}: SKILL.md must start with front matter between '---' lines"
		)
	data: dict[str, Any] = {}
	key: str | None = None
	block = False  # the key's value is a block of text ("|" or ">"), whose lines may start with "-"
	for raw in (match.group(1) or "").splitlines():
		line = raw.rstrip()
		if not line.strip() or line.lstrip().startswith("#"):
			continue
		if line.startswith((" ", "\t", "-")) and key is not None:
			item = line.strip()
			if item.startswith("- ") and not block:
				if data[key] == "":  # "key:" alone, then "- item" lines: a list
					data[key] = []
				if isinstance(data[key], list):
					data[key].append(_scalar(item[2:]))
			elif isinstance(data.get(key), str):  # a folded continuation line
				data[key] = f"{data[key]} {item}".strip()
			continue
		name, sep, value = line.partition(":")
		if not sep:
			raise ConfigurationError(f"{where}: front matter line {line!r} is not 'key: value'")
		key = name.strip()
		value = value.strip()
		block = value in ("|", ">")
		if value in ("", "|", ">"):
			data[key] = ""
		elif value.startswith("[") and value.endswith("]"):
			data[key] = [_scalar(v) for v in value[1:-1].split(",") if v.strip()]
		else:
			data[key] = _scalar(value)
	return data, text[match.end() :]


def parse_skill(text: str, *, root: Path | None = None, where: str = "SKILL.md") -> Skill:
	"""Read a skill from the text of its ``SKILL.md``.

	Args:
		text: The file's text.
		root: The skill's folder.
		where: Named in errors.

	Raises:
		ConfigurationError: The front matter is missing or malformed, or a field is invalid.
	"""
	data, body = _front_matter(text.removeprefix("\ufeff"), where)  # a BOM, from some editors
	tools = data.get("allowed-tools", data.get("allowed_tools", ()))
	if isinstance(tools, str):
		tools = [t for t in re.split(r"[\s,]+", tools) if t]
	try:
		return Skill(
			name=data.get("name", ""),  # a list is refused by Skill, not written out as text
			description=data.get("description", ""),
			instructions=body.strip(),
			root=root,
			allowed_tools=tuple(str(t) for t in tools),
		)
	except ConfigurationError as exc:
		raise ConfigurationError(f"{where}: {exc}") from None


def _shown(folder: Path) -> str:
	"""A folder as errors name it: as written when relative, by its name when absolute."""
	return str(folder) if not folder.is_absolute() else f".../{folder.name}"


def _from_folder(folder: Path, *, hard_links: bool = False, where: str = "") -> list[Skill]:
	"""The skill in ``folder``, or the skills in its subfolders, read through descriptors."""
	shown = where or _shown(folder)
	try:
		box = _Folder.of(folder, where=shown, hard_links=hard_links)
	except ToolError:
		box = None
	text = None if box is None else _skill_md(box, shown)
	if box is not None and text is not None:
		skill = parse_skill(text, root=folder, where=f"{shown}/SKILL.md")
		_pin(skill, box)
		return [skill]
	if box is None:
		raise ConfigurationError(
			f"skills: {shown!r} is neither a skill folder nor a folder of skills"
		)
	found = []
	top = box.box.roots[0]
	for child in box.children():
		try:
			inner = _Folder.of(top / child, where=child, hard_links=hard_links)
		except ToolError:
			continue
		if inner.box.roots[0] != top / child:  # swapped for a symlink since it was listed
			continue
		text = _skill_md(inner, f"{shown}/{child}")
		if text is not None:
			skill = parse_skill(text, root=folder / child, where=f"{shown}/{child}/SKILL.md")
			_pin(skill, inner)
			found.append(skill)
	return found


def _pin(skill: Skill, folder: _Folder) -> None:
	"""Give a skill read from ``folder`` its folder, and whether a tainted run wrote its text."""
	object.__setattr__(skill, "_folder", folder)
	object.__setattr__(skill, "_tainted", _written(folder, ["SKILL.md"]))


def _written(folder: _Folder, files: Iterable[str]) -> bool:
	"""Whether a run that had read untrusted content wrote one of these files of a skill.

	A FileSystem integration may write into a skill's folder (a workspace that holds its
	agent's skills): what a tainted run wrote there is its words, not the user's know-how,
	as when the FileSystem reads it back (`openmolt_core.integrations._taintmarks`).
	"""
	from openmolt_core.integrations._taintmarks import written_by_tainted

	return written_by_tainted(folder.box.roots[0], [tuple(f.split("/")) for f in files])


def _skill_md(folder: _Folder, shown: str) -> str | None:
	"""The text of a folder's ``SKILL.md``; None when it has none.

	Raises:
		ConfigurationError: It is too large, not UTF-8, or not a file the folder may read.
	"""
	try:
		data = folder.read("SKILL.md", MAX_SKILL_MD_BYTES)
	except _Missing:
		return None
	except _TooLarge as exc:
		raise ConfigurationError(
			f"{shown}/SKILL.md is too large ({exc.size} bytes; the most is "
			f"{MAX_SKILL_MD_BYTES}): keep the instructions short and move details to the "
			"skill's files"
		) from None
	except ToolError as exc:
		raise ConfigurationError(
			f"{shown}/SKILL.md cannot be read: {exc.message} (it must be a regular file in the "
			"skill's folder, with one hard link: copy it rather than link it)"
		) from None
	try:
		return data.decode("utf-8")
	except UnicodeDecodeError:
		raise ConfigurationError(f"{shown}/SKILL.md is not UTF-8 text; save it as UTF-8") from None


def load_skills(
	entries: Iterable[str | os.PathLike[str] | Skill | Mapping[str, Any]],
	*,
	plugins: Callable[[str], list[Skill] | None] | None = None,
	known: Callable[[], Sequence[str]] | None = None,
	hard_links: bool = False,
) -> list[Skill]:
	"""The skills of ``create_agent(skills=[...])``: folders, plugins' skills, `Skill` objects, dicts.

	A folder is a skill (it has a ``SKILL.md``) or holds skill folders. A bare name
	(``"pdf-forms"``: lowercase letters, digits and hyphens) names a skill a plugin provides
	(the ``openmolt.skills`` entry points), or else a folder of that name; when both exist, the
	name is refused as ambiguous (write ``./pdf-forms`` for the folder).

	Args:
		entries: The skills.
		plugins: Finds a plugin's skills by name (``om.plugins.skills``); None: folders only.
		known: The names plugins provide, for the error about a name none provides.
		hard_links: Read files with more than one hard link (for the skills of installed
			plugins, which an installer may hard-link from its cache); False refuses them,
			since another name for the file may be outside the folder.

	Raises:
		ConfigurationError: A folder is not there, a skill is malformed, no plugin provides a
			named skill, or two skills share a name.
	"""
	skills: list[Skill] = []
	for entry in entries:
		if isinstance(entry, Mapping):
			fields = dict(entry)
			if "allowed-tools" in fields and "allowed_tools" not in fields:  # as SKILL.md spells it
				fields["allowed_tools"] = fields.pop("allowed-tools")
			try:
				entry = Skill(**fields)  # then read as a Skill object is (a plugin's hard links)
			except TypeError as exc:
				raise ConfigurationError(f"skills: {exc}") from exc
		if isinstance(entry, Skill):
			if hard_links and entry.root is not None and entry._folder is None:
				try:  # a plugin's Skill object: its files may be hard-linked too
					folder = _Folder.of(entry.root, where=entry.name, hard_links=True)
					object.__setattr__(entry, "_folder", folder)
				except ToolError:
					pass  # its folder is missing: said when the model loads it
			skills.append(entry)
		elif isinstance(entry, str) and plugins is not None and _NAME.match(entry):
			skills.extend(_named(entry, plugins, known))
		elif isinstance(entry, (str, os.PathLike)):
			skills.extend(_from_folder(Path(entry), hard_links=hard_links))
		else:
			raise ConfigurationError(
				f"skills: {type(entry).__name__} is not a skill; give a folder's path, a "
				"plugin's skill name, a Skill or a dict of its fields"
			)
	seen: dict[str, Skill] = {}
	for skill in skills:
		if skill.name in seen:
			if seen[skill.name] is skill:
				continue  # named twice (by its own name and by its plugin's)
			raise ConfigurationError(f"skills: two skills are named {skill.name!r}")
		seen[skill.name] = skill
	return list(seen.values())


def _named(
	name: str,
	plugins: Callable[[str], list[Skill] | None],
	known: Callable[[], Sequence[str]] | None,
) -> list[Skill]:
	"""A bare name: a plugin's skill(s), or a folder of that name."""
	found = plugins(name)
	folder = Path(name)
	if found is not None and _exists(folder):
		raise ConfigurationError(
			f"skills: {name!r} is both a plugin's skill and a folder here; write './{name}' for "
			"the folder, or rename it"
		)
	if found is not None:
		return found
	if _exists(folder):
		return _from_folder(folder)
	from openmolt_core._support.suggest import suggestion

	names = list(known()) if known is not None else []
	raise ConfigurationError(
		f"skills: no plugin provides a skill {name!r} and there is no folder of that name "
		f"({suggestion(name, names, noun='skills from plugins')}); install the plugin that ships "
		"it, or give the folder's path"
	)


def _exists(path: Path) -> bool:
	"""Whether something is at ``path``; False for a name too long or with a NUL."""
	try:
		os.lstat(path)
	except (OSError, ValueError):
		return False
	return True


def _read(skill: Skill, file: str, limit: int) -> str:
	"""A file of a skill as text, through its folder's descriptors (see the module docstring).

	Raises:
		ToolError: The file is missing, refused or too large; the path as given, never the host's.
	"""
	folder = skill._folder_or_none()
	if folder is None:
		raise ToolError(f"skill {skill.name!r} has no files")
	if not file.strip() or file.startswith("/") or ".." in file.split("/"):
		raise ToolError(
			f"file {file[:200]!r}: give a path inside the skill, like one of {skill.files()[:5]}"
		)
	if _hidden(file):
		raise ToolError(
			f"file {file[:200]!r}: a hidden file (its name, or a folder's, starts with '.') is no "
			f"part of skill {skill.name!r}; its files: {skill.files()[:5]}"
		)
	try:
		folder.box.check(file)
	except ToolError as exc:
		raise ToolError(f"skill {skill.name!r}, file {file[:120]!r}: {exc.message}") from None
	most = limit * 4  # a character is at most 4 bytes in UTF-8
	try:
		data = folder.read(file, most)
	except _TooLarge as exc:
		raise ToolError(
			f"file {file!r} of skill {skill.name!r} is too large ({exc.size} bytes, the most is "
			f"{most})"
		) from None
	except (_Missing, ToolError) as exc:
		from openmolt_core._support.suggest import suggestion

		why = (
			""
			if isinstance(exc, _Missing)
			else " it can read (skills.load reads regular files of the skill's folder with one "
			"hard link, and follows no symlink out of it)"
		)
		raise ToolError(
			f"skill {skill.name!r} has no file {file!r}{why}; "
			f"{suggestion(file, skill.files(), noun='files')}"
		) from None
	text = data.decode("utf-8", errors="replace")
	if len(text) > limit:
		raise ToolError(
			f"file {file!r} of skill {skill.name!r} is too large ({len(text)} characters)"
		)
	return text


def skill_tool(
	skills: Sequence[Skill], *, available: Sequence[str], limit: int = MAX_SKILL_CHARS
) -> FunctionTool:
	"""The built-in ``skills.load`` tool for an agent's skills.

	Args:
		skills: The agent's skills.
		available: The handles of the tools the agent can call (to say what a skill lacks).
		limit: The most characters a load returns.
	"""
	from openmolt_core.functiontools import FunctionTool

	by_name = {s.name: s for s in skills}
	handles = set(available)
	integrations = {h.split(".", 1)[0] for h in handles}

	def load(input: dict[str, Any], context: ToolContext) -> Any:
		name = input["name"]
		skill = by_name.get(name)
		if skill is None:
			from openmolt_core._support.suggest import suggestion

			raise ToolError(
				f"unknown skill {name!r}; {suggestion(name, list(by_name), noun='skills')}"
			)
		file = input.get("file")
		folder = skill._folder_or_none()
		if file:
			out = {"skill": name, "file": file, "content": _read(skill, file, limit)}
			return _labelled(out, folder is not None and _written(folder, [file]))
		if len(skill.instructions) > limit:
			raise ToolError(
				f"skill {name!r} is too large to load ({len(skill.instructions)} characters, the most "
				f"is {limit}); load one of its files instead"
			)
		out = {"skill": name, "instructions": skill.instructions}
		files = skill.files()
		if files:
			out["files"] = files
		# Its text, and its files' names, are a tainted run's words when one wrote them.
		tainted = skill._tainted or (folder is not None and _written(folder, files))
		missing = [t for t in skill.allowed_tools if t not in handles and t not in integrations]
		if missing:
			out["unavailable"] = (
				f"this skill expects {missing}, which this agent cannot call: loading a skill grants "
				"no tools; do without them or finish and say what is missing"
			)
		return _labelled(out, tainted)

	return FunctionTool(
		handle="load",
		description="Load one of your skills' instructions (or one of its files, by path).",
		function=load,
		input_schema={
			"type": "object",
			"properties": {
				"name": {"type": "string", "enum": sorted(by_name)},
				"file": {"type": "string", "description": "A file of the skill (optional)."},
			},
			"required": ["name"],
			"additionalProperties": False,
		},
		# Skills are know-how the user installed for this agent, like its instructions; it
		# reads no private data and sends nothing (`openmolt_core.taint`).
		labels=(),
	)


def _labelled(out: dict[str, Any], tainted: bool) -> Any:
	"""A load's result, labelled ``untrusted`` when a tainted run wrote what it shows."""
	from openmolt_core.tools import LabelledResult

	return LabelledResult(out, ("untrusted",)) if tainted else out


_WITHHELD_DESCRIPTION = (
	"(its description is withheld: a run that had read untrusted content wrote this skill; "
	"what loading it shows is untrusted)"
)
"""What the first turn says of a skill whose ``SKILL.md`` a tainted run wrote."""


def describe(skills: Sequence[Skill]) -> list[dict[str, str]]:
	"""The skills as the first turn lists them: name and description only (as a tool's: `shown`).

	The first turn is the application's word: a skill whose ``SKILL.md`` a run that had read
	untrusted content wrote is listed by its name, its description withheld.
	"""
	from openmolt_core._binding import shown

	return [
		{
			"name": s.name,
			"description": _WITHHELD_DESCRIPTION if s._tainted else shown(s.description),
		}
		for s in skills
	]
