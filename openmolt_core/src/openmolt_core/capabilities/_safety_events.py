"""The safety capability's events: ``guardrail`` and ``taint`` (`openmolt_core.capabilities.safety`).

Apart from the capability, which every agent has, because an event is built only when a handler
listens to it: a run nobody listens to does not define these classes. `safety` (and
`openmolt_core.events`) re-export them.
"""

from __future__ import annotations

from dataclasses import dataclass

from openmolt_core.events import Event

__all__ = ["GuardrailEvent", "TaintEvent"]


@dataclass(slots=True, kw_only=True)
class GuardrailEvent(Event):
	"""A guardrail acted (``action``: ``rewrite``, ``refuse`` or ``trip``), or the taint policy did.

	``guardrail`` is the guardrail's name (``taint_policy`` for the policy, whose actions are
	``refuse`` and ``approve``: the call waits for a decision). ``stage`` is ``input``,
	``tool_call``, ``tool_result`` or ``output``; ``tool`` and ``call`` name the tool call at the
	tool stages. ``field`` says which words for a person an output guardrail made with
	``message=True`` judged (`openmolt_core.guardrails.GuardrailCheck.field`): ``humanMessage``
	(the finish's message), ``message`` (a question) or ``reason`` (a call's reason, for its
	approver; ``tool`` and ``call`` name the call). At the ``tool_result`` stage it is
	``error`` when the call failed: its error (and details) was judged, not a result. Empty for
	any other value (the output, a call's input or result, the run's input).
	"""

	guardrail: str
	stage: str
	action: str
	reason: str = ""
	tool: str = ""
	call: str = ""
	field: str = ""
	name: str = "guardrail"


@dataclass(slots=True, kw_only=True)
class TaintEvent(Event):
	"""The run read untrusted content for the first time (`openmolt_core.taint`).

	``tool`` and ``call`` name the call whose result it was; from now on the taint policy applies
	to outbound calls.
	"""

	tool: str
	call: str
	name: str = "taint"
