"""Subcommands that plugins register (``register_commands``, entry-point group ``openmolt.commands``).

``openmolt serve`` (openmolt-serve), ``openmolt ui`` (openmolt-ui), ``openmolt worker``, ``runs`` and
``answer`` (openmolt-dbos), ``openmolt mcp`` (openmolt-mcp) and ``openmolt eval`` (openmolt-evals) live
in their distributions, which
register them. The command looks them up only for a name it does not know itself, once per process;
a known plugin command that is not installed names the extra that brings it. OpenMolt's own
distributions register exactly their `PLUGIN_COMMANDS` names, so running one of them loads no other
of them (``openmolt mcp`` does not import DBOS, the server or the viewer: a second or more); every
other distribution's commands are loaded, so a name two distributions register is still refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata

from openmolt_core.errors import ConfigurationError, PluginError

__all__ = ["PLUGIN_COMMANDS", "RegisteredCommand", "find", "registered"]

PLUGIN_COMMANDS = {
	"serve": "serve",
	"ui": "ui",
	"worker": "dbos",
	"runs": "dbos",
	"answer": "dbos",
	"mcp": "mcp",
	"eval": "evals",
}
"""The commands of OpenMolt's own plugin distributions, and the extra that installs each."""


@dataclass(frozen=True, slots=True)
class RegisteredCommand:
	"""A subcommand a plugin registered.

	Args:
		name: What follows ``openmolt``.
		main: Runs it with the arguments after the name; returns the exit code.
		summary: One line for the help.
		distribution: The distribution that registered it.
	"""

	name: str
	main: Callable[[list[str]], int]
	summary: str
	distribution: str


_OWN = frozenset(f"openmolt-{extra}" for extra in PLUGIN_COMMANDS.values())
"""OpenMolt's own distributions that register commands (each exactly its `PLUGIN_COMMANDS`)."""

_found: dict[str, RegisteredCommand] | None = None


def registered() -> dict[str, RegisteredCommand]:
	"""Every command the installed plugins register (their hooks run once per process).

	Raises:
		PluginError: A plugin's module cannot be loaded, or registers a command twice.
	"""
	global _found
	if _found is None:
		_found = _load(None)
	return _found


def _load(wanted: str | None) -> dict[str, RegisteredCommand]:
	"""The commands of the plugins that may register ``wanted`` (None: of every plugin).

	Of OpenMolt's own distributions only the one whose command ``wanted`` is gets loaded; every
	other distribution's commands are, so that one registering ``wanted`` too is refused as before.
	"""
	import pluggy

	from openmolt_core import hookspecs

	owner = f"openmolt-{PLUGIN_COMMANDS.get(wanted or '')}"
	found: dict[str, RegisteredCommand] = {}
	for entry in metadata.entry_points(group="openmolt.commands"):
		dist = entry.dist.name if entry.dist is not None else entry.value
		if wanted is not None and dist in _OWN and dist != owner:
			continue  # it registers only its own names: not this one
		try:
			module = entry.load()
		except Exception as exc:
			raise PluginError(
				f"the commands of {dist} could not be loaded: {type(exc).__name__}: {exc}",
				plugin=f"commands:{entry.name}",
			) from exc
		pm = pluggy.PluginManager("openmolt")
		pm.add_hookspecs(hookspecs)
		pm.register(module)

		def register(
			name: str, main: Callable[[list[str]], int], *, summary: str, _dist: str = dist
		) -> None:
			if name in found and found[name].distribution != _dist:
				raise PluginError(
					f"openmolt {name}: registered by {found[name].distribution} and by {_dist}; "
					"uninstall one",
					plugin=f"commands:{name}",
				)
			found[name] = RegisteredCommand(name, main, summary, _dist)

		pm.hook.register_commands(register=register)
	return found


def find(name: str) -> RegisteredCommand | None:
	"""The command ``name`` if a plugin registers it.

	Raises:
		ConfigurationError: It is one of OpenMolt's plugin commands, and its distribution is not
			installed; the message says what to install.
	"""
	command = (_found if _found is not None else _load(name)).get(name)
	if command is not None:
		return command
	extra = PLUGIN_COMMANDS.get(name)
	if extra is None:
		return None
	from openmolt_core._hints import install_command

	raise ConfigurationError(
		f"openmolt {name} needs the {extra} extension, which is not installed; run: "
		f"{install_command(f'openmolt[{extra}]')}"
	)
