"""Commands that only inform: ``plugins``, ``tools``, ``schema`` and ``--dry-run``."""

from __future__ import annotations

import json
import os
import re
from typing import IO, TYPE_CHECKING, Any

from openmolt_core._support.words import quantity
from openmolt_core.cli._agentfile import AgentFile
from openmolt_core.errors import ConfigurationError, OpenMoltError
from openmolt_core.result import RunState

if TYPE_CHECKING:
	from openmolt_core.agent import Agent
	from openmolt_core.openmolt import OpenMolt

__all__ = [
	"ASSUMED_OUTPUT_TOKENS",
	"agent_file_schema",
	"dry_run",
	"estimate",
	"list_integrations",
	"list_plugins",
	"list_tools",
	"print_schema",
]

ASSUMED_OUTPUT_TOKENS = 500
"""Output tokens assumed for one step in the dry-run estimate."""


_SNAKE_NAMES = {"model_settings": "model_config"}  # the field's Python name is not the key


def _both_spellings(camel: dict[str, Any], snake: dict[str, Any]) -> None:
	"""Add each object's snake_case keys to the camelCase schema: the loader accepts both."""
	props, other = camel.get("properties"), snake.get("properties")
	if isinstance(props, dict) and isinstance(other, dict):
		for name, (field, snake_sub) in zip(list(props), list(other.items()), strict=True):
			snake_name: str = _SNAKE_NAMES.get(str(field)) or str(field)
			if snake_name != name and not snake_name.endswith("_"):
				props[snake_name] = snake_sub
				if name in camel.get("required", []):
					raise AssertionError(
						f"required key {name!r} has two spellings"
					)  # pragma: no cover
	for key in ("$defs",):
		for name, sub in camel.get(key, {}).items():
			_both_spellings(sub, snake[key][name])


def _provider_settings(om: OpenMolt) -> dict[str, Any]:
	"""The settings keys of the installed providers that declare them, for editor completion."""
	from pydantic import BaseModel

	props: dict[str, Any] = {
		"provider": {
			"type": "string",
			"description": "For a named instance: the provider plugin it is an instance of "
			"(e.g. 'openai' for an 'ollama' entry).",
		}
	}
	for name in om.plugins.provider_names():
		try:
			factory = om.plugins.provider(name)
		except OpenMoltError:
			continue
		model = getattr(factory, "settings_model", None)
		if not (isinstance(model, type) and issubclass(model, BaseModel)):
			continue
		for by_alias in (True, False):
			schema = model.model_json_schema(by_alias=by_alias)
			for key, sub in schema.get("properties", {}).items():
				entry = props.setdefault(key, {k: v for k, v in sub.items() if k != "title"})
				entry.setdefault("x-providers", [])
				if name not in entry["x-providers"]:
					entry["x-providers"].append(name)
	for entry in props.values():
		if "x-providers" in entry:
			entry["description"] = (
				f"{entry.get('description', '')} (providers: {', '.join(entry.pop('x-providers'))})"
			).strip()
	return {
		"type": "object",
		"description": "Settings per provider or named instance, e.g. {'openai': {'apiKey': "
		"'...'}} or {'ollama': {'provider': 'openai', 'baseUrl': 'http://localhost:11434/v1', "
		"'apiMode': 'chat'}}.",
		"additionalProperties": {
			"type": "object",
			"properties": dict(sorted(props.items())),
			"additionalProperties": True,
		},
	}


def agent_file_schema(om: OpenMolt) -> dict[str, Any]:
	"""The JSON Schema of agent files: camelCase and snake_case keys, provider settings."""
	camel = AgentFile.model_json_schema(by_alias=True)
	snake = AgentFile.model_json_schema(by_alias=False)
	_both_spellings(camel, snake)
	providers = _provider_settings(om)
	for key in ("llmProviders", "llm_providers"):
		camel["properties"][key] = providers
	return {"$schema": "https://json-schema.org/draft/2020-12/schema", **camel}


def print_schema(out: IO[str], om: OpenMolt) -> None:
	"""Print the JSON Schema of agent files."""
	out.write(json.dumps(agent_file_schema(om), indent=2, ensure_ascii=False) + "\n")


def list_plugins(om: OpenMolt, out: IO[str], *, as_json: bool) -> None:
	"""Print the installed provider, integration and skill plugins with their versions."""
	rows = om.plugins.installed()
	if as_json:
		data = [
			{"group": p.group, "name": p.name, "distribution": p.distribution, "version": p.version}
			for p in rows
		]
		out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
		return
	for group in ("providers", "integrations", "skills"):
		if group == "skills" and not any(p.group == group for p in rows):
			continue  # few installs have skill plugins
		out.write(f"{group}:\n")
		entries = [p for p in rows if p.group == group]
		if not entries:
			out.write("  (none installed)\n")
		width = max((len(p.name) for p in entries), default=0)
		for p in entries:
			out.write(f"  {p.name.ljust(width)}  {p.distribution} {p.version}\n")


def list_integrations(om: OpenMolt, out: IO[str], *, as_json: bool) -> None:
	"""Print every integration that is installed or registered: id, name, tools, distribution.

	Each plugin is loaded to read its integration; one that fails to load is listed with why.
	"""
	rows: list[dict[str, Any]] = []
	sources = {p.name: p for p in om.plugins.installed() if p.group == "integrations"}
	for iid in om.plugins.integration_ids():
		info = sources.get(iid)
		row: dict[str, Any] = {
			"integration": iid,
			"distribution": info.distribution if info else "",
			"version": info.version if info else "",
		}
		try:
			spec = om.plugins.integration(iid)
		except OpenMoltError as exc:
			row.update(name=None, tools=None, error=str(exc))
		else:
			row.update(name=spec.name, tools=len(spec.tools), scopes=sorted(spec.scopes))
		rows.append(row)
	if as_json:
		out.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
		return
	width = max((len(r["integration"]) for r in rows), default=0)
	for r in rows:
		count = r["tools"]
		what = f"{r['name']}, {quantity(count, 'tool')}" if count is not None else r["error"]
		out.write(
			f"  {r['integration'].ljust(width)}  {what}  ({r['distribution']} {r['version']})\n"
		)
	out.write(
		f"\n{quantity(len(rows), 'integration')}; `openmolt tools ID` lists one's tools, "
		"`openmolt tools AGENT_FILE` the tools an agent's runs get.\n"
	)


def _first_paragraph(text: str) -> str:
	"""A description's first paragraph, its lines and spaces joined as one line."""
	return " ".join(text.strip().split("\n\n")[0].split())


def _one_line(text: str, width: int = 72) -> str:
	first = _first_paragraph(text)
	# The first sentence: a period after "e.g" or "i.e" does not end it.
	sentence = re.split(r"(?<!\be\.g)(?<!\bi\.e)\. ", first)[0].rstrip(".")
	line = sentence if len(sentence) <= width else sentence[: width - 1].rstrip() + "…"
	return line


_DESCRIPTION = 60
"""The characters of a tool's description in the table, off a terminal."""
_MIN_DESCRIPTION = 24
"""The fewest characters of a description on a narrow terminal (the row wraps past that)."""
_MAX_DESCRIPTION = 100
"""The most characters of a description on a wide terminal."""


def _columns(out: IO[str]) -> int:
	"""The terminal's width when ``out`` is one, else 0."""
	import shutil

	try:
		tty = out.isatty()
	except (AttributeError, ValueError):
		return 0
	return shutil.get_terminal_size((0, 0)).columns if tty else 0


def _how_to_connect(docs: str) -> list[str]:
	"""The user-facing part of an integration's docs: up to its notes on reference checks.

	Each ``pip install`` command it names becomes the one that installs the requirement where this
	Python runs (`openmolt_core._hints.install_commands_in`: ``uv add`` in a uv project, ``uv tool
	install`` for a uv tool, ...).
	"""
	lines: list[str] = []
	for line in docs.strip().splitlines():
		heading = line.lower()
		if line.startswith("#") and any(w in heading for w in ("reference", "check", "test")):
			break
		lines.append(line)
	while lines and not lines[-1].strip():
		lines.pop()
	if any("pip" in line for line in lines):
		from openmolt_core._hints import install_commands_in

		lines = [install_commands_in(line) for line in lines]
	return lines


def list_tools(
	om: OpenMolt, integration_id: str, out: IO[str], *, as_json: bool, handle: str | None = None
) -> None:
	"""Print an integration's credentials, scopes and a table of its tools (or one tool whole).

	Args:
		om: The instance whose plugins are read.
		integration_id: The integration.
		out: Where to write.
		as_json: Print everything as JSON (each tool's input schema included).
		handle: One tool's handle (``postMessage`` or ``slack.postMessage``): print it whole.

	Raises:
		PluginError: The integration is not installed.
		ConfigurationError: The integration has no tool of that handle.
	"""
	from openmolt_core.integrations.connect import credential_needs, needs_as_json

	spec = om.plugins.integration(integration_id)
	integration_id = spec.id or integration_id  # the extra's spelling names the same one
	needs = credential_needs(spec, integration_id)
	tools: list[dict[str, Any]] = [
		{
			"tool": f"{integration_id}.{t.handle}",
			"description": t.description,
			"scopes": list(t.scopes),
			"inputSchema": t.input_schema,
		}
		for t in spec.tools
	]
	if handle is not None:
		wanted = handle if "." in handle else f"{integration_id}.{handle}"
		chosen = [t for t in tools if t["tool"] == wanted]
		if not chosen:
			from openmolt_core._hints import tools_meant

			hint = tools_meant(wanted, [t["tool"] for t in tools])
			raise ConfigurationError(
				f"{integration_id} has no tool {handle!r}{hint} (`openmolt tools {integration_id}` "
				"lists them)"
			)
		tool = chosen[0]
		if as_json:
			out.write(json.dumps(tool, indent=2, ensure_ascii=False, default=str) + "\n")
			return
		out.write(f"{tool['tool']}  [{', '.join(tool['scopes']) or 'no scope'}]\n\n")
		out.write(tool["description"].strip() + "\n\ninput schema:\n")
		out.write(json.dumps(tool["inputSchema"], indent=2, ensure_ascii=False, default=str) + "\n")
		return
	if as_json:
		data = {
			"integration": integration_id,
			"name": spec.name,
			"scopes": spec.scopes,
			"credentials": needs_as_json(needs, integration_id),
			"docs": spec.docs,
			"tools": tools,
		}
		out.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
		return
	out.write(f"{spec.name} ({integration_id})\n")
	if spec.description:  # its first paragraph whole, wrapped: a table row cuts, this does not
		import textwrap

		first = _first_paragraph(spec.description)
		out.write(textwrap.fill(first, 100, break_long_words=False, break_on_hyphens=False) + "\n")
	_write_needs(out, needs, integration_id)
	howto = _how_to_connect(spec.docs)
	if howto:
		from openmolt_core.cli._howto import for_agent_files

		howto = for_agent_files(howto, integration_id, needs[0].type if needs else None)
		out.write("\nhow to connect:\n")
		for line in howto:
			out.write(f"  {line}".rstrip() + "\n")
	out.write("\nscopes:\n")
	for scope, text in spec.scopes.items():
		out.write(f"  {scope}: {text}\n")
	rows: list[tuple[str, str, str, str]] = []
	for tool in tools:
		schema = tool["inputSchema"] or {}
		required = schema.get("required", []) if isinstance(schema, dict) else []
		rows.append((tool["tool"], ",".join(tool["scopes"]) or "-", ", ".join(required) or "-", ""))
	widths = [max((len(r[i]) for r in rows), default=0) for i in range(3)]
	widths = [
		max(w, len(h)) for w, h in zip(widths, ("tool", "scopes", "required inputs"), strict=True)
	]
	# On a terminal each row fits its width (a wrapped row is no table); else 60 characters.
	columns = _columns(out)
	room = columns - 2 - sum(w + 2 for w in widths)
	said = min(max(room, _MIN_DESCRIPTION), _MAX_DESCRIPTION) if columns else _DESCRIPTION
	rows = [(*r[:3], _one_line(t["description"], said)) for r, t in zip(rows, tools, strict=True)]
	out.write(f"\ntools ({len(tools)}):\n")
	head = ("tool", "scopes", "required inputs", "what it does")
	for row in (head, *rows):
		cells = [row[i].ljust(widths[i]) for i in range(3)]
		out.write(f"  {'  '.join(cells)}  {row[3]}\n")
	out.write(
		f"\n`openmolt tools {integration_id} TOOL` shows one tool's description and input schema; "
		"--json prints everything.\n"
	)


def _write_needs(out: IO[str], needs: list[Any], integration_id: str) -> None:
	"""The credentials section of ``openmolt tools ID``: each type, its keys, their sources."""
	if not needs:
		out.write("\ncredentials: none needed\n")
		return
	out.write("\ncredentials (the first is the default; choose another with credential.type):\n")
	from openmolt_core.cli._keystore import where_set

	found = where_set()
	for need in needs:
		out.write(f"\n  {need.type}{' (default)' if need.default else ''}:\n")
		width = max((len(k.name) for k in need.keys), default=0)
		var_width = max((len(k.env_var or "") for k in need.keys), default=0)
		flags = []
		for key in need.keys:
			said = "required" if key.required else "optional"
			said += ", secret" if key.secret else ""
			if key.env_var in found:  # where the command finds it now; never the value
				said += f", set in {found[key.env_var or '']}"
			flags.append(said)
		flag_width = max(18, *(len(f) for f in flags))
		for key, said in zip(need.keys, flags, strict=True):
			variable = key.env_var or ""
			out.write(
				f"    {key.name:<{width}}  {variable:<{var_width}}  {said:<{flag_width}}  "
				f"{key.used_for}\n"
			)
		if need.oauth_scopes:
			out.write(f"    OAuth scopes to request: {' '.join(need.oauth_scopes)}\n")
		if need.auth_url:
			out.write(f"    authorize at: {need.auth_url}\n")
		for note in need.notes:
			out.write(f"    note: {note}\n")
	out.write(
		"\ngive the values in the environment variables above (the openmolt command also reads "
		"a .env file, and both win over the agent file; `openmolt keys set "
		f"{integration_id}` fills what none of them gives), or in the agent file's "
		f'"integrations": [{{"integration": "{integration_id}", "credential": {{"config": '
		"{...}}}] (in Python code: OpenMolt(integrations={...}))\n"
	)


def estimate(
	price: tuple[float, float, float, float | None] | None,
	model_id: str,
	tokens: int,
	near: str | None = None,
) -> tuple[float | None, str]:
	"""The cost of one step: the prompt's tokens in, `ASSUMED_OUTPUT_TOKENS` out.

	Args:
		price: The provider's list price of the model (USD per million tokens: input, cached
			input, output, cache write), or None when unknown.
		model_id: The model id, for the text.
		tokens: The estimated input tokens.
		near: A priced model the id may mistype (``openai:gpt-5-mini`` for ``openai:gpt5-mini``).
	"""
	if price is None:
		hint = f" (did you mean {near!r}? `openmolt models` lists them)" if near else ""
		return None, f"price of {model_id} unknown{hint}: only tokens are estimated"
	inp, _, outp, _ = price
	cost = tokens * inp / 1e6 + ASSUMED_OUTPUT_TOKENS * outp / 1e6
	return cost, (
		f"≈ ${cost:.4f} for one step with {model_id} ({tokens} input tokens at ${inp:g}/M, "
		f"{ASSUMED_OUTPUT_TOKENS} output tokens assumed at ${outp:g}/M; list prices, no cache)"
	)


def _price(agent: Agent) -> tuple[float, float, float, float | None] | None:
	# The provider's own price table is the one source; a provider without one has no price.
	try:
		provider = agent.provider()
	except OpenMoltError:
		return None
	price = getattr(provider, "price", None)
	return price(agent.model) if callable(price) else None


def _not_the_vendors(agent: Agent) -> str:
	"""Why a known vendor's model has no price here: its calls go to another server, or ""."""
	try:
		provider = agent.provider()
	except OpenMoltError:
		return ""
	if getattr(provider, "official", True) is not False:
		return ""
	url = getattr(provider, "base_url", "")
	from openmolt_core._envvars import env_var

	variable = env_var(agent.provider_name or str(getattr(provider, "name", "")), "baseUrl")
	how = f", set by {variable}" if os.environ.get(variable) else ""
	return f"its calls go to {url}{how}, not the vendor's API: list prices are the vendor's own"


def _listed_near(agent: Agent) -> str | None:
	"""The model the provider lists that ``agent.model`` mistypes, as ``provider:model``."""
	try:
		listed = getattr(agent.provider(), "models", None)
		names = list(listed()) if callable(listed) else []
	except Exception:  # only a hint: a provider that cannot say is passed over
		return None
	from openmolt_core._support.suggest import typo_of

	near = typo_of(agent.model, names, cutoff=0.85)
	return f"{agent.provider_name}:{near}" if near and near != agent.model else None


def _searching(agent: Agent) -> bool:
	"""Whether the agent searches its tools (its first message lists a catalog)."""
	from openmolt_core.capabilities.toolsearch import ToolCatalog

	return any(isinstance(c, ToolCatalog) and c.searches(agent.tools) for c in agent.capabilities)


def _first_body(agent: Agent, input: Any) -> str | None:
	"""The JSON body of the run's first model call, as its provider builds it (None: unknown).

	Every built-in provider has ``build(request)``: the body it posts, reply schema, message
	wrappers and settings included, so the estimate is the bytes a run sends (OpenAI's
	Responses or Chat Completions, Anthropic, Gemini, a local server). A streamed request adds
	its ``stream`` flag. A provider without ``build`` (or that cannot build it now) is
	estimated from the prompt, the first message and the reply schema.
	"""
	build = getattr(agent.provider(), "build", None)
	if not callable(build):
		return None
	try:
		body = build(agent.first_request(input))
		return json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str)
	except Exception:  # a third-party provider's build: the estimate falls back, never fails
		return None


def _indented(text: str) -> str | None:
	"""A JSON text indented for a person to read (None: it is not JSON)."""
	try:
		return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
	except ValueError:
		return None


def dry_run(agent: Agent, model_id: str, input: Any, out: IO[str], *, as_json: bool) -> None:
	"""Print the maestro prompt, the first message, the visible tools and the cost of one step."""
	system = agent.system_prompt()
	fitted = agent.structured_output()
	structured = {
		"mode": fitted.mode,
		"dialect": fitted.dialect,
		"encoded": sorted(fitted.encoded),
		"relaxed": sorted(fitted.relaxed),
		"notes": list(fitted.notes),
	}
	first = agent.first_message(input, RunState())
	# The reply schema travels with every request (strict or partial modes): often the larger part.
	schema_chars = (
		len(json.dumps(fitted.schema, ensure_ascii=False, separators=(",", ":")))
		if fitted.schema is not None and fitted.mode != "off"
		else 0
	)
	body = _first_body(agent, input)
	chars = len(body) if body is not None else len(system) + len(first) + schema_chars
	sent = len(body.encode("utf-8", "replace")) if body is not None else None
	tokens = (chars + 3) // 4
	price = _price(agent)
	near = _listed_near(agent) if price is None else None
	cost, cost_text = estimate(price, model_id, tokens, near)
	if price is None and near is None and (elsewhere := _not_the_vendors(agent)):
		cost_text += f" ({elsewhere})"
	from openmolt_core.cli._agenttools import agent_tools

	tools = [{"tool": t["tool"], "description": t["description"]} for t in agent_tools(agent)]
	searching = _searching(agent)  # the first message lists a catalog
	if as_json:
		data = {
			"model": model_id,
			"models": agent.models,
			"tool_loading": "search" if searching else "all",
			"system": system,
			"first_message": first,
			"tools": tools,
			"structured_output": structured,
			"characters": chars,
			"request_bytes": sent,
			"counted": "the request body" if body is not None else "prompt, message and schema",
			"schema_characters": schema_chars,
			"estimated_tokens": tokens,
			"token_estimate": "characters / 4",
			"estimated_step_cost_usd": cost,
		}
		out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
		return
	out.write("=== maestro prompt (system) ===\n" + system + "\n\n")
	if out.isatty() and (indented := _indented(first)) is not None:
		# One JSON line of thousands of characters (every tool's schema) cannot be read there.
		out.write("=== first message (indented here; sent as one line) ===\n" + indented + "\n\n")
	else:
		out.write("=== first message ===\n" + first + "\n\n")
	if searching:
		out.write(f"=== tools the agent finds in its catalog and loads ({len(tools)}) ===\n")
	else:
		out.write(f"=== tools the agent sees ({len(tools)}) ===\n")
	for tool in tools:
		out.write(f"  {tool['tool']}: {tool['description']}\n")
	if not tools:
		out.write("  (none)\n")
	out.write(f"\n=== structured output: {fitted.mode} ({fitted.dialect or 'no dialect'}) ===\n")
	if fitted.encoded:
		out.write(f"  input sent as JSON text: {', '.join(sorted(fitted.encoded))}\n")
	if fitted.relaxed:
		out.write(f"  checked by OpenMolt, not the provider: {', '.join(sorted(fitted.relaxed))}\n")
	for note in fitted.notes:
		out.write(f"  {note}\n")
	if len(agent.models) > 1:
		out.write(f"\n=== models, in fallback order ===\n  {', '.join(agent.models)}\n")
	out.write("\n=== estimate ===\n")
	what = (
		f"the first request's body, {sent} bytes as the provider builds it"
		if sent is not None
		else "the prompt, the first message and the reply schema"
	)
	out.write(
		f"request: {chars} characters ({what}) ≈ {tokens} tokens (characters / 4, a rough "
		f"estimate; the reply schema is {schema_chars} of them)\n"
	)
	out.write(f"cost: {cost_text}\n")
