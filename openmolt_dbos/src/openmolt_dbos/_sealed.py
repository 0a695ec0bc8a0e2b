"""What a durable run hands DBOS to keep, masked: the one seam for every value kept outside the steps.

A run's steps are journaled through `openmolt_core._redacted_port.RedactedPort`, which masks each
value (and a failed step's error) with the agent's redactor. DBOS keeps more of a run, and each of
those values is built here, masked with that same redactor (`openmolt_core.agent.Agent.redact`:
every secret the agent knows now, tokens learned during the run included):

- the workflow's input: the state a run starts or goes on from, a person's answer, the approval
  decisions delivered to it (`workflow_args`), a scheduled run's input (`schedule_info`);
- the workflow's output and its park event: the result and the state (`payload`), and the
  question it waits on, in its attributes (`question`);
- the answer sent to a parked run (`answer`): DBOS's message, and the backend's own record of
  the answer that won (``openmolt_answers``);
- the error a failed run ends with, which DBOS pickles with the failed run's result and state
  (`error`).

A state is masked as the run store masks one (`openmolt_core.filestore.masked_state`): the base64 of a
file sent with a turn is screened as bytes, so it stays a file (kept, kept masked, or left out).

The run reads what is stored, on its first execution as on a recovery: the backend starts the
workflow with the masked values it hands DBOS, so both executions go on from the same input. That
is what a run reads already: it masks the turns and memory of a state it goes on from, a person's
answer reaches its history masked, and a decision's reason and edited input are journaled masked
before the call runs (so a durable run's tool always got the masked input). A decision whose
reason or input shows a secret is signed again once masked (`Approvals.masked`), so the run still
accepts it, once. What a run's output or error holds is what the process that started it reads
too (a result from the store is the same).

Identifiers are kept as given (the run id, which is the workflow's id, the agent's name, the
schedule's id, the end user's id): they name the run in the store and are looked up as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from openmolt_core.result import RunResult, RunState

if TYPE_CHECKING:
	from openmolt_core.agent import Agent
	from openmolt_core.secrets import Redactor, SecretSet

__all__ = [
	"answer",
	"decisions",
	"error",
	"instance_redactor",
	"payload",
	"question",
	"result",
	"schedule_info",
	"state",
	"workflow_args",
]


def state(data: dict[str, Any], redact: Redactor) -> dict[str, Any]:
	"""A run's state (`RunState.to_dict`) masked, its files screened as bytes."""
	from openmolt_core.filestore import masked_state

	masked: dict[str, Any] = masked_state(data, redact)
	return masked


def payload(result: RunResult, redact: Redactor) -> dict[str, Any]:
	"""A result as DBOS keeps it (the output, the park event): its dict and its state's, masked."""
	return {"result": redact.deep(result.to_dict()), "state": state(result.state.to_dict(), redact)}


def answer(text: str, redact: Redactor) -> str:
	"""A person's answer as DBOS and the answers table keep it."""
	return redact(str(text))


def decisions(given: Sequence[Any], agent: Agent) -> list[Any]:
	"""What a gate read of a delivery (approval decisions), masked; a decision signed again.

	Any other value is masked as JSON (`Redactor.deep`): an object that shows a secret becomes
	its data masked.
	"""
	from openmolt_core.decisions import ApprovalDecision
	from openmolt_core.openmolt import OpenMolt

	redact = agent.redact
	out: list[Any] = []
	for value in given:
		if isinstance(value, ApprovalDecision):  # the run checks it with its instance's key
			out.append(OpenMolt.of(agent).approvals.masked(value, redact))
		else:
			out.append(redact.deep(value))
	return out


def workflow_args(
	agent: Agent, run: RunState, given: str | None, delivered: Sequence[Any] = ()
) -> tuple[Any, ...]:
	"""The input of a run's workflow (`openmolt_dbos._runs.run_workflow`), masked.

	Args:
		agent: The run's agent.
		run: The state the workflow starts or goes on from.
		given: The answer to its parked question, if any.
		delivered: The decisions for its parked calls, if any.
	"""
	redact = agent.redact
	return (
		agent.name,
		state(run.to_dict(), redact),
		None if given is None else answer(given, redact),
		None,
		decisions(delivered, agent),
	)


def schedule_info(info: dict[str, Any], redact: Redactor) -> dict[str, Any]:
	"""A scheduled run's ``{"id", "due", "input", "note"}``, its input and note masked."""
	return {**info, "input": redact.deep(info.get("input")), "note": redact.deep(info.get("note"))}


def question(asked: dict[str, Any], redact: Redactor) -> dict[str, Any]:
	"""The attribute naming the question a parked run waits on, its message masked."""
	return {**asked, "message": redact(str(asked.get("message", "")))}


def result(ended: RunResult, redact: Redactor) -> RunResult:
	"""A result and its state masked (`payload`); its output object kept when it shows no secret."""
	data = payload(ended, redact)
	made = RunResult.from_dict(data["result"], RunState.from_dict(data["state"]))
	if data["result"].get("output") == ended.to_dict().get("output"):
		made.output = ended.output  # a model's output object, as the run gave it
	return made


def error(exc: BaseException, redact: Redactor) -> None:
	"""Mask, in place, the error a run's workflow ends with, before DBOS pickles it.

	Its text, arguments, notes and JSON-like attributes (`Redactor.exception`); a result or a
	state it carries (a failed run's: `RunError.result`) is replaced by its masked copy. DBOS's
	own signals (a cancel, a lost run: not an `Exception`) are left alone.
	"""
	if not isinstance(exc, Exception):
		return
	redact.exception(exc)
	for name, value in list(getattr(exc, "__dict__", {}).items()):
		if isinstance(value, RunResult):
			setattr(exc, name, result(value, redact))
		elif isinstance(value, RunState):
			setattr(exc, name, RunState.from_dict(state(value.to_dict(), redact)))


def instance_redactor(secrets: SecretSet) -> Redactor:
	"""A redactor of the instance's secrets, for a process that does not know a run's agent.

	An answer given by a process that only answers (``openmolt answer``) is masked with what it
	knows: its instance's secrets (the keys in its environment, ``secrets=[...]``).
	"""
	from openmolt_core.secrets import Redactor

	return Redactor(known=secrets)
