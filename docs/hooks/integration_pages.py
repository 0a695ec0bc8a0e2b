"""mkdocs hook: one page per installed integration, generated from its definition at build time.

Pages are never committed, so they cannot drift from the code: tools, scopes, credential setup and
the "get a token" guide all come from each integration's `Integration` object.
"""

from __future__ import annotations

import fnmatch
import json
from importlib import metadata
from typing import Any

from mkdocs.structure.files import File, Files

from openmolt_core.integrations.model import HttpTool, Integration
from openmolt_core.plugins import extra_for

_SECRET_FIELDS = (
	"client_secret",
	"password",
	"secret_access_key",
	"session_token",
	"refresh_token",
)


def _load() -> list[tuple[str, Integration]]:
	found: list[tuple[str, Integration]] = []
	for ep in sorted(metadata.entry_points(group="openmolt.integrations"), key=lambda e: e.name):
		if ep.dist is None or not ep.dist.name.startswith("openmolt-"):
			continue
		if ep.dist.name in ("openmolt-weather",):  # the test suite's own plugin
			continue
		module = ep.load()
		registered: list[Integration] = []

		def register(
			integration: Any, *, id: str | None = None, into: list[Integration] = registered
		) -> None:
			spec = (
				integration
				if isinstance(integration, Integration)
				else Integration.model_validate(integration)
			)
			into.append(spec)

		module.register_integrations(register=register)
		found.extend((ep.name, spec) for spec in registered)
	return found


def _cell(text: str) -> str:
	return " ".join(str(text).split()).replace("|", "\\|")


def _fields(schema: dict[str, Any]) -> list[str]:
	props = schema.get("properties") or {}
	required = set(schema.get("required") or ())
	rows = []
	for name, sub in props.items():
		kind = sub.get("type", "any")
		if isinstance(kind, list):
			kind = " or ".join(kind)
		if "enum" in sub:
			kind = " \\| ".join(json.dumps(v) for v in sub["enum"])
		default = f" (default `{json.dumps(sub['default'])}`)" if "default" in sub else ""
		req = "yes" if name in required else ""
		rows.append(
			f"| `{name}` | {_cell(str(kind))} | {req} | {_cell(sub.get('description', ''))}{default} |"
		)
	return rows


def _page(iid: str, spec: Integration) -> str:
	out = [f"# {spec.name}", ""]
	if spec.description:
		out += [spec.description, ""]
	out += [
		f"- Integration id: `{iid}`; tool handles read `{iid}.<tool>`.",
		f'- Install: `pip install "openmolt[{extra_for(iid)}]"`.',
	]
	if spec.api_version:
		out.append(f"- API version targeted: `{spec.api_version}`.")
	if spec.api_setup.base_url:
		out.append(f"- Base URL: `{spec.api_setup.base_url}`.")
	out.append("")
	if spec.credential_setup:
		out += ["## Credentials", "", "| type | details |", "| --- | --- |"]
		for cred in spec.credential_setup:
			details = []
			if cred.headers:
				details.append("headers: " + ", ".join(f"`{k}`" for k in cred.headers))
			if cred.query_params:
				details.append("query: " + ", ".join(f"`{k}`" for k in cred.query_params))
			if cred.auth_url:
				details.append(f"authorize at `{cred.auth_url}`")
			if cred.token_url:
				details.append(f"token URL `{cred.token_url}`")
			if cred.scopes:
				details.append("OAuth scopes: " + ", ".join(f"`{s}`" for s in cred.scopes))
			out.append(f"| `{cred.type}` | {_cell('; '.join(details)) or '—'} |")
		out.append("")
	if spec.scopes:
		out += ["## Scopes", "", "| scope | allows | tools |", "| --- | --- | --- |"]
		for scope, desc in spec.scopes.items():
			tools = [t.handle for t in spec.tools if scope in t.scopes]
			out.append(f"| `{scope}` | {_cell(desc)} | {', '.join(f'`{t}`' for t in tools)} |")
		out.append("")
	out += ["## Tools", ""]
	for tool in spec.tools:
		out += [f"### `{tool.handle}`", "", _cell(tool.description), ""]
		if isinstance(tool, HttpTool):
			out += [f"`{tool.method} {tool.endpoint}`", ""]
		if tool.scopes:
			out += ["Scopes: " + ", ".join(f"`{s}`" for s in tool.scopes), ""]
		labels = sorted(
			{
				label
				for pattern, given in spec.labels.items()
				if fnmatch.fnmatchcase(tool.handle, pattern)
				for label in given
			}
		)
		if labels:  # the taint policy's view of the tool (docs/guides/safety.md)
			out += ["Labels: " + ", ".join(f"`{label}`" for label in labels), ""]
		rows = _fields(tool.input_schema or {})
		if rows:
			out += [
				"| input | type | required | description |",
				"| --- | --- | --- | --- |",
				*rows,
				"",
			]
	if spec.docs:
		out += [spec.docs.strip(), ""]
	return "\n".join(out)


def on_files(files: Files, config: Any) -> Files:
	"""Add ``integrations/<id>.md`` for each built-in integration and an index page."""
	found = _load()
	index = [
		"# Integrations",
		"",
		'Each built-in integration installs as an extra (`pip install "openmolt[notion,slack]"`) and',
		"is found through its entry point. Every page below is generated from the integration's",
		"definition: tools, scopes, credential setup and how to get a token.",
		"",
		"| integration | id | extra | tools |",
		"| --- | --- | --- | --- |",
	]
	for iid, spec in found:
		index.append(
			f"| [{spec.name}]({iid}.md) | `{iid}` | `{extra_for(iid)}` | {len(spec.tools)} |"
		)
		files.append(File.generated(config, f"integrations/{iid}.md", content=_page(iid, spec)))
	files.append(File.generated(config, "integrations/index.md", content="\n".join(index) + "\n"))
	return files
