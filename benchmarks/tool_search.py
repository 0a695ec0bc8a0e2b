"""Request bytes of an agent with 5 integrations (86 tools), with and without tool search.

    uv run python benchmarks/tool_search.py           # the table
    uv run python benchmarks/tool_search.py --json    # the figures as JSON

The agent (gmail, googleSheets, notion, slack, github) runs one task through the real provider
code (OpenAI Responses, Anthropic Messages, Gemini) over an in-process mock transport that records
each request body: list the latest mail and post a line to Slack (two tool calls in one reply),
then finish. Without search that is 2 requests; with search the model first searches, then loads
the two tools (4 requests). Printed per provider: the first request's bytes, the mean request and the mean growth
per step, and the task's total, next to the target (issue 21: with search, the first request is at
most 25% of the full one). Bytes are those of the HTTP body, reply schema included.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
from typing import Any

import anyio
import httpx

from openmolt import OpenMolt
from openmolt_core.testing import call_tool, finish

FIVE = ["gmail", "googleSheets", "notion", "slack", "github"]
GOOGLE = {
	"clientId": "id",
	"clientSecret": "secret",
	"refreshToken": "refresh",
	"accessToken": "ya29.access",
	"expiryDate": "2099-01-01T00:00:00Z",
}
CREDENTIALS = {
	"gmail": GOOGLE,
	"googleSheets": GOOGLE,
	"notion": {"apiKey": "secret_notion"},
	"slack": {"token": "xoxb-slack"},
	"github": {"apiKey": "ghp_github"},
}
MODELS = {
	"openai": "openai:gpt-5-mini",
	"anthropic": "anthropic:claude-sonnet-4-5",
	"google": "google:gemini-2.5-flash",
}
WORK = [
	call_tool("gmail.listMessages", maxResults=3),
	call_tool("slack.postMessage", channel="C123", text="3 new mails"),
]
FULL = [WORK, finish(result="posted")]
SEARCH = [
	call_tool("openmolt.searchTools", query="list latest emails"),
	call_tool("openmolt.loadTools", tools=["gmail.listMessages", "slack.postMessage"]),
	WORK,
	finish(result="posted"),
]
TARGET = 0.25


def wire(host: str, text: str) -> dict[str, Any]:
	"""A model reply carrying ``text``, in the wire format of the provider at ``host``."""
	usage = {"input_tokens": 1000, "output_tokens": 50}
	if host == "api.openai.com":
		return {
			"status": "completed",
			"output": [
				{
					"type": "message",
					"role": "assistant",
					"content": [{"type": "output_text", "text": text, "annotations": []}],
				}
			],
			"usage": usage,
		}
	if host == "api.anthropic.com":
		return {
			"type": "message",
			"role": "assistant",
			"stop_reason": "end_turn",
			"content": [{"type": "text", "text": text}],
			"usage": usage,
		}
	return {
		"candidates": [
			{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
		],
		"usageMetadata": {"promptTokenCount": 1000, "candidatesTokenCount": 50},
	}


class Recorder:
	"""The model API and the two services, answering from a script and recording model bodies."""

	def __init__(self, script: list[Any]) -> None:
		self.script = script
		self.bodies: list[int] = []

	def __call__(self, request: httpx.Request) -> httpx.Response:
		host = request.url.host
		if host == "gmail.googleapis.com":
			ids = [{"id": f"m{i}", "threadId": f"t{i}"} for i in range(3)]
			return httpx.Response(200, json={"messages": ids, "resultSizeEstimate": 3})
		if host == "slack.com":
			return httpx.Response(200, json={"ok": True, "channel": "C123", "ts": "1.2"})
		self.bodies.append(len(request.content))
		reply = self.script[len(self.bodies) - 1]
		commands = reply if isinstance(reply, list) else [reply]
		return httpx.Response(200, json=wire(host, json.dumps({"commands": commands})))


async def measure(provider: str, search: bool) -> dict[str, Any]:
	"""Run the task once; return the request sizes."""
	recorder = Recorder(SEARCH if search else FULL)
	om = OpenMolt(
		llm_providers={p: {"api_key": "sk-benchmark-key"} for p in MODELS},
		integrations=CREDENTIALS,
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(recorder)),
	)
	agent = om.create_agent(
		name="Assistant",
		model=MODELS[provider],
		instructions="Tell #general on Slack how many new mails there are.",
		integrations=FIVE,
		tool_loading="search" if search else "all",
	)
	result = await agent.run("go")
	assert result.status == "success", result.error
	await om.aclose()
	sizes = recorder.bodies
	growth = [b - a for a, b in itertools.pairwise(sizes)]
	return {
		"tools": len(agent.tools),
		"requests": len(sizes),
		"first": sizes[0],
		"mean": statistics.mean(sizes),
		"growth": statistics.mean(growth) if growth else 0.0,
		"total": sum(sizes),
	}


async def figures() -> dict[str, dict[str, Any]]:
	"""The figures per provider, for both ways of loading tools."""
	out: dict[str, dict[str, Any]] = {}
	for provider in MODELS:
		full = await measure(provider, search=False)
		lean = await measure(provider, search=True)
		out[provider] = {"all": full, "search": lean, "ratio": lean["first"] / full["first"]}
	return out


def table(data: dict[str, dict[str, Any]]) -> str:
	"""The figures as a Markdown table."""
	rows = [
		"| provider | loading | requests | first request | mean request | growth per step "
		"| task total | first vs all |",
		"| --- | --- | --- | --- | --- | --- | --- | --- |",
	]
	for provider, figure in data.items():
		for mode in ("all", "search"):
			f = figure[mode]
			share = f"{figure['ratio']:.1%} (target ≤ {TARGET:.0%})" if mode == "search" else ""
			rows.append(
				f"| {provider} | {mode} | {f['requests']} | {f['first']:,} B | {f['mean']:,.0f} B "
				f"| {f['growth']:,.0f} B | {f['total']:,} B | {share} |"
			)
	tools = next(iter(data.values()))["all"]["tools"]
	return f"Agent with {len(FIVE)} integrations, {tools} tools\n\n" + "\n".join(rows)


def main() -> None:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("--json", action="store_true", help="print the figures as JSON")
	args = parser.parse_args()
	data = anyio.run(figures)
	print(json.dumps(data, indent=2) if args.json else table(data))
	if any(f["ratio"] > TARGET for f in data.values()):
		raise SystemExit("target missed: a first request with search is over 25% of the full one")


if __name__ == "__main__":
	main()
