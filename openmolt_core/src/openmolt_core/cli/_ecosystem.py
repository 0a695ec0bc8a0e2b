"""``openmolt import-openapi SPEC``, and the extensions other commands use.

```
openmolt import-openapi SPEC --id NAME [--tag T]... [--operation ID]... [--base-url URL]
                        [--allow-internal-host HOST]... [--label TOOL=LABELS]...
                        [--format py|json] [--output FILE]
    write an integration module (or JSON) with one HttpTool per operation
```

The core never imports its plugins: an extension (the MCP client for agent files' ``mcpServers``,
the viewer for ``--ui``) is found through the ``openmolt.extensions`` entry point of its
distribution, loaded only when used. ``openmolt mcp`` is openmolt-mcp's own command
(``register_commands``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from openmolt_core.errors import ConfigurationError

__all__ = ["ECOSYSTEM_COMMANDS", "extension", "main"]

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


def _import_openapi(args: Sequence[str]) -> int:
	from openmolt_core.openapi import from_openapi, to_json, to_module

	parser = argparse.ArgumentParser(
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
		"--label",
		action="append",
		default=[],
		metavar="TOOL=LABELS",
		help="a tool's taint labels instead of its method's: getPet=untrusted,private",
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
	)
	text = (
		to_json(integration) if fmt == "json" else to_module(integration, source=Path(ns.spec).name)
	)
	if ns.output:
		Path(ns.output).write_text(text, encoding="utf-8")
		print(
			f"openmolt: wrote {len(integration.tools)} tools of {integration.name!r} to {ns.output}",
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
