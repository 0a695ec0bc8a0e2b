"""What a run returns, and its state (saved as JSON and resumed)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

from openmolt_core._support import lazy_exports
from openmolt_core.llm import Message, Usage

__all__ = [
	"PARKED_STATUSES",
	"SESSION_KEY",
	"TRIGGER_KEY",
	"ParkedStatus",
	"RunResult",
	"RunState",
	"RunStatus",
]

ParkedStatus = Literal["human_input_required", "approval_required", "authorization_required"]
"""The statuses of a parked run: it waits for someone (`RunStatus` says for whom)."""

RunStatus = Literal[
	"success", "failure", "limit_reached", ParkedStatus, "guardrail_tripped", "error"
]
"""How a run ended.

``success`` / ``failure``: the model finished and said so. ``limit_reached``: a budget ran out.
Parked (`PARKED_STATUSES`; ``agent.resume(state, ...)`` goes on: docs/guides/resume.md): a
question nobody could answer, a call waiting for a decision or for the end user's account.
``guardrail_tripped``: a guardrail stopped the run. ``error``: the provider failed for good, or
the run broke; the state is kept either way.
"""

PARKED_STATUSES: frozenset[str] = frozenset(get_args(ParkedStatus))
"""The `ParkedStatus` values: what every surface reads to tell a parked run from an ended one."""

SESSION_KEY = "session"
"""``RunState.ext`` key: the id of the session the run is a turn of (`RunState.session_id`)."""

TRIGGER_KEY = "trigger"
"""``RunState.ext`` key: the trigger the run was started under (`RunState.trigger`)."""


@dataclass(slots=True)
class RunState:
	"""Everything needed to resume a run, as JSON (`to_dict`): ``agent.run(input, history=state)``.

	Args:
		messages: The conversation after the system prompt, oldest first.
		plan: The current plan, as JSON dicts.
		memory: ``{"longTerm": ..., "shortTerm": ...}``.
		usage: Tokens used so far.
		steps: Model calls made so far.
		run_id: The run's id, stable across resumes (events and durable steps carry it).
		pending: What a parked run waits for (None when it is not parked): ``{"kind":
			"human_input", "message", "results"}``, or the parked step (`openmolt_core._park`).
		context_tokens: Input tokens of the latest model call (the prompt's size), for compaction.
		compaction: What compaction summarised so far (`openmolt_core.compaction`).
		seq: The events numbered so far, so a resumed run numbers its events after them.
		loaded: Tools the run loaded, callable from the step after (`openmolt_core.toolsearch`).
		stored: The results stored because they were too large (`openmolt_core.offload`).
		models: The model that answered each step (``provider:model``), in step order.
		usage_by_model: Tokens and cost per model (``provider:model``), adding up to ``usage``.
		taint: The calls whose untrusted results reached the model (`openmolt_core.taint`).
		audit: What guardrails and the taint policy did, oldest first.
		ext: The capabilities' state, by capability name: JSON each (saved when not empty).
		user: The end user the run acts for (``agent.run(input, user=...)``; None: the operator).
		caller: For a run nested in another's step: that run, ``{"run_id", "call", "agent"}``;
			such a run goes on only with its caller (``parent=``). None for a top-level run.
	"""

	messages: list[Message] = field(default_factory=list)
	plan: list[dict[str, Any]] = field(default_factory=list)
	memory: dict[str, str] = field(default_factory=lambda: {"longTerm": "", "shortTerm": ""})
	usage: Usage = field(default_factory=Usage)
	steps: int = 0
	run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
	pending: dict[str, Any] | None = None
	context_tokens: int = 0
	compaction: dict[str, Any] | None = None
	seq: int = 0
	loaded: list[str] = field(default_factory=list)
	stored: list[dict[str, Any]] = field(default_factory=list)
	models: list[str] = field(default_factory=list)
	usage_by_model: dict[str, Usage] = field(default_factory=dict)
	taint: list[dict[str, Any]] = field(default_factory=list)
	audit: list[dict[str, Any]] = field(default_factory=list)
	ext: dict[str, Any] = field(default_factory=dict)
	user: str | None = None
	caller: dict[str, Any] | None = None

	@property
	def tainted(self) -> bool:
		"""Whether the run has read untrusted content (`openmolt_core.taint`)."""
		return bool(self.taint)

	@property
	def session_id(self) -> str | None:
		"""The id of the session the run is a turn of (``run(input, session=...)``), or None."""
		mark = self.ext.get(SESSION_KEY)
		return mark if isinstance(mark, str) else None

	@property
	def trigger(self) -> dict[str, Any] | None:
		"""Where the run came from (``{"kind": "chat", ...}``: `openmolt_core.observe`), or None."""
		mark = self.ext.get(TRIGGER_KEY)
		return dict(mark) if isinstance(mark, dict) and mark.get("kind") else None

	def to_dict(self) -> dict[str, Any]:
		"""The state as a JSON-serializable dict.

		Raises:
			ValueError: A capability keeps what JSON cannot hold in its state (``ext``).
		"""
		data: dict[str, Any] = {
			"messages": [
				{
					"role": m.role,
					"content": m.content,
					**(
						{"attachments": [asdict(a) for a in m.attachments]} if m.attachments else {}
					),
				}
				for m in self.messages
			],
			"plan": self.plan,
			"memory": dict(self.memory),
			"usage": self.usage.to_dict(),
			"steps": self.steps,
			"run_id": self.run_id,
			"pending": self.pending,
			"context_tokens": self.context_tokens,
			"compaction": self.compaction,
			"seq": self.seq,
			"loaded": list(self.loaded),
			"stored": [dict(s) for s in self.stored],
			"models": list(self.models),
			"usage_by_model": {k: u.to_dict() for k, u in self.usage_by_model.items()},
			"taint": list(self.taint),
			"audit": list(self.audit),
			**({"user": self.user} if self.user is not None else {}),
			**({"caller": dict(self.caller)} if self.caller is not None else {}),
		}
		# a capability that kept nothing saves nothing; 0, False, "" and [] are saved as they are
		ext = {k: v for k, v in self.ext.items() if v is not None and v != {}}
		if ext:
			_check_ext(ext)
			data["ext"] = ext
		return data

	@classmethod
	def from_dict(cls, data: dict[str, Any]) -> RunState:
		"""Rebuild a state from `to_dict`'s output.

		Raises:
			ValueError: The data is not a saved run state.
		"""
		from openmolt_core.llm import Attachment

		_check_saved(data)
		try:
			messages = [
				Message(
					role=m["role"],
					content=m["content"],
					attachments=[Attachment(**a) for a in m.get("attachments", ())],
				)
				for m in data["messages"]
			]
			return cls(
				messages=messages,
				plan=list(data.get("plan", [])),
				memory={"longTerm": "", "shortTerm": "", **data.get("memory", {})},
				usage=Usage.from_dict(data.get("usage", {})),
				steps=int(data.get("steps", 0)),
				run_id=str(data.get("run_id") or uuid.uuid4().hex),
				pending=data.get("pending"),
				context_tokens=int(data.get("context_tokens") or 0),
				compaction=data.get("compaction"),
				seq=int(data.get("seq", 0)),
				loaded=[str(h) for h in data.get("loaded") or ()],
				stored=[dict(s) for s in data.get("stored") or ()],
				models=[str(m) for m in data.get("models") or ()],
				usage_by_model={
					str(k): Usage.from_dict(v)
					for k, v in (data.get("usage_by_model") or {}).items()
				},
				taint=list(data.get("taint") or []),
				audit=list(data.get("audit") or []),
				ext=dict(data.get("ext") or {}),
				user=None if data.get("user") is None else str(data["user"]),
				caller=None if data.get("caller") is None else dict(data["caller"]),
			)
		except (KeyError, TypeError, ValueError) as exc:
			raise ValueError(f"not a saved run state: {exc}") from exc


_SAVED: dict[str, type] = {
	"messages": list, "plan": list, "memory": dict, "usage": dict, "steps": int, "run_id": str,
	"pending": dict, "context_tokens": int, "compaction": dict, "seq": int, "loaded": list,
	"stored": list, "models": list, "usage_by_model": dict, "taint": list, "audit": list,
	"ext": dict, "user": str, "caller": dict,
}  # fmt: skip
"""The JSON type of each field of a saved state (`RunState.to_dict`); null is none."""


def _check_saved(data: Any) -> None:
	"""Refuse a saved state whose fields have other types than `RunState.to_dict` writes.

	Raises:
		ValueError: A field has another type; the message names it.
	"""
	if not isinstance(data, Mapping):
		raise ValueError(f"not a saved run state: a {type(data).__name__}, not a JSON object")
	for key, kind in _SAVED.items():
		value = data.get(key)
		if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
			raise ValueError(f"not a saved run state: {key} is not a {kind.__name__}")
	for i, m in enumerate(data.get("messages") or ()):
		if not (isinstance(m, Mapping) and isinstance(m.get("content"), str)):
			raise ValueError(f"not a saved run state: messages[{i}] has no text content")
		if m.get("role") not in ("user", "assistant"):
			raise ValueError(f"not a saved run state: messages[{i}].role is not user or assistant")
	for name, value in (data.get("memory") or {}).items():
		if not isinstance(value, str):
			raise ValueError(f"not a saved run state: memory.{name} is not a str")
	for name, kind in _PENDING.items():
		value = (data.get("pending") or {}).get(name)
		if value is not None and not isinstance(value, kind):
			raise ValueError(f"not a saved run state: pending.{name} is not a {kind.__name__}")


_PENDING: dict[str, type] = {
	"kind": str, "message": str, "results": list, "calls": list, "commands": list, "ignored": list,
}  # fmt: skip
"""The JSON type of each field of a parked state's ``pending`` the loop reads."""


@dataclass(slots=True)
class RunResult:
	"""The result of ``agent.run()``.

	Args:
		output: The validated output: an instance of the output schema's model, a dict for a JSON
			Schema, or None when the run did not finish.
		status: How the run ended (see `RunStatus`).
		human_message: The model's message for a person, if it gave one.
		plan: The final plan.
		steps: Model calls made.
		usage: Tokens used over the run (and estimated cost, when known).
		state: The full state, to save or resume from.
		error: What went wrong, for ``error``, ``limit_reached`` and ``guardrail_tripped``, or
			what the parked run waits for.
	"""

	output: Any
	status: RunStatus
	human_message: str
	plan: list[dict[str, Any]]
	steps: int
	usage: Usage
	state: RunState
	error: str | None = None

	@property
	def history(self) -> list[Message]:
		"""The whole conversation after the system prompt."""
		return self.state.messages

	@property
	def usage_by_model(self) -> dict[str, Usage]:
		"""Tokens and cost per model (``provider:model``), adding up to ``usage`` (see `RunState`)."""
		return self.state.usage_by_model

	@property
	def ok(self) -> bool:
		"""Whether the model finished with status ``success``."""
		return self.status == "success"

	@classmethod
	def from_dict(cls, data: dict[str, Any], state: RunState) -> RunResult:
		"""Rebuild a result from `to_dict`'s output and its state (the output stays JSON).

		Raises:
			ValueError: The data is not a saved result.
		"""
		try:
			return cls(
				output=data.get("output"),
				status=data["status"],
				human_message=str(data.get("human_message") or ""),
				plan=list(data.get("plan") or []),
				steps=int(data.get("steps", 0)),
				usage=Usage.from_dict(data.get("usage") or {}),
				state=state,
				error=data.get("error"),
			)
		except (KeyError, TypeError) as exc:
			raise ValueError(f"not a saved run result: {exc}") from exc

	def to_dict(self) -> dict[str, Any]:
		"""The result as a JSON-serializable dict (output dumped with pydantic when a model)."""
		output = self.output
		dump = getattr(output, "model_dump", None)
		if callable(dump):
			output = dump(mode="json")
		return {
			"status": self.status,
			"output": output,
			"human_message": self.human_message,
			"plan": self.plan,
			"steps": self.steps,
			"usage": self.usage.to_dict(),
			"usage_by_model": {k: u.to_dict() for k, u in self.usage_by_model.items()},
			"error": self.error,
			"run_id": self.state.run_id,
		}


# Names that live above the contract, under their old names here (loaded on first use).
__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(
	globals(),
	{
		"RecordStatus": "openmolt_core._history",
		"RunRecord": "openmolt_core._history",
		"waiting_for": "openmolt_core.observe",
	},
)


def _check_ext(ext: dict[str, Any]) -> None:
	"""Refuse a capability's state that JSON cannot hold, naming the capability."""
	for name, value in ext.items():
		try:
			json.dumps(value, allow_nan=False)
		except (TypeError, ValueError) as exc:
			raise ValueError(
				f"state.ext[{name!r}]: capability {name!r} keeps what JSON cannot hold ({exc}); "
				"keep dicts, lists, strings, finite numbers, booleans and None in its state"
			) from None
