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
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openmolt_core.errors import ConfigurationError, ToolError

if TYPE_CHECKING:
	from openmolt_core.tools import FunctionTool, ToolContext

__all__ = [
	"MAX_SKILL_CHARS",
	"Skill",
	"describe",
	"load_skills",
	"parse_skill",
	"skill_tool",
]

MAX_SKILL_CHARS = 40_000
"""The most characters ``skills.load`` returns for a skill's instructions or one of its files."""

_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)


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

	def __post_init__(self) -> None:
		if len(self.name) > 64 or not _NAME.match(self.name):
			raise ConfigurationError(
				f"skill name {self.name!r}: use lowercase letters, digits and hyphens (at most 64)"
			)
		if not self.description.strip() or len(self.description) > 1024:
			raise ConfigurationError(
				f"skill {self.name!r}: the description must say what it is for, in 1 to 1024 characters"
			)

	def files(self) -> list[str]:
		"""The skill's other files, as paths relative to its folder."""
		if self.root is None:
			return []
		out = []
		for path in sorted(self.root.rglob("*")):
			if path.is_file() and not path.is_symlink() and path.name != "SKILL.md":
				out.append(path.relative_to(self.root).as_posix())
		return out


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
	for raw in match.group(1).splitlines():
		line = raw.rstrip()
		if not line.strip() or line.lstrip().startswith("#"):
			continue
		if line.startswith((" ", "\t", "-")) and key is not None:
			item = line.strip()
			if item.startswith("- "):
				data.setdefault(key, [])
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
	data, body = _front_matter(text, where)
	tools = data.get("allowed-tools", data.get("allowed_tools", ()))
	if isinstance(tools, str):
		tools = [t for t in re.split(r"[\s,]+", tools) if t]
	try:
		return Skill(
			name=str(data.get("name", "")),
			description=str(data.get("description", "")),
			instructions=body.strip(),
			root=root,
			allowed_tools=tuple(str(t) for t in tools),
		)
	except ConfigurationError as exc:
		raise ConfigurationError(f"{where}: {exc}") from None


def _from_folder(folder: Path) -> list[Skill]:
	if (folder / "SKILL.md").is_file():
		path = folder / "SKILL.md"
		return [parse_skill(path.read_text(encoding="utf-8"), root=folder, where=str(path))]
	if not folder.is_dir():
		raise ConfigurationError(
			f"skills: {str(folder)!r} is neither a skill folder nor a folder of skills"
		)
	found = []
	for child in sorted(folder.iterdir()):
		if child.is_dir() and (child / "SKILL.md").is_file():
			found.extend(_from_folder(child))
	return found


def load_skills(
	entries: Iterable[str | os.PathLike[str] | Skill | Mapping[str, Any]],
	*,
	plugins: Callable[[str], list[Skill] | None] | None = None,
	known: Callable[[], Sequence[str]] | None = None,
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

	Raises:
		ConfigurationError: A folder is not there, a skill is malformed, no plugin provides a
			named skill, or two skills share a name.
	"""
	skills: list[Skill] = []
	for entry in entries:
		if isinstance(entry, Skill):
			skills.append(entry)
		elif isinstance(entry, Mapping):
			try:
				skills.append(Skill(**dict(entry)))
			except TypeError as exc:
				raise ConfigurationError(f"skills: {exc}") from exc
		elif isinstance(entry, str) and plugins is not None and _NAME.match(entry):
			skills.extend(_named(entry, plugins, known))
		else:
			skills.extend(_from_folder(Path(entry)))
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
	if found is not None and folder.exists():
		raise ConfigurationError(
			f"skills: {name!r} is both a plugin's skill and a folder here; write './{name}' for "
			"the folder, or rename it"
		)
	if found is not None:
		return found
	if folder.exists():
		return _from_folder(folder)
	from openmolt_core._suggest import suggestion

	names = list(known()) if known is not None else []
	raise ConfigurationError(
		f"skills: no plugin provides a skill {name!r} and there is no folder of that name "
		f"({suggestion(name, names, noun='skills from plugins')}); install the plugin that ships "
		"it, or give the folder's path"
	)


def _read(skill: Skill, file: str, limit: int) -> str:
	if skill.root is None:
		raise ToolError(f"skill {skill.name!r} has no files")
	root = skill.root.resolve()
	relative = Path(file)
	if relative.is_absolute() or ".." in relative.parts or not file.strip():
		raise ToolError(
			f"file {file!r}: give a path inside the skill, like one of {skill.files()[:5]}"
		)
	path = root / relative
	real = Path(os.path.realpath(path))
	if not real.is_relative_to(root) or path.is_symlink() or not real.is_file():
		from openmolt_core._suggest import suggestion

		raise ToolError(
			f"skill {skill.name!r} has no file {file!r}; {suggestion(file, skill.files(), noun='files')}"
		)
	size = real.stat().st_size
	if size > limit * 4:
		raise ToolError(f"file {file!r} of skill {skill.name!r} is too large ({size} bytes)")
	text = real.read_text(encoding="utf-8", errors="replace")
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
	from openmolt_core.tools import FunctionTool

	by_name = {s.name: s for s in skills}
	handles = set(available)
	integrations = {h.split(".", 1)[0] for h in handles}

	def load(input: dict[str, Any], context: ToolContext) -> dict[str, Any]:
		name = input["name"]
		skill = by_name.get(name)
		if skill is None:
			from openmolt_core._suggest import suggestion

			raise ToolError(
				f"unknown skill {name!r}; {suggestion(name, list(by_name), noun='skills')}"
			)
		file = input.get("file")
		if file:
			return {"skill": name, "file": file, "content": _read(skill, file, limit)}
		if len(skill.instructions) > limit:
			raise ToolError(
				f"skill {name!r} is too large to load ({len(skill.instructions)} characters, the most "
				f"is {limit}); load one of its files instead"
			)
		out: dict[str, Any] = {"skill": name, "instructions": skill.instructions}
		files = skill.files()
		if files:
			out["files"] = files
		missing = [t for t in skill.allowed_tools if t not in handles and t not in integrations]
		if missing:
			out["unavailable"] = (
				f"this skill expects {missing}, which this agent cannot call: loading a skill grants "
				"no tools; do without them or finish and say what is missing"
			)
		return out

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


def describe(skills: Sequence[Skill]) -> list[dict[str, str]]:
	"""The skills as the first turn lists them: name and description only."""
	return [{"name": s.name, "description": s.description} for s in skills]
