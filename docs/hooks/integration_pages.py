"""mkdocs hook: one page per installed integration, generated from its definition at build time.

Pages are never committed, so they cannot drift from the code: tools, scopes, credential types,
the config keys each reads (`openmolt_core.integrations.connect`, which ``openmolt tools ID``
prints too), the environment variable, and the "get a token" guide with the OAuth scopes to
request all come from each integration's `Integration` object.
"""

from __future__ import annotations

import fnmatch
import functools
import json
from importlib import metadata
from typing import Any

from mkdocs.structure.files import File, Files

from openmolt_core.integrations.connect import credential_needs, env_var
from openmolt_core.integrations.model import HttpTool, Integration
from openmolt_core.plugins import extra_for


@functools.cache
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
	out += _credentials(iid, spec)
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
	out += _token_guide(iid, spec)
	return "\n".join(out)


def _credentials(iid: str, spec: Integration) -> list[str]:
	"""Each credential type, the config keys it reads, and where the values go."""
	needs = credential_needs(spec, iid)
	if not needs:
		return ["## Credentials", "", "None: this integration needs no credential.", ""]
	out = ["## Credentials", ""]
	out += [
		"The first type is the default; an agent picks another with",
		f"`{{'integration': '{iid}', 'credential': {{'type': ..., 'config': {{...}}}}}}`.",
		"",
	]
	for need in needs:
		out += [f"### `{need.type}`{' (default)' if need.default else ''}", ""]
		out += [
			"| config key | environment variable | required | secret | used for |",
			"| --- | --- | --- | --- | --- |",
		]
		for key in need.keys:
			out.append(
				f"| `{key.name}` | `{key.env_var or env_var(iid, key.name)}` "
				f"| {'yes' if key.required else ''} | {'yes' if key.secret else ''} "
				f"| {_cell(key.used_for)} |"
			)
		out.append("")
		if need.oauth_scopes:
			out += [
				"OAuth scopes to request: " + ", ".join(f"`{s}`" for s in need.oauth_scopes),
				"",
			]
		if need.auth_url:
			out += [f"Authorize at `{_cell(need.auth_url)}`; tokens from `{need.token_url}`.", ""]
		out += [f"- {note}" for note in need.notes]
		if need.notes:
			out.append("")
	first = needs[0].keys
	shown = [k.name for k in first if k.required] or [
		k.name for k in first if k.name not in ("accessToken", "expiryDate")
	]
	example = ", ".join(f'"{k}": "..."' for k in shown[:3])
	out += [
		"## Configuration",
		"",
		"Give the values once per instance, or per agent (the agent's win):",
		"",
		"```python",
		f'om = OpenMolt(integrations={{"{iid}": {{{example}}}}})',
		f'agent = om.create_agent(..., integrations=["{iid}"])',
		"```",
		"",
		f'In an agent file: `"integrations": {{"{iid}": {{{example}}}}}`.',
	]
	named = ", ".join(f"`{env_var(iid, k)}`" for k in shown[:2])
	out += [
		"",
		f"Every key also comes from its environment variable ({named}...: the table above). "
		"The `openmolt` command reads the environment, then a `.env` file, then "
		f"`openmolt keys set {iid}`, before the agent file; Python code reads the environment "
		"for a key its config does not give.",
	]
	out.append("")
	return out


def _token_guide(iid: str, spec: Integration) -> list[str]:
	"""The integration's own guide (the vendor's console steps), then the scopes to request."""
	out: list[str] = []
	guide = spec.docs.strip()
	if guide and "## Get a token" not in guide:
		out += ["## Get a token", ""]
	if guide:
		out += [guide, ""]
	scopes = [s for need in credential_needs(spec, iid) for s in need.oauth_scopes]
	if scopes:
		out += [
			"### OAuth scopes to request",
			"",
			"Ask for these when authorizing the app (they cover every tool; grant fewer and give",
			"the agent matching `scopes`):",
			"",
			*[f"- `{s}`" for s in dict.fromkeys(scopes)],
			"",
		]
	return out


def _with_pages(nav: Any) -> Any:
	"""The nav with the index entry made a section: the index, then each integration's page."""
	if isinstance(nav, list):
		return [_with_pages(item) for item in nav]
	if isinstance(nav, dict):
		out = {}
		for title, value in nav.items():
			if value == "integrations/index.md":
				pages = [{spec.name: f"integrations/{iid}.md"} for iid, spec in _load()]
				out[title] = [{"All integrations": value}, *pages]
			else:
				out[title] = _with_pages(value)
		return out
	return nav


def on_config(config: Any) -> Any:
	"""Put each generated page in the nav, under the Integrations entry (a section of them)."""
	if config.get("nav"):
		config["nav"] = _with_pages(config["nav"])
	return config


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
