"""OpenTelemetry for OpenMolt: a span for each run, step, model call and tool call.

```python
from opentelemetry.sdk.trace import TracerProvider
from openmolt_otel import Telemetry

om = OpenMolt(observers=[Telemetry()])   # or Telemetry().instrument(om)
```

Off by default: nothing is traced until a `Telemetry` observer is given to an instance. Spans follow
the OpenTelemetry GenAI semantic conventions (`conventions` names the attributes; they were checked
against semconv 1.41 and the ``opentelemetry-semantic-conventions`` package):

| span | name | kind | parent |
| --- | --- | --- | --- |
| run | ``invoke_agent {agent}`` | INTERNAL | the current span (a sub-agent's: the tool that runs it) |
| step | ``step {n}`` (OpenMolt's own: one model call and its commands) | INTERNAL | the run |
| model call | ``chat {model}`` | CLIENT | the step |
| tool call | ``execute_tool {tool}`` | INTERNAL | the step |
| a person's answer | ``human_input`` | INTERNAL | the step |
| an event outside a run | ``schedule:skip``... (the event's name) | INTERNAL | the current span |

Every span of a run carries ``gen_ai.agent.name``, ``gen_ai.provider.name``,
``gen_ai.conversation.id`` (the session's id for a run that is a turn of a session, so the
turns of one conversation correlate; the run's id otherwise) and ``openmolt.run.id`` (`RUN_ID`).

Model and tool spans are current while they run, so spans of instrumented libraries (an HTTP
client) nest under them. Message contents (instructions, messages, replies, tool arguments and
results) are recorded only when opted in (``capture_content=True`` or
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``), always through the agent's
redactor, as JSON strings in the conventions' message shapes.

Each model call also records the client metrics ``gen_ai.client.operation.duration`` (s) and
``gen_ai.client.token.usage`` ({token}, by ``gen_ai.token.type``), with the conventions' advised
buckets, through ``meter_provider`` (default: the global one; without an SDK, a no-op).

The spans come from two seams of the core and no change to the loop: the run observer's events
(`openmolt_core.observe`) and its durability port (`openmolt_core.durability`), which every model
call, tool call and human answer passes through.
"""

from __future__ import annotations

import contextvars
import json
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import metrics, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from openmolt_core._support.masking import mask_urls
from openmolt_core.durability import ForwardingPort
from openmolt_core.observe import ObservedRun, RunObserver, RunOutcome, event_data
from openmolt_otel import conventions as gen_ai

if TYPE_CHECKING:
	from opentelemetry.metrics import MeterProvider
	from opentelemetry.trace import TracerProvider

	from openmolt_core.agent import Agent
	from openmolt_core.durability import RunPort
	from openmolt_core.events import Event
	from openmolt_core.openmolt import OpenMolt

__all__ = ["CAPTURE_ENV", "PROVIDER_NAMES", "RUN_ID", "Telemetry"]

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The variable the GenAI instrumentations read to record message contents (``true`` to opt in)."""

RUN_ID = "openmolt.run.id"
"""The attribute with the run's own id on each of its spans (the GenAI conventions name no
attribute for one invocation of an agent): ``gen_ai.conversation.id`` is its session's id when
the run is a turn of a session (``agent.run(input, session=...)``), the run id otherwise."""

PROVIDER_NAMES: dict[str, str] = {
	"openai": "openai",
	"anthropic": "anthropic",
	"google": "gcp.gemini",
}
"""OpenMolt's provider names mapped to ``gen_ai.provider.name`` well-known values (others pass
through: a custom provider object reports its own ``name``)."""

_SCOPE = "openmolt"
_SPANNED = frozenset(
	{"llmOutput", "commandsQueued", "tool:call", "tool:response", "humanInput", "finish"}
)
"""The events a span stands for (a model call, a step, a tool call, a person's answer, the run's
end)."""
_tool_span: contextvars.ContextVar[Span | None] = contextvars.ContextVar(
	"openmolt_otel_tool", default=None
)


@dataclass(slots=True)
class _Spans:
	run: Span
	step: Span | None = None
	step_number: int = 0
	common: dict[str, Any] = field(default_factory=dict)


def _json(value: Any) -> str:
	return json.dumps(value, ensure_ascii=False, default=str)


def _text_parts(text: str) -> list[dict[str, str]]:
	return [{"type": "text", "content": text}]


def _shown(run: ObservedRun, value: Any) -> Any:
	"""Text or data as a span shows it: as the run store's events do (`event_data`).

	Every secret the run knows is masked, and a URL's that no source knows (`mask_urls`: the key
	a model read in its instructions and called with), in every attribute of contents.
	"""
	return mask_urls(run.redact(value) if isinstance(value, str) else run.redact.deep(value))


class Telemetry(RunObserver):
	"""A run observer that records OpenTelemetry spans (see the module docstring).

	Args:
		tracer_provider: Where spans go (default: the global provider ``opentelemetry.trace``
			was set up with; without an SDK, spans are no-ops).
		capture_content: Record message contents, redacted (default: from
			``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``).
		meter_provider: Where the client metrics go (default: the global provider
			``opentelemetry.metrics`` was set up with; without an SDK, nothing is recorded).
	"""

	def __init__(
		self,
		*,
		tracer_provider: TracerProvider | None = None,
		capture_content: bool | None = None,
		meter_provider: MeterProvider | None = None,
	) -> None:
		from openmolt_core import __version__

		self.tracer = trace.get_tracer(_SCOPE, __version__, tracer_provider=tracer_provider)
		meter = metrics.get_meter(_SCOPE, __version__, meter_provider=meter_provider)
		self._token_usage = meter.create_histogram(
			gen_ai.CLIENT_TOKEN_USAGE,
			unit="{token}",
			description="Number of input and output tokens used.",
			explicit_bucket_boundaries_advisory=list(gen_ai.TOKEN_BUCKETS),
		)
		self._duration = meter.create_histogram(
			gen_ai.CLIENT_OPERATION_DURATION,
			unit="s",
			description="GenAI operation duration.",
			explicit_bucket_boundaries_advisory=list(gen_ai.DURATION_BUCKETS),
		)
		if capture_content is None:
			capture_content = os.environ.get(CAPTURE_ENV, "").strip().lower() in ("true", "1")
		self.capture_content = capture_content
		self._runs: dict[str, _Spans] = {}

	def instrument(self, om: OpenMolt) -> Telemetry:
		"""Trace every run of ``om`` from now on; returns self."""
		if self not in om.observers:
			om.observers.append(self)
		return self

	# the run ----------------------------------------------------------------------------

	async def started(self, run: ObservedRun) -> None:
		"""Open the run's span, a child of the current span."""
		provider = PROVIDER_NAMES.get(run.provider, run.provider)
		session = run.session_id
		common: dict[str, Any] = {
			gen_ai.PROVIDER_NAME: provider,
			gen_ai.AGENT_NAME: run.agent_name,
			# The conversation is the session a run is a turn of; a run of none is its own.
			gen_ai.CONVERSATION_ID: run.run_id if session is None else run.redact(session),
			RUN_ID: run.run_id,
		}
		attributes: dict[str, Any] = {
			gen_ai.OPERATION_NAME: gen_ai.INVOKE_AGENT,
			**common,
			gen_ai.REQUEST_MODEL: run.agent.model,
			"openmolt.run.resumed": run.resumed,
			**_trigger_attributes(run.trigger),
		}
		span = self.tracer.start_span(
			f"{gen_ai.INVOKE_AGENT} {run.agent_name}", kind=SpanKind.INTERNAL, attributes=attributes
		)
		if self.capture_content:
			span.set_attribute(
				gen_ai.INPUT_MESSAGES,
				_json([{"role": "user", "parts": _text_parts(_json(_shown(run, run.input)))}]),
			)
		self._runs[run.run_id] = _Spans(span, common=common)

	async def ended(self, run: ObservedRun, outcome: RunOutcome) -> None:
		"""Close the last step's span and the run's, with usage and status."""
		spans = self._runs.pop(run.run_id, None)
		if spans is None:
			return
		if spans.step is not None:
			spans.step.end()
		span = spans.run
		usage = run.state.usage
		span.set_attribute(gen_ai.USAGE_INPUT_TOKENS, usage.input_tokens)
		span.set_attribute(gen_ai.USAGE_OUTPUT_TOKENS, usage.output_tokens)
		if usage.cost_usd is not None:
			span.set_attribute("openmolt.usage.cost_usd", usage.cost_usd)
			span.set_attribute("openmolt.usage.unpriced_calls", usage.unpriced_calls)
		span.set_attribute("openmolt.run.status", outcome.status)
		span.set_attribute("openmolt.run.steps", run.state.steps)
		if outcome.status in ("error", "cancelled"):
			span.set_attribute(gen_ai.ERROR_TYPE, outcome.status)
			span.set_status(Status(StatusCode.ERROR, outcome.error or outcome.status))
		if self.capture_content and outcome.result is not None:
			output = _shown(run, outcome.result.to_dict()["output"])
			message = {
				"role": "assistant",
				"parts": _text_parts(_json(output)),
				"finish_reason": "stop",
			}
			span.set_attribute(gen_ai.OUTPUT_MESSAGES, _json([message]))
		span.end()

	async def event(self, run: ObservedRun, event: Event) -> None:
		"""Give the running tool's span its arguments (content capture only); record the rest.

		An event no span stands for (a guardrail's, taint, an approval, a capability's own) is a
		span event of its step's span (of the run's, before the first step), with its number,
		``openmolt.event.replayed`` when a recovering durable run emitted it again, and, when
		contents are captured, its data (redacted). A sub-agent's events, which also reach its
		caller's observers, are recorded once: on the sub-agent's own spans.
		"""
		if event.run_id and event.run_id != run.run_id and event.run_id in self._runs:
			return  # a traced sub-run's event, passed up to its caller: its own spans have it
		if event.name in _SPANNED:
			if not self.capture_content or event.name != "tool:call":
				return
			span = _tool_span.get()
			if span is not None:
				arguments = _shown(run, getattr(event, "input", {}))
				span.set_attribute(gen_ai.TOOL_CALL_ARGUMENTS, _json(arguments))
			return
		spans = self._runs.get(run.run_id)
		if spans is None:
			return
		step = spans.step if spans.step is not None and spans.step_number == event.step else None
		attributes: dict[str, Any] = {"openmolt.event.seq": event.seq}
		if event.replayed:
			attributes["openmolt.event.replayed"] = True
		if self.capture_content:
			attributes["openmolt.event.data"] = _json(event_data(event, run.redact))
		(step or spans.run).add_event(event.name, attributes)

	async def outside(self, agent: Agent, event: Event, data: dict[str, Any]) -> None:
		"""Record an event emitted outside a run: a schedule's fire, end or skip, a stranded run.

		A span of its own named like the event (a span event of the run's span while the run it
		names is traced here), with the agent, the run it names (`RUN_ID`, and as
		``gen_ai.conversation.id`` its session's id while the run is traced here, else the run
		id), the schedule's id, due time and status for a schedule's, and, when contents are
		captured, its data (redacted).
		"""
		attributes: dict[str, Any] = {gen_ai.AGENT_NAME: agent.name}
		traced = self._runs.get(event.run_id) if event.run_id else None
		if event.run_id:
			conversation = traced.common[gen_ai.CONVERSATION_ID] if traced else event.run_id
			attributes[gen_ai.CONVERSATION_ID] = conversation
			attributes[RUN_ID] = event.run_id
		schedule = data.get("schedule_id")
		if isinstance(schedule, str) and schedule:
			attributes["openmolt.schedule.id"] = schedule
			record = data.get("record")
			for key in ("due", "status"):
				value = record.get(key) if isinstance(record, dict) else None
				if isinstance(value, str):
					attributes[f"openmolt.schedule.{key}"] = value
		if self.capture_content:
			attributes["openmolt.event.data"] = _json(data)
		if traced is not None:
			traced.run.add_event(event.name, attributes)
			return
		self.tracer.start_span(event.name, kind=SpanKind.INTERNAL, attributes=attributes).end()

	def _step(self, run: ObservedRun, step: int) -> Span | None:
		spans = self._runs.get(run.run_id)
		if spans is None:
			return None
		if spans.step is None or spans.step_number != step:
			if spans.step is not None:
				spans.step.end()
			parent = trace.set_span_in_context(spans.run)
			spans.step = self.tracer.start_span(
				f"step {step}",
				context=parent,
				kind=SpanKind.INTERNAL,
				attributes={**spans.common, "openmolt.step": step},
			)
			spans.step_number = step
		return spans.step

	# the port: model calls, tool calls, a person's answers ------------------------------

	def wrap_port(self, run: ObservedRun, port: RunPort) -> RunPort:
		"""Time each model call, tool call and human answer in a span of its step."""
		return _TracedPort(self, run, port)

	async def _traced(self, run: ObservedRun, key: str, call: Callable[[], Awaitable[Any]]) -> Any:
		kind, _, rest = key.partition(":")
		number, _, rest = rest.partition(":")
		step = self._step(run, int(number)) if number.isdigit() else None
		if step is None or kind not in ("model", "compact", "tool", "human"):
			return await call()
		spans = self._runs[run.run_id]
		parent = trace.set_span_in_context(step)
		model: str | None = None
		if kind in ("model", "compact"):
			# A compaction's summary is a chat call too (its tokens are the run's): by the
			# agent's own models, or by a compactor whose model the port does not tell.
			summary = kind == "compact"
			if not (summary and getattr(run.agent, "compactor", None) is not None):
				model = run.agent.model
			attributes: dict[str, Any] = {
				gen_ai.OPERATION_NAME: gen_ai.CHAT,
				**spans.common,
				gen_ai.OUTPUT_TYPE: "text" if summary else "json",
				**_request_attributes(run),
			}
			if model is not None:
				attributes[gen_ai.REQUEST_MODEL] = model
			if summary:
				attributes["openmolt.compaction"] = True
			span = self.tracer.start_span(
				f"{gen_ai.CHAT} {model}" if model else gen_ai.CHAT,
				context=parent,
				kind=SpanKind.CLIENT,
				attributes=attributes,
			)
			if self.capture_content and not summary:
				span.set_attribute(
					gen_ai.SYSTEM_INSTRUCTIONS,
					_json(_text_parts(_shown(run, run.agent.system_prompt()))),
				)
				messages = [
					{"role": m.role, "parts": _text_parts(_shown(run, m.content))}
					for m in run.state.messages
				]
				span.set_attribute(gen_ai.INPUT_MESSAGES, _json(messages))
		elif kind == "tool":
			index, _, handle = rest.partition(":")
			span = self.tracer.start_span(
				f"{gen_ai.EXECUTE_TOOL} {handle}",
				context=parent,
				kind=SpanKind.INTERNAL,
				attributes={
					gen_ai.OPERATION_NAME: gen_ai.EXECUTE_TOOL,
					**spans.common,
					gen_ai.TOOL_NAME: handle,
					gen_ai.TOOL_CALL_ID: f"{number}:{index}",
					gen_ai.TOOL_TYPE: "function" if handle.startswith("local.") else "extension",
				},
			)
		else:
			span = self.tracer.start_span(
				"human_input", context=parent, kind=SpanKind.INTERNAL, attributes=spans.common
			)
		token = otel_context.attach(trace.set_span_in_context(span))
		tool_token = _tool_span.set(span) if kind == "tool" else None
		began = time.perf_counter()
		try:
			value = await call()
		except BaseException as exc:
			span.set_attribute(gen_ai.ERROR_TYPE, type(exc).__qualname__)
			span.set_status(Status(StatusCode.ERROR, _shown(run, str(exc))))
			if kind in ("model", "compact"):
				self._measure(run, began, None, type(exc).__qualname__, model)
			raise
		else:
			if kind in ("model", "compact"):
				self._model_done(run, span, value)
				self._measure(run, began, value, None, model)
			elif kind == "tool":
				self._tool_done(run, span, value)
			elif isinstance(value, dict) and "parked" in value:
				span.set_attribute("openmolt.parked", True)  # nobody answered: the run parks
			return value
		finally:
			if tool_token is not None:
				_tool_span.reset(tool_token)
			otel_context.detach(token)
			span.end()

	def _answered(self, run: ObservedRun, response: Any) -> dict[str, Any]:
		"""The model that answered and its provider (a fallback's, when one answered)."""
		return self._named(run, getattr(response, "model", None))

	def _named(self, run: ObservedRun, answered: Any) -> dict[str, Any]:
		"""The attributes naming one of the agent's models (an id) and its provider."""
		models = run.agent.models
		if not isinstance(answered, str) or not models or answered == models[0]:
			return {gen_ai.RESPONSE_MODEL: run.agent.model}
		from openmolt_core.fallback import split_id  # an agent of several models loaded it

		provider, model = split_id(answered)
		return {
			gen_ai.PROVIDER_NAME: PROVIDER_NAMES.get(provider, provider),
			gen_ai.RESPONSE_MODEL: model,
		}

	def _measure(
		self, run: ObservedRun, began: float, response: Any, error: str | None, model: str | None
	) -> None:
		"""Record a model call's duration and, when it answered, its tokens (the client metrics)."""
		spans = self._runs.get(run.run_id)
		attributes: dict[str, Any] = {
			gen_ai.OPERATION_NAME: gen_ai.CHAT,
			gen_ai.PROVIDER_NAME: spans.common[gen_ai.PROVIDER_NAME] if spans else run.provider,
		}
		if model is not None:
			attributes[gen_ai.REQUEST_MODEL] = model
		if error is not None:
			attributes[gen_ai.ERROR_TYPE] = error
		else:
			attributes.update(self._answered(run, response))
		self._duration.record(time.perf_counter() - began, attributes)
		usage = getattr(response, "usage", None)
		if usage is None:
			return
		# Each model's tokens under its own name: a reply a fallback moved past (a blocked one)
		# is in the step's usage, but its model made that call.
		parts = getattr(response, "usage_by_model", None) or {None: usage}
		for part_model, part in parts.items():
			named = (
				attributes if part_model is None else {**attributes, **self._named(run, part_model)}
			)
			for kind, count in (
				(gen_ai.TOKEN_INPUT, part.input_tokens),
				(gen_ai.TOKEN_OUTPUT, part.output_tokens),
			):
				self._token_usage.record(count, {**named, gen_ai.TOKEN_TYPE: kind})

	def _model_done(self, run: ObservedRun, span: Span, response: Any) -> None:
		span.set_attributes(self._answered(run, response))
		usage = getattr(response, "usage", None)
		if usage is not None:
			span.set_attribute(gen_ai.USAGE_INPUT_TOKENS, usage.input_tokens)
			span.set_attribute(gen_ai.USAGE_OUTPUT_TOKENS, usage.output_tokens)
			span.set_attribute(gen_ai.USAGE_CACHE_READ_INPUT_TOKENS, usage.cached_tokens)
			if usage.reasoning_tokens:
				span.set_attribute(gen_ai.USAGE_REASONING_OUTPUT_TOKENS, usage.reasoning_tokens)
			if usage.cost_usd is not None:
				span.set_attribute("openmolt.usage.cost_usd", usage.cost_usd)
		reason = getattr(response, "finish_reason", None)
		if reason:
			span.set_attribute(gen_ai.RESPONSE_FINISH_REASONS, [reason])
		if self.capture_content:
			message = {
				"role": "assistant",
				"parts": _text_parts(_shown(run, str(getattr(response, "text", "")))),
				"finish_reason": reason or "stop",  # required; the loop reads none as stop
			}
			span.set_attribute(gen_ai.OUTPUT_MESSAGES, _json([message]))

	def _tool_done(self, run: ObservedRun, span: Span, entry: Any) -> None:
		if not isinstance(entry, dict):
			return
		if entry.get("ok") is False:
			span.set_attribute(gen_ai.ERROR_TYPE, "tool_error")
			span.set_status(Status(StatusCode.ERROR, _shown(run, str(entry.get("error", "")))))
		elif self.capture_content:
			span.set_attribute(gen_ai.TOOL_CALL_RESULT, _json(_shown(run, entry.get("result"))))


def _trigger_attributes(trigger: dict[str, Any]) -> dict[str, Any]:
	"""Where a run came from (`ObservedRun.trigger`, redacted) as ``openmolt.trigger.*``.

	Its kind, ``where`` (the trigger's or schedule's name), ``sender`` (the chat user, the A2A
	or AG-UI caller), ``parent_run_id`` (a sub-agent's caller): each plain value it holds.
	"""
	return {
		f"openmolt.trigger.{key}": value
		for key, value in trigger.items()
		if isinstance(value, str | int | float | bool) and value != ""
	}


def _request_attributes(run: ObservedRun) -> dict[str, Any]:
	config = run.agent.model_config
	values = {
		gen_ai.REQUEST_TEMPERATURE: config.temperature,
		gen_ai.REQUEST_TOP_P: config.top_p,
		gen_ai.REQUEST_MAX_TOKENS: config.max_output_tokens,
		gen_ai.REQUEST_STOP_SEQUENCES: config.stop,
	}
	return {k: v for k, v in values.items() if v is not None}


class _TracedPort(ForwardingPort):
	"""A durability port that times each step in a span and passes everything else through."""

	__slots__ = ("_run", "_telemetry")

	def __init__(self, telemetry: Telemetry, run: ObservedRun, port: RunPort) -> None:
		super().__init__(port)
		self._telemetry = telemetry
		self._run = run

	async def step(
		self,
		key: str,
		fn: Callable[[], Awaitable[Any]],
		*,
		encode: Callable[[Any], Any] | None = None,
		decode: Callable[[Any], Any] | None = None,
	) -> Any:
		async def traced() -> Any:
			return await self._telemetry._traced(self._run, key, fn)

		return await self.port.step(key, traced, encode=encode, decode=decode)
