"""The tools an agent's run gets, from every source: ``openmolt tools AGENT_FILE`` and ``--dry-run``.

An agent's tools come from its integrations, its MCP servers (listed only by starting them), its
OpenAPI documents, its Python functions and HTTP tools, the agents it uses as tools, its skills
(``skills.load``) and its capabilities. Both commands list what the agent holds once its run-time
sources have answered, and only the tools its scopes allow, so they show what a run would get.
"""

from __future__ import annotations

import json
from typing import IO, TYPE_CHECKING, Any

from openmolt_core.errors import ConfigurationError

if TYPE_CHECKING:
	from openmolt_core.agent import Agent

__all__ = ["agent_tools", "list_agent_tools", "list_file_tools"]


def agent_tools(agent: Agent) -> list[dict[str, Any]]:
	"""The tools the agent's runs get (its scopes allow them), in the order the model sees them.

	Each is ``{"tool", "description", "labels", "approval", "inputSchema"}``: the handle, the
	description, the taint labels as the agent's policy reads them, the approval rule that makes
	its calls wait (or None) and the input schema.
	"""
	return [
		{
			"tool": bound.handle,
			"description": bound.tool.description,
			"labels": sorted(bound.labels),
			"approval": bound.approval,
			"inputSchema": bound.tool.input_schema,
		}
		for bound in agent._tools.values()
		if bound.allowed
	]


def _one_line(text: str, width: int) -> str:
	line = " ".join(text.split())
	return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def _chosen(tools: list[dict[str, Any]], handle: str, file: str) -> dict[str, Any]:
	"""The tool ``handle`` names: its whole handle, or the part after the dot when one matches."""
	exact = [t for t in tools if t["tool"] == handle]
	short = [t for t in tools if t["tool"].rsplit(".", 1)[-1] == handle]
	if exact or len(short) == 1:
		return (exact or short)[0]
	if short:
		names = ", ".join(t["tool"] for t in short)
		raise ConfigurationError(
			f"{file}: {handle!r} names several tools ({names}); give one whole"
		)
	from openmolt_core._hints import close_match, tools_meant

	by_name = {t["tool"].rsplit(".", 1)[-1]: t["tool"] for t in tools}
	hint = tools_meant(handle, [t["tool"] for t in tools])
	if not hint and (short_near := close_match(handle, list(by_name))):
		hint = f"; did you mean {by_name[short_near]!r}?"
	raise ConfigurationError(
		f"{file}: the agent has no tool {handle!r}{hint} (`openmolt tools {file}` lists them)"
	)


def list_agent_tools(
	agent: Agent, file: str, out: IO[str], *, as_json: bool, handle: str | None = None
) -> None:
	"""Print the agent's tools as a table, or one tool whole (``handle``), or all as JSON.

	Raises:
		ConfigurationError: ``handle`` names no tool of the agent, or several.
	"""
	tools = agent_tools(agent)
	if handle is not None:
		tool = _chosen(tools, handle, file)
		if as_json:
			out.write(json.dumps(tool, indent=2, ensure_ascii=False, default=str) + "\n")
			return
		out.write(f"{tool['tool']}  [{', '.join(tool['labels']) or 'no labels'}]\n\n")
		out.write(str(tool["description"]).strip() + "\n\ninput schema:\n")
		out.write(json.dumps(tool["inputSchema"], indent=2, ensure_ascii=False, default=str) + "\n")
		return
	if as_json:
		data = {"agent": agent.name, "file": file, "tools": tools}
		out.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
		return
	out.write(f"{agent.name} ({file}): the tools a run gets ({len(tools)})\n\n")
	rows = []
	for tool in tools:
		schema = tool["inputSchema"] if isinstance(tool["inputSchema"], dict) else {}
		required = ", ".join(str(r) for r in schema.get("required", [])) or "-"
		rows.append((tool["tool"], required, _one_line(str(tool["description"]), 60)))
	head = ("tool", "required inputs", "what it does")
	widths = [max(len(r[i]) for r in (head, *rows)) for i in range(2)]
	for row in (head, *rows):
		out.write(f"  {row[0].ljust(widths[0])}  {row[1].ljust(widths[1])}  {row[2]}\n")
	if not rows:
		out.write("  (none)\n")
	out.write(
		f"\n`openmolt tools {file} TOOL` shows one tool's description and input schema; --json "
		"prints everything.\n"
	)


async def list_file_tools(
	file: str, out: IO[str], *, as_json: bool, handle: str | None = None
) -> None:
	"""Build an agent file's agent, start its run-time tool sources, and list its tools.

	MCP servers are started to list their tools, then stopped; no model is called and no key is
	needed.

	Raises:
		OpenMoltError: The file is wrong, a source cannot be listed, or ``handle`` names no tool.
	"""
	from openmolt_core.cli._run import load

	loaded = load(file, env_file=None, verbose=False)
	try:
		await loaded.agent._refresh_tools()
		list_agent_tools(loaded.agent, file, out, as_json=as_json, handle=handle)
	finally:
		await loaded.om.aclose()
