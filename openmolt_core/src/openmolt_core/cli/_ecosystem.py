"""``openmolt import-openapi SPEC``, the extensions other commands use, and the plugins seen.

```
openmolt import-openapi SPEC --id NAME [--tag T]... [--operation ID]... [--base-url URL]
                        [--allow-internal-host HOST]... [--allow-host HOST]...
                        [--label TOOL=LABELS]... [--format py|json] [--output FILE]
    write an integration module (or JSON) with one HttpTool per operation
```

The core never imports its plugins: an extension (the MCP client for agent files' ``mcpServers``,
the viewer for ``--ui``) is found through the ``openmolt.extensions`` entry point of its
distribution, loaded only when used. ``openmolt mcp`` is openmolt-mcp's own command
(``register_commands``).

The command also remembers which distribution provided each third-party plugin it saw installed
(`remember_plugins`, ``$XDG_STATE_HOME/openmolt/plugins.json``), so that an id whose distribution
was uninstalled since is told what to install again (`former_plugin_hint`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from openmolt_core._support.words import quantity
from openmolt_core.cli._argparse import CommandParser
from openmolt_core.errors import ConfigurationError, OpenMoltError, PluginError

__all__ = [
	"ECOSYSTEM_COMMANDS",
	"extension",
	"former_plugin_hint",
	"main",
	"plugin_record_path",
	"remember_plugins",
]

ECOSYSTEM_COMMANDS = ("import-openapi",)
"""The subcommands this module runs."""

_EXTRAS = {"mcp": "mcp", "ui": "ui", "dbos": "dbos", "serve": "serve"}


def extension(name: str, *, needed_for: str) -> Any:
	"""Load the object of an ``openmolt.extensions`` entry point (``mcp``: the MCP plugin).

	Args:
		name: The entry-point name.
		needed_for: What needs it, for the error message.

	Raises:
		ConfigurationError: It is not installed; the message says what to install.
	"""
	for entry in metadata.entry_points(group="openmolt.extensions", name=name):
		return entry.load()
	from openmolt_core._hints import install_command

	extra = _EXTRAS.get(name, name)
	raise ConfigurationError(
		f"{needed_for} needs the {name} extension, which is not installed; run: "
		f"{install_command(f'openmolt[{extra}]')}"
	)


# The plugins seen installed -------------------------------------------------------------------

_FIRST_PARTY = frozenset({"openmolt-core", "openmolt-providers", "openmolt-integrations"})
"""Distributions of the built-in plugins: their ids get the ``openmolt[...]`` hints instead."""


def plugin_record_path() -> Path:
	"""Where the command remembers third-party plugins: ``$XDG_STATE_HOME/openmolt/plugins.json``."""
	from openmolt_core._support.private import state_folder

	return state_folder() / "plugins.json"


def _read_record(path: Path) -> dict[str, dict[str, str]]:
	from openmolt_core._support.paths import read_text

	try:  # a few hundred bytes a plugin: anything larger, or no regular file, is no record
		data = json.loads(read_text(path, limit=1 << 20))
	except (OSError, ValueError, RecursionError):
		return {}
	if not isinstance(data, dict):
		return {}
	return {
		str(k): {"distribution": str(v["distribution"]), "version": str(v.get("version", ""))}
		for k, v in data.items()
		if isinstance(v, dict) and isinstance(v.get("distribution"), str)
	}


def remember_plugins(sources: Mapping[str, str]) -> None:
	"""Record the distribution of each third-party plugin seen (``integrations:weather``).

	The record is written only when it gains or changes an entry, and an id stays recorded
	after its distribution is uninstalled, which is the point. Never raises: the record only
	improves a later error message.

	Args:
		sources: Qualified plugin ids and the distributions that provide them
			(`openmolt_core.plugins.Plugins.sources`); built-in ones are left out.
	"""
	try:
		found = {
			key: {"distribution": dist, "version": metadata.version(dist)}
			for key, dist in sources.items()
			if dist not in _FIRST_PARTY and _installed(dist)
		}
		if not found:
			return
		path = plugin_record_path()
		record = _read_record(path)
		if all(record.get(key) == value for key, value in found.items()):
			return
		from openmolt_core._support.private import private_file

		record.update(found)
		private_file(path, own_dir=True)
		path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
	except Exception:  # a read-only home, a broken distribution: the record is optional
		return


def _installed(distribution: str) -> bool:
	try:
		metadata.distribution(distribution)
	except metadata.PackageNotFoundError:
		return False
	return True


def former_plugin_hint(exc: OpenMoltError) -> str | None:
	"""For a plugin that is not there: the distribution that provided it, now uninstalled.

	Args:
		exc: The error a run or a command stopped with.

	Returns:
		A line naming the distribution and the command that installs it again, or None when
		the error is not about a missing plugin or nothing is known about that id.
	"""
	if not isinstance(exc, PluginError):
		return None
	known = _read_record(plugin_record_path()).get(exc.plugin)
	if known is None or _installed(known["distribution"]):
		return None
	from openmolt_core._hints import install_command

	name = known["distribution"]
	version = f" {known['version']}" if known["version"] else ""
	return (
		f"{exc.plugin} was provided by {name}{version}, which is no longer installed; "
		f"run: {install_command(name)}"
	)


# mcp and import-openapi -------------------------------------------------------------------------


def _import_openapi(args: Sequence[str]) -> int:
	from openmolt_core.integrations.openapi import from_openapi, to_json, to_module

	parser = CommandParser(
		prog="openmolt import-openapi",
		description="Turn an OpenAPI 3 document into an integration module you can read and edit.",
	)
	parser.add_argument("spec", help="the OpenAPI document: a JSON or YAML file")
	parser.add_argument("--id", required=True, help="the integration id, e.g. petstore")
	parser.add_argument("--tag", action="append", default=[], help="only operations with this tag")
	parser.add_argument(
		"--operation", action="append", default=[], help="only this operationId (repeatable)"
	)
	parser.add_argument("--base-url", help="the API's base URL (default: the document's server)")
	parser.add_argument(
		"--allow-internal-host",
		action="append",
		default=[],
		metavar="HOST",
		help="an internal host or network the tools may reach (127.0.0.1, 10.20.0.0/16)",
	)
	parser.add_argument(
		"--allow-host",
		action="append",
		default=[],
		metavar="HOST",
		help="another host than the base URL's that serves some operations (upload.example.com)",
	)
	parser.add_argument(
		"--label",
		action="append",
		default=[],
		metavar="TOOL=LABELS",
		help="a tool's taint labels instead of its method and input's: getPet=untrusted,private",
	)
	parser.add_argument("--format", choices=("py", "json"), help="default: from --output, else py")
	parser.add_argument("--output", "-o", help="the file to write (default: stdout)")
	ns = parser.parse_args(args)
	fmt = ns.format or ("json" if ns.output and ns.output.endswith(".json") else "py")
	integration = from_openapi(
		Path(ns.spec),
		id=ns.id,
		tags=ns.tag or None,
		operations=ns.operation or None,
		base_url=ns.base_url,
		labels=_label_options(ns.label),
		allow_internal_hosts=ns.allow_internal_host,
		allow_hosts=ns.allow_host,
	)
	text = (
		to_json(integration) if fmt == "json" else to_module(integration, source=Path(ns.spec).name)
	)
	if ns.output:
		Path(ns.output).write_text(text, encoding="utf-8")
		print(
			f"openmolt: wrote {quantity(len(integration.tools), 'tool')} of {integration.name!r} to {ns.output}",
			file=sys.stderr,
		)
	else:
		sys.stdout.write(text)
	return 0


def _label_options(given: Sequence[str]) -> dict[str, list[str]] | None:
	labels: dict[str, list[str]] = {}
	for item in given:
		tool, sep, names = item.partition("=")
		if not sep or not tool:
			raise ConfigurationError(
				f"--label {item!r}: write TOOL=LABELS, e.g. getPet=untrusted,private (or getPet= "
				"for none)"
			)
		labels[tool] = [n.strip() for n in names.split(",") if n.strip()]
	return labels or None


def main(args: Sequence[str]) -> int:
	"""Run ``openmolt import-openapi`` (``args[0]`` is its name).

	Returns:
		The exit code.
	"""
	return _import_openapi(args[1:])
