"""A plain run imports only what it uses: features load when an agent turns them on."""

import functools
import json
import os
import subprocess
import sys
import textwrap

PLAIN = textwrap.dedent(
	'''
	import json, sys, anyio
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, call_tool, finish

	def add(a: int, b: int) -> int:
		"""Add.

		Args:
			a: A.
			b: B.
		"""
		return a + b

	async def main():
		om = OpenMolt(entry_points=False)
		model = ScriptedModel([call_tool("local.add", a=1, b=2), finish("3")])
		agent = om.create_agent(name="A", model=model, tools=[add])
		assert (await agent.run("x")).output == "3"

	anyio.run(main)
	print(json.dumps(sorted(m for m in sys.modules if m.startswith("openmolt_core"))))
	'''
)

# What a plain run may load, by name: a new import shows here (32, the kernel design's target).
PLAIN_MODULES = [
	"openmolt_core",
	"openmolt_core._binding",
	"openmolt_core._chain",
	"openmolt_core._cost",
	"openmolt_core._emitter",
	"openmolt_core._execute",
	"openmolt_core._parse",
	"openmolt_core._support",
	"openmolt_core._support.jsonsafe",
	"openmolt_core._support.jsonschema",
	"openmolt_core._support.masking",
	"openmolt_core._support.secretset",
	"openmolt_core._support.sync",
	"openmolt_core._toolset",
	"openmolt_core.agent",
	"openmolt_core.assembly",
	"openmolt_core.capabilities",
	"openmolt_core.capabilities.safety",
	"openmolt_core.commands",
	"openmolt_core.durability",
	"openmolt_core.envelope",
	"openmolt_core.errors",
	"openmolt_core.functiontools",
	"openmolt_core.hooks",
	"openmolt_core.llm",
	"openmolt_core.openmolt",
	"openmolt_core.prompt",
	"openmolt_core.result",
	"openmolt_core.taint",
	"openmolt_core.testing",
	"openmolt_core.tools",
]

# Features a plain agent (function tools, no options) must not load.
UNUSED = [
	"openmolt_core.capabilities.offload",
	"openmolt_core.compaction",
	"openmolt_core.capabilities.compaction",
	"openmolt_core.capabilities.approvals",
	"openmolt_core.capabilities.observers",
	"openmolt_core.credstore",
	"openmolt_core._approve",
	"openmolt_core._fit",
	"openmolt_core.capabilities.indoubt",
	"openmolt_core._jsonsafe",
	"openmolt_core._jsonschema",
	"openmolt_core._lazy",
	"openmolt_core._park",  # a step that parks, a run that resumes
	"openmolt_core._redact",  # the redactor's old path: it lives in secrets
	"openmolt_core.secrets",  # which secrets an instance knows: the re-exports of _support.secretset
	"openmolt_core._repair",
	"openmolt_core._suggest",
	"openmolt_core._support.schemafit",
	"openmolt_core.structured",  # the old path of the structured-output capability's fitting
	"openmolt_core.capabilities.structured",  # loaded by the first model that declares a dialect
	"openmolt_core._support.suggest",
	"openmolt_core._sync",
	"openmolt_core._verbose",
	"openmolt_core.filestore",  # made on the first save or read of a file
	"openmolt_core.fallback",  # the feature's page
	"openmolt_core.capabilities.fallback",  # an agent of one model has no fallback capability
	"openmolt_core.events",  # the event classes: an event is built when a handler listens
	"openmolt_core.options",
	"openmolt_core.policy",
	"openmolt_core.retry",
	"openmolt_core.scheduler",
	"openmolt_core.capabilities.skills",
	"openmolt_core.guardrails",
	"openmolt_core.guardrails.base",
	"openmolt_core.guardrails.checks",
	"openmolt_core.guardrails.injection",
	"openmolt_core.guardrails.pii",
	"openmolt_core.guardrails.spec",
	"openmolt_core.integrations.model",
	"openmolt_core.integrations.http",
	"openmolt_core.observe",
	"openmolt_core.sessions",
	"openmolt_core.capabilities.sessions",  # loaded by the first call with a session
	"openmolt_core.subagents",
	"openmolt_core.capabilities.sources",
	"openmolt_core.skills",
	"openmolt_core.capabilities.toolsearch",
	"openmolt_core.toolsearch",
	"openmolt_core.capabilities.streaming",  # loaded when something listens to a reply
	"openmolt_core.capabilities._replydecoder",
	"openmolt_core._livereply",
	"openmolt_core._replystream",
	"openmolt_core.streaming",
	"openmolt_core.runstream",
	"openmolt_core._pricecheck",  # the price check of max_cost: an agent given a budget
]


@functools.cache
def _plain_run() -> frozenset[str]:
	"""The package's modules a plain run loads (one fresh interpreter for the tests here)."""
	# With a secret in the environment, as on most machines (a CI's token): the masking of
	# logs is installed at the secrets' first use, and what it loads counts too.
	env = {**os.environ, "PLAIN_RUN_TEST_TOKEN": "plain-run-token-1234"}
	out = subprocess.run(
		[sys.executable, "-c", PLAIN],
		capture_output=True,
		text=True,
		check=True,
		timeout=120,
		env=env,
	)
	return frozenset(json.loads(out.stdout.strip().splitlines()[-1]))


def test_a_plain_run_does_not_import_the_features_it_does_not_use() -> None:
	loaded = _plain_run()
	assert loaded.isdisjoint(UNUSED), sorted(loaded & set(UNUSED))


def test_a_plain_run_loads_only_the_kernel_it_needs() -> None:
	"""Every module a plain run loads is listed (a new one shows by name); the count only goes down."""
	loaded = _plain_run()
	assert loaded <= set(PLAIN_MODULES), sorted(loaded - set(PLAIN_MODULES))
	# the kernel design's target, reached: this ratchet only goes down
	assert len(loaded) <= 32, sorted(loaded)


def test_the_light_capabilities_keep_their_feature_paths() -> None:
	"""What every agent has is defined where a plain run loads it; its feature re-exports it."""
	from openmolt_core import _cost, capabilities, compaction, llm
	from openmolt_core.capabilities import approvals, observers, offload, spend
	from openmolt_core.capabilities import compaction as compacting

	assert approvals.ApprovalGate is capabilities.ApprovalGate
	assert spend.NestedSpend is capabilities.NestedSpend
	assert observers.Observers is capabilities.Observers
	assert compacting.Compaction is capabilities.Compaction
	assert compaction.CompactionConfig is llm.CompactionConfig
	assert compaction.DEFAULT_COMPACTION is llm.DEFAULT_COMPACTION
	assert compaction.DEFAULT_CONTEXT_WINDOW == llm.DEFAULT_CONTEXT_WINDOW
	assert compaction.estimate_tokens is _cost.estimate_tokens
	assert compaction.needs_compaction is capabilities.needs_compaction is _cost.needs_compaction
	for name in ("READ_TOOL", "Offload", "OffloadResults", "ReadResultTool", "is_stored"):
		assert getattr(offload, name) is getattr(capabilities, name), name


LISTENED = textwrap.dedent(
	'''
	import json, anyio
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, call_tool, finish

	def add(a: int, b: int) -> int:
		"""Add.

		Args:
			a: A.
			b: B.
		"""
		return a + b

	async def main():
		om = OpenMolt(entry_points=False)
		model = ScriptedModel([call_tool("local.add", a=1, b=2), finish("3")])
		agent = om.create_agent(name="A", model=model, tools=[add])
		seen = []
		agent.on("tool:call", lambda event: seen.append(type(event).__name__))
		assert (await agent.run("x")).output == "3"
		return seen

	print(json.dumps(anyio.run(main)))
	'''
)


def test_the_event_classes_load_with_the_first_event_a_handler_listens_to() -> None:
	"""A run nobody listens to never defines the event classes; a handler gets its event."""
	out = subprocess.run(
		[sys.executable, "-c", LISTENED], capture_output=True, text=True, check=True, timeout=120
	)
	assert json.loads(out.stdout.strip().splitlines()[-1]) == ["ToolCallEvent"]


def test_the_event_names_and_emitter_keep_their_home() -> None:
	"""Every agent has an emitter: it lives in `_emitter`, and `events` re-exports it."""
	from openmolt_core import _emitter, events

	for name in _emitter.__all__:
		assert getattr(events, name) is getattr(_emitter, name), name
