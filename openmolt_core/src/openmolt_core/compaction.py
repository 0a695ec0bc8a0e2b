"""Compaction: long runs summarise their older steps so the history fits the model's window.

Before a model call, when the prompt the last call carried (its input tokens, as the provider
counted them) plus what was appended since passes the threshold, the older steps are summarised
into one block and only the last ``keep_steps`` steps stay verbatim. The block goes at the end of
the first user turn, under ``"compacted"``:

```json
{"about": ..., "tools": [...], "input": ..., "compacted": {
	"note": "steps 1-40 of this run, summarised; the steps after it follow verbatim",
	"summary": "...", "plan": [...], "memory": {...}, "files": ["openmolt-file:..."]}}
```

The system prompt and the start of the first turn (instructions, tools) never change, so the
provider's cache keeps those; the plan, the memory and every file reference of the compacted steps
are kept verbatim, so no handle is lost. Compaction happens in large chunks (everything but the
last ``keep_steps`` steps), so the prefix is byte-stable for many steps between two compactions. The compacted history is the state's history: `RunState.compaction` records the
original first turn and what was summarised, so a resumed or replayed run sees the same history.
The summary is one model call through the durability port (key ``compact:<step>``; after the
model refused the step's request as longer than its context window, ``compact:<step>:1``).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openmolt_core._chain import spend
from openmolt_core._cost import counted, estimate_tokens  # light: every step asks
from openmolt_core._parse import finish_read
from openmolt_core._support import lazy_exports
from openmolt_core.errors import ProviderError
from openmolt_core.events import Event
from openmolt_core.llm import (  # the settings every agent has: re-exported (same objects)
	DEFAULT_COMPACTION,
	DEFAULT_CONTEXT_WINDOW,
	CompactionConfig,
	Message,
	ModelRequest,
	ModelResponse,
)
from openmolt_core.prompt import dumps

if TYPE_CHECKING:
	from openmolt_core.llm import LLMProvider, ModelConfig
	from openmolt_core.result import RunState

__all__ = [
	"DEFAULT_COMPACTION",
	"DEFAULT_CONTEXT_WINDOW",
	"CompactionConfig",
	"CompactionEvent",
	"CompactionRecord",
	"compact",
	"estimate_tokens",
	"unfit_summary",
]

_FILES = re.compile(r"openmolt-(?:file|result):[A-Za-z0-9_.\-/]+")

SUMMARY_PROMPT = """\
You summarise the earlier steps of an AI agent's run so it can go on without them. You receive \
the previous summary (if any) and the steps: the agent's commands and their results, as JSON. \
Write a dense, factual summary in plain text: what was done and found, every id, number, name \
and value the agent may still need, what failed and why, and what was still open. Do not invent \
anything. Do not give instructions. Keep it under {words} words."""


@dataclass(frozen=True, slots=True)
class CompactionRecord:
	"""One compaction, as the ``compaction`` event and `RunState.compaction` report it.

	Args:
		step: The step before which it happened.
		through_step: The last step summarised.
		tokens_before: The prompt's estimated tokens before.
		tokens_after: The prompt's estimated tokens after.
		files: The file references kept from the summarised steps.
	"""

	step: int
	through_step: int
	tokens_before: int
	tokens_after: int
	files: tuple[str, ...] = ()


async def compact(
	state: RunState,
	*,
	config: CompactionConfig,
	threshold: int,
	step: int,
	provider: LLMProvider,
	model: str,
	model_config: ModelConfig,
	journal: Callable[[str, Callable[[], Awaitable[ModelResponse]]], Awaitable[ModelResponse]],
	system: str,
	keep: Mapping[str, Any] | None = None,
	again: bool = False,
) -> CompactionRecord | None:
	"""Summarise the older steps of ``state`` in place, or do nothing when too few remain.

	Args:
		state: The run's state; its messages are rewritten.
		config: The agent's compaction settings.
		threshold: The token threshold in effect.
		step: The step about to run.
		provider: The model that writes the summary.
		model: That model's name.
		model_config: Its configuration.
		journal: Runs the summary call as a durable step (``port.step`` with the codec).
		system: The agent's system prompt (counted in the estimates).
		keep: More entries for the compacted block, kept verbatim (the descriptions of the
			tools the run loaded, so the model still knows their inputs).
		again: The step's request was refused as longer than the model's context window: a
			summary of its own (key ``compact:<step>:1``), after any the check wrote.

	Returns:
		What was compacted, or None.
	"""
	messages = state.messages
	cut = len(messages) - 2 * max(config.keep_steps, 1)
	while cut > 1 and messages[cut].role != "assistant":
		cut -= 1  # start the kept part at a reply, so turns keep alternating
	if cut <= 1:
		return None
	old = messages[1:cut]
	before = estimate_tokens(messages, system)
	record = state.compaction or {}
	first = str(record.get("first") or messages[0].content)
	done = int(record.get("through_step") or 0)
	through = done + len(old) // 2
	files = sorted({*record.get("files", ()), *_FILES.findall("\n".join(m.content for m in old))})
	request = ModelRequest(
		model=model,
		system=SUMMARY_PROMPT.replace("{words}", str(config.summary_words)),
		messages=[
			Message(
				"user",
				dumps(
					{
						"previousSummary": record.get("summary") or "",
						"steps": [{"role": m.role, "content": m.content} for m in old],
					}
				),
			)
		],
		config=model_config,
		cache_key=None,
	)

	async def summarise() -> ModelResponse:
		response = await provider.generate(request)
		# A summary whose provider reports no token is counted from its size: never free.
		counted(response.usage, request.messages, request.system, response.text)
		return response

	response = await journal(f"compact:{step}:1" if again else f"compact:{step}", summarise)
	# The summary's usage counts in the run's, and under its model (``response.model``, an id),
	# or under each model whose call it took (a blocked one before the fallback's answer).
	by_model = response.usage_by_model or (
		{response.model: response.usage} if response.model else {}
	)
	spend(state, response.usage, by_model)
	unfit = unfit_summary(response)
	if unfit is not None:  # the steps stay: what arrived would replace them with less
		raise ProviderError(
			f"the compaction summary {unfit}, so the older steps were kept as they are; "
			+ _SUMMARY_FIX,
			provider=getattr(provider, "name", "") or "custom",
			model=model,
		)
	block = {
		"note": f"steps 1-{through} of this run, summarised; the steps after it follow verbatim",
		"summary": response.text.strip(),
		"plan": state.plan,
		"memory": state.memory,
		"files": files,
		**(keep or {}),
	}
	head = first[:-1] if first.endswith("}") else first
	new_first = Message("user", f'{head},"compacted":{dumps(block)}}}', messages[0].attachments)
	state.messages = [new_first, *messages[cut:]]
	state.context_tokens = 0  # the next call's count comes from the new prompt
	state.compaction = {
		"first": first,
		"summary": block["summary"],
		"through_step": through,
		"files": files,
		"count": int(record.get("count") or 0) + 1,
	}
	refused = before if again else record.get("refused_at")
	if refused:  # the estimate of a request the model refused: its real window is smaller
		state.compaction["refused_at"] = int(refused)
	return CompactionRecord(
		step=step,
		through_step=through,
		tokens_before=before,
		tokens_after=estimate_tokens(state.messages, system),
		files=tuple(files),
	)


_SUMMARY_STOPS = {
	"max_tokens": "was cut off at the output token limit",
	"refusal": "was refused by the model",
	"safety": "was stopped by the provider's safety filter",
	"blocked": "was blocked by the provider (it refuses this conversation)",
	"tool_calls": "held a native tool call instead of text",
	"incomplete": "stopped before its end",
}
_SUMMARY_FIX = (
	"raise max_output_tokens, lower compaction's summary_words, or let another model write "
	"summaries (compaction={'model': ...})"
)


def unfit_summary(response: ModelResponse) -> str | None:
	"""Why a summary cannot stand for the steps it summarises (None: it can).

	Read as a step's reply is (`openmolt_core.llm.ModelResponse.finish_reason`): only a
	complete reply stands; an empty one says nothing of the steps it would replace.

	Args:
		response: The summary call's response.
	"""
	reason = finish_read(response.finish_reason)  # an unknown one: stopped before its end
	if reason in _SUMMARY_STOPS:
		return f"{_SUMMARY_STOPS[reason]} (finish reason {response.finish_reason!r})"
	if not response.text.strip():
		return "was empty"
	return None


# events ---------------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class CompactionEvent(Event):
	"""Older steps were summarised: ``through_step`` is the last one, tokens are estimates."""

	through_step: int
	tokens_before: int
	tokens_after: int
	files: list[str]
	name: str = "compaction"


# The check every agent's capability makes before each step, defined beside it (a plain run
# loads `openmolt_core.capabilities`, never this module): its name here, loaded on first use
# (not in __all__: a star import does not load it).
_HOMES = {"needs_compaction": "openmolt_core.capabilities"}

__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), _HOMES)
