"""Commands that only inform: ``plugins``, ``tools``, ``schema`` and ``--dry-run``."""

from __future__ import annotations

import json
from typing import IO, TYPE_CHECKING, Any

from openmolt_core.cli._agentfile import AgentFile
from openmolt_core.result import RunState

if TYPE_CHECKING:
	from openmolt_core.agent import Agent
	from openmolt_core.openmolt import OpenMolt

__all__ = ["PRICES", "dry_run", "list_plugins", "list_tools", "print_schema"]

PRICES: dict[str, tuple[float, float]] = {
	"openai:gpt-5": (1.25, 10.0),
	"openai:gpt-5-mini": (0.25, 2.0),
	"openai:gpt-5-nano": (0.05, 0.4),
	"openai:gpt-4.1": (2.0, 8.0),
	"openai:gpt-4.1-mini": (0.4, 1.6),
	"openai:gpt-4o": (2.5, 10.0),
	"openai:gpt-4o-mini": (0.15, 0.6),
	"anthropic:claude-opus-4-1": (15.0, 75.0),
	"anthropic:claude-sonnet-4-5": (3.0, 15.0),
	"anthropic:claude-haiku-4-5": (1.0, 5.0),
	"google:gemini-2.5-pro": (1.25, 10.0),
	"google:gemini-2.5-flash": (0.3, 2.5),
	"google:gemini-2.5-flash-lite": (0.1, 0.4),
}
"""List prices in US dollars per million (input, output) tokens, for ``--dry-run`` estimates only."""

ASSUMED_OUTPUT_TOKENS = 500
"""Output tokens assumed for one step in the dry-run estimate."""


def print_schema(out: IO[str]) -> None:
	"""Print the JSON Schema of agent files."""
	schema = AgentFile.model_json_schema(by_alias=True)
	schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
	out.write(json.dumps(schema, indent=2) + "\n")


def list_plugins(om: OpenMolt, out: IO[str], *, as_json: bool) -> None:
	"""Print the installed provider and integration plugins with their versions."""
	rows = om.plugins.installed()
	if as_json:
		data = [
			{"group": p.group, "name": p.name, "distribution": p.distribution, "version": p.version}
			for p in rows
		]
		out.write(json.dumps(data, indent=2) + "\n")
		return
	for group in ("providers", "integrations"):
		out.write(f"{group}:\n")
		entries = [p for p in rows if p.group == group]
		if not entries:
			out.write("  (none installed)\n")
		width = max((len(p.name) for p in entries), default=0)
		for p in entries:
			out.write(f"  {p.name.ljust(width)}  {p.distribution} {p.version}\n")


def list_tools(om: OpenMolt, integration_id: str, out: IO[str], *, as_json: bool) -> None:
	"""Print an integration's scopes and tools with their scopes and input schemas.

	Raises:
		PluginError: The integration is not installed.
	"""
	spec = om.plugins.integration(integration_id)
	tools = [
		{
			"tool": f"{integration_id}.{t.handle}",
			"description": t.description,
			"scopes": list(t.scopes),
			"inputSchema": t.input_schema,
		}
		for t in spec.tools
	]
	if as_json:
		data = {
			"integration": integration_id,
			"name": spec.name,
			"scopes": spec.scopes,
			"tools": tools,
		}
		out.write(json.dumps(data, indent=2, default=str) + "\n")
		return
	out.write(f"{spec.name} ({integration_id})\n\nscopes:\n")
	for scope, text in spec.scopes.items():
		out.write(f"  {scope}: {text}\n")
	out.write(f"\ntools ({len(tools)}):\n")
	for tool in tools:
		out.write(f"\n  {tool['tool']}  [{', '.join(tool['scopes']) or 'no scope'}]\n")
		out.write(f"    {tool['description']}\n")
		schema = json.dumps(tool["inputSchema"], indent=2, default=str)
		out.write("    input: " + schema.replace("\n", "\n    ") + "\n")


def estimate(model_id: str, tokens: int) -> tuple[float | None, str]:
	"""The cost of one step: the prompt's tokens in, `ASSUMED_OUTPUT_TOKENS` out."""
	price = PRICES.get(model_id)
	if price is None:
		return None, f"price of {model_id} unknown: only tokens are estimated"
	cost = tokens * price[0] / 1e6 + ASSUMED_OUTPUT_TOKENS * price[1] / 1e6
	return cost, (
		f"≈ ${cost:.4f} for one step with {model_id} ({tokens} input tokens at ${price[0]:g}/M, "
		f"{ASSUMED_OUTPUT_TOKENS} output tokens assumed at ${price[1]:g}/M; list prices, no cache)"
	)


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
	chars = len(system) + len(first)
	tokens = (chars + 3) // 4
	cost, cost_text = estimate(model_id, tokens)
	tools = [
		{"tool": t.handle, "description": t.tool.description}
		for t in agent._tools.values()
		if t.allowed
	]
	if as_json:
		data = {
			"model": model_id,
			"system": system,
			"first_message": first,
			"tools": tools,
			"structured_output": structured,
			"characters": chars,
			"estimated_tokens": tokens,
			"token_estimate": "characters / 4",
			"estimated_step_cost_usd": cost,
		}
		out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
		return
	out.write("=== maestro prompt (system) ===\n" + system + "\n\n")
	out.write("=== first message ===\n" + first + "\n\n")
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
	out.write("\n=== estimate ===\n")
	out.write(f"prompt: {chars} characters ≈ {tokens} tokens (characters / 4, a rough estimate)\n")
	out.write(f"cost: {cost_text}\n")
