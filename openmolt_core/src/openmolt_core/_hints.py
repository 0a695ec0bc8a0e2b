"""What to tell a user whose provider or integration is not there: a near miss, or what to install.

Only extras that exist are suggested: they are read from the ``openmolt`` distribution's own
metadata (``Provides-Extra``), the one list of built-in integrations a user can install. An id that
is close to an installed or installable one gets "did you mean"; an id that is neither gets no
install command at all (pip would install nothing), but the way to add it yourself.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
from collections.abc import Iterable
from functools import cache
from importlib import metadata
from pathlib import Path

__all__ = [
	"close_match",
	"extra_for",
	"install_command",
	"install_commands_in",
	"install_environment",
	"installed_extras",
	"known_extras",
	"missing_integration",
	"missing_provider",
	"tools_meant",
]


def extra_for(integration_id: str) -> str:
	"""The ``openmolt[...]`` extra of a built-in integration (``googleDrive`` → ``google-drive``)."""
	return re.sub(r"(?<!^)(?=[A-Z])", "-", integration_id).lower()


@cache
def known_extras() -> frozenset[str]:
	"""The extras the installed ``openmolt`` distribution offers (empty without it), minus ``all``."""
	try:
		extras = metadata.metadata("openmolt").get_all("Provides-Extra") or []
	except metadata.PackageNotFoundError:
		return frozenset()
	return frozenset(e for e in extras if e != "all")


_OPENMOLT = re.compile(r"openmolt(?:\[([^\]]*)\])?")
"""``openmolt`` itself, with or without extras (not ``openmolt-providers``)."""
_EXTRA_REQUIREMENT = re.compile(
	r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)[^;]*;.*\bextra\s*==\s*['\"]([^'\"]+)['\"]"
)


@cache
def installed_extras() -> frozenset[str]:
	"""The extras of the installed ``openmolt`` whose distributions are all installed (no ``all``).

	Read from the distribution's ``Requires-Dist`` lines (``openmolt-ui==0.1.0; extra == 'ui'``):
	an extra counts as installed when every distribution it names is.
	"""
	try:
		requires = metadata.requires("openmolt") or []
	except metadata.PackageNotFoundError:
		return frozenset()
	needs: dict[str, set[str]] = {}
	for line in requires:
		match = _EXTRA_REQUIREMENT.match(line)
		if match:
			needs.setdefault(match[2], set()).add(match[1])

	def present(name: str) -> bool:
		try:
			metadata.distribution(name)
		except metadata.PackageNotFoundError:
			return False
		return True

	return frozenset(
		extra for extra, names in needs.items() if extra != "all" and all(map(present, names))
	)


def _keeping_extras(requirement: str) -> str:
	"""``openmolt[...]`` with the extras installed now added: what a reinstall must ask for.

	``uv tool install`` and ``pipx install --force`` replace the tool's environment, so
	``openmolt[ui]`` alone would remove an installed ``dbos`` extra; this gives
	``openmolt[dbos,ui]`` (``openmolt[all]`` when every extra would be in it).
	"""
	match = _OPENMOLT.fullmatch(requirement)
	if match is None:
		return requirement
	asked = {e.strip() for e in (match[1] or "").split(",") if e.strip()}
	extras = installed_extras() | asked
	if not extras:
		return "openmolt"
	if "all" in extras or (known_extras() and extras >= known_extras()):
		return "openmolt[all]"
	return f"openmolt[{','.join(sorted(extras))}]"


def _under(prefix: Path, *parts: str | None) -> bool:
	for part in parts:
		if part and prefix.is_relative_to(Path(part).expanduser()):
			return True
	return False


def _uv_project() -> Path | None:
	"""The pyproject.toml of the uv project whose environment this is (None outside one).

	``uv run`` sets ``UV``: the project is the nearest ``pyproject.toml`` above the folder it
	ran in. Without it, the project's own ``.venv`` used directly (``.venv/bin/openmolt``, or
	activated) is recognised by the ``uv.lock`` beside it: ``uv pip install`` there would be
	undone by the next ``uv sync``, which removes what the lock file does not name.
	"""
	if os.environ.get("UV"):
		here = Path.cwd()
		for folder in (here, *here.parents):
			candidate = folder / "pyproject.toml"
			if candidate.is_file():
				return candidate
		return None
	folder = Path(sys.prefix).resolve().parent
	candidate = folder / "pyproject.toml"
	return candidate if candidate.is_file() and (folder / "uv.lock").is_file() else None


def _project_text(project: Path) -> str:
	"""A project's ``pyproject.toml`` as text for the hint (empty when it cannot be read).

	Read within a bound, as a regular file: the hint is worth no more than a glance.
	"""
	from openmolt_core._support.paths import read_file

	try:
		return read_file(project, limit=1 << 20).decode("utf-8", errors="replace")
	except OSError:
		return ""


def install_environment() -> str:
	"""How this Python was installed: ``uv-tool``, ``uvx``, ``pipx``, ``uv-project``, ``pip``...

	One of ``uv-tool``, ``uvx``, ``pipx``, ``uv-project``, ``pip`` or ``uv-pip``.

	``uv tool install openmolt`` and pipx keep one virtual environment per tool under their own
	folder, and ``uvx openmolt`` one in uv's cache; a uv project is one ``uv run`` works in (it
	sets ``UV``) or whose ``.venv`` this is, beside its ``uv.lock``; any other environment with
	pip gets pip, and one without pip (made by ``uv venv``) ``uv pip``.
	"""
	prefix = Path(sys.prefix).resolve()
	home = Path.home()
	data = os.environ.get("XDG_DATA_HOME") or str(home / ".local" / "share")
	uv_tools = (os.environ.get("UV_TOOL_DIR"), str(Path(data) / "uv" / "tools"))
	if _under(prefix, *uv_tools):
		return "uv-tool"
	cache = os.environ.get("XDG_CACHE_HOME") or str(home / ".cache")
	if _under(prefix, os.environ.get("UV_CACHE_DIR"), str(Path(cache) / "uv")):
		return "uvx"
	pipx = (
		os.environ.get("PIPX_HOME"),
		str(Path(data) / "pipx"),
		str(home / ".local" / "pipx"),
		str(home / "pipx"),
	)
	if _under(prefix, *pipx):
		return "pipx"
	if _uv_project() is not None:
		return "uv-project"
	if importlib.util.find_spec("pip") is not None:
		return "pip"
	return "uv-pip" if (os.environ.get("UV") or shutil.which("uv")) else "pip"


def install_command(requirement: str) -> str:
	"""The command that installs ``requirement`` where this Python runs (`install_environment`).

	``uv tool install 'openmolt[ui]'`` for a uv tool, ``uvx --with ...`` for uvx,
	``pipx install --force ...`` for pipx (both with the extras installed now kept, and another
	distribution added beside openmolt: ``uv tool install --with``, ``pipx inject``), ``uv add ...`` in a uv project (``uv sync --all-extras`` in a clone of OpenMolt itself),
	``pip install ...`` in an activated virtual environment (``/path/to/venv/bin/python -m pip
	install ...`` in one that is not), ``python -m pip install ...`` with this interpreter's
	pip, else ``uv pip install``.

	Args:
		requirement: ``openmolt[ui]`` or a distribution name.
	"""
	kind = install_environment()
	# A uv tool and pipx reinstall the tool's whole environment: name the extras it has now.
	ours = _OPENMOLT.fullmatch(requirement) is not None
	if kind == "uv-tool":
		if ours:
			return f"uv tool install '{_keeping_extras(requirement)}'"
		return f"uv tool install --with '{requirement}' '{_keeping_extras('openmolt')}'"
	if kind == "uvx":  # uv's cache: the next uvx adds it (the command's own arguments follow)
		return f"uvx --with '{requirement}' openmolt ..."
	if kind == "pipx":
		if ours:
			return f"pipx install --force '{_keeping_extras(requirement)}'"
		return f"pipx inject openmolt '{requirement}'"  # added to the tool's environment
	if kind == "uv-project":
		project = _uv_project()
		text = _project_text(project) if project else ""
		# Run from outside the project (its .venv/bin/openmolt): uv is told which project.
		where = ""
		if project is not None and not Path.cwd().resolve().is_relative_to(project.parent):
			where = f" --project {project.parent}"
		if re.search(r'(?m)^name\s*=\s*"openmolt"\s*$', text):
			return f"uv sync{where} --all-packages --all-extras"  # a clone of OpenMolt itself
		return f"uv add{where} '{requirement}'"
	if kind == "uv-pip":
		return f"uv pip install --python {sys.executable} '{requirement}'"
	if Path(sys.prefix) != Path(sys.base_prefix):  # a virtual environment: its own pip
		active = os.environ.get("VIRTUAL_ENV")
		if active and Path(active).resolve() == Path(sys.prefix).resolve():
			return f"pip install '{requirement}'"  # activated: `pip` is its pip
		# Run as .venv/bin/openmolt without activating it: `pip` may be another Python's.
		return f"{sys.executable} -m pip install '{requirement}'"
	return f"python -m pip install '{requirement}'"


_PIP_INSTALL = re.compile(
	r"""(?:(?:[^\s`'"]*python3?|uv) (?:-m )?)?pip3? install (?:(['"])([^'"\s]+)\1|([^'"`\s]+))"""
)
"""A whole ``pip install`` command in prose: ``pip install 'openmolt[fal]'``, ``python -m pip
install pyyaml``, ``uv pip install x`` (one requirement, quoted or not)."""


def install_commands_in(text: str) -> str:
	"""``text`` with each ``pip install`` command in it replaced by `install_command`'s.

	An integration's docs are written once for everyone and say ``pip install 'openmolt[fal]'``;
	shown to a user, they name the command that works where this Python runs.

	Args:
		text: prose that may name ``pip install`` commands.
	"""
	if "pip" not in text:
		return text
	return _PIP_INSTALL.sub(lambda m: install_command(m[2] or m[3]), text)


def close_match(name: str, candidates: Iterable[str]) -> str | None:
	"""The candidate ``name`` was most likely meant to be, if any is close enough."""
	import difflib  # only when something is missing: a run that finds its plugins never needs it

	from openmolt_core._support.suggest import same_act

	pool = sorted(set(candidates))
	by_norm = {re.sub(r"[-_]", "", c).lower(): c for c in pool}
	norm = re.sub(r"[-_]", "", name).lower()
	if norm in by_norm:
		return by_norm[norm]
	near = difflib.get_close_matches(name, pool, n=1, cutoff=0.9)
	if near:  # getMessage: getMessages
		return near[0]
	act = same_act(name, pool)  # slack.sendMessage: slack.postMessage, not scheduleMessage
	if act:
		return act[0]
	close = difflib.get_close_matches(name, pool, n=1, cutoff=0.75)
	if close:
		return close[0]
	close = difflib.get_close_matches(norm, list(by_norm), n=1, cutoff=0.75)
	return by_norm[close[0]] if close else None


_CAMEL_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def tools_meant(name: str, tools: Iterable[str], *, shown: int = 4) -> str:
	"""The hint for a tool name that is not one: ``; did you mean 'a' or 'b'?``, or ``""``.

	A word of the tools' names lists every tool it names (``post``: Slack's ``postMessage`` and
	``postEphemeral``; ``issue``: GitHub's issue tools, ``shown`` of them and how many more);
	anything else gets `close_match`'s one name (``post_message``, ``serch``).

	Args:
		name: What was written (``slack.post`` or ``post``).
		tools: The tools that exist, as ``integration.handle``.
		shown: How many tools to name at most.
	"""
	pool = list(dict.fromkeys(tools))
	word = re.sub(r"[-_]", "", name.rpartition(".")[2]).lower()
	with_word = [
		tool
		for tool in pool
		if word
		and any(
			part.lower() in (word, f"{word}s")
			for part in _CAMEL_WORD.findall(tool.rpartition(".")[2])
		)
	]
	exact = [t for t in pool if re.sub(r"[-_]", "", t.rpartition(".")[2]).lower() == word]
	if with_word and not exact:
		names = " or ".join(repr(tool) for tool in with_word[:shown])
		more = len(with_word) - shown
		return f"; did you mean {names}" + (f" (and {more} more)" if more > 0 else "") + "?"
	near = close_match(name, pool)
	return f"; did you mean {near!r}?" if near else ""


def missing_integration(id: str, *, available: Iterable[str], listed: Iterable[str] = ()) -> str:
	"""The message for an integration id that nothing provides.

	Args:
		id: The id asked for.
		available: The ids that are installed or registered.
		listed: Entry-point names whose plugin was loaded but registered no integration of that
			name (so it was listed as available and still is not there).
	"""
	available = sorted(set(available))
	shown = f" (available: {', '.join(available)})" if available else ""
	if id in set(listed):
		return (
			f"its plugin is installed but registered no integration {id!r}; its "
			"register_integrations hook must call register(...) with that id" + shown
		)
	if id == "fileSystem":
		return (
			"not registered by default; register it: "
			'om.register_integration("fileSystem", OpenMolt.FileSystemIntegration("./data"))'
		)
	extras = known_extras()
	installable = {extra_for(e): e for e in extras}  # extras are already in the extra spelling
	near = close_match(id, [*available, *installable])
	if near is not None and near != id and near in available:
		return f"no such integration; did you mean {near!r}?{shown}"
	extra = extra_for(id)
	if extra in extras:
		return f"not installed; run: {install_command(f'openmolt[{extra}]')}{shown}"
	if near is not None:
		return f"no such integration; did you mean {near!r}? run: {install_command(f'openmolt[{near}]')}{shown}"
	return (
		f"no such integration: no installed plugin and no built-in has this id; install the "
		f"package that provides it, or add it with om.register_integration({id!r}, ...){shown}"
	)


def missing_provider(name: str, *, available: Iterable[str]) -> str:
	"""The message for a model-id prefix that no provider plugin or named instance provides.

	Args:
		name: The prefix asked for (``opnai`` in ``opnai:gpt-5``).
		available: The installed provider names and configured instance names.
	"""
	available = sorted(set(available))
	if not available:
		return f"no model provider is installed; run: {install_command('openmolt-providers')}"
	shown = f" (installed: {', '.join(available)})"
	near = close_match(name, available)
	if near is not None:
		return f"no such model provider; did you mean {near!r}?{shown}"
	return (
		"no such model provider" + shown + "; for another endpoint of an installed provider, "
		f"name an instance: llm_providers={{{name!r}: {{'provider': 'openai', 'base_url': ...}}}}"
	)
