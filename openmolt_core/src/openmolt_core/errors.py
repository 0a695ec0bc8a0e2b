"""The errors OpenMolt raises on purpose.

```
OpenMoltError
├── ConfigurationError      bad options, a missing key, an unknown model or integration
├── PluginError             a plugin is missing, broken, or registered something invalid
├── ProviderError           a model provider failed (carries provider and status_code)
│   └── UnreadableAttachment  a model cannot read a file sent to it (refused before sending)
├── IntegrationError        an integration definition or credential is invalid
├── ToolError               a tool failed; the loop turns it into a result the model sees
├── ApprovalError           a decision was refused: forged, replayed, stale or invalid
└── RunError                a run stopped on an error; carries the partial result to resume from
    └── RunCancelledError   a durable run was cancelled (also a ConfigurationError)
```

Messages say what to do next, and never contain a secret. Every error survives `pickle`, and
`to_dict` gives it as JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
	from openmolt_core.llm import Usage
	from openmolt_core.result import RunResult

__all__ = [
	"ApprovalError",
	"ConfigurationError",
	"IntegrationError",
	"OpenMoltError",
	"PluginError",
	"ProviderError",
	"RunCancelledError",
	"RunError",
	"ToolError",
	"UnreadableAttachment",
]


class OpenMoltError(Exception):
	"""Base class for every error OpenMolt raises on purpose."""

	def __reduce__(self) -> tuple[Any, ...]:
		# Exception pickles as cls(*args), which fails for keyword-only arguments (provider=...):
		# rebuild without __init__, from the message arguments and the attributes.
		return (_rebuild, (type(self), self.args, dict(self.__dict__)))

	def to_dict(self) -> dict[str, Any]:
		"""The error as JSON: its type, message and public attributes."""
		out: dict[str, Any] = {"type": type(self).__name__, "message": str(self)}
		for key, value in self.__dict__.items():
			if not key.startswith("_"):
				out[key] = _json(value)
		return out


class ConfigurationError(OpenMoltError):
	"""An option is missing or wrong; the message names the option and the fix."""


class PluginError(OpenMoltError):
	"""A plugin is missing, broken, or registered something invalid.

	Args:
		message: What went wrong and what to do.
		plugin: The plugin's qualified name, e.g. ``integrations:notion``.
	"""

	def __init__(self, message: str, *, plugin: str) -> None:
		super().__init__(f"{plugin}: {message}")
		self.plugin = plugin


class ProviderError(OpenMoltError):
	"""A model provider refused or failed a request.

	Args:
		message: What went wrong and what to do.
		provider: The provider name (``openai``).
		model: The model id, when known.
		status_code: The HTTP status, when there was a reply.
		retryable: Whether trying again later may succeed.
		context_exceeded: Whether the request was longer than the model's context window.
		usage: What the failed call was billed for (None: nothing); the run counts it.
		usage_by_model: The same per model id (``provider:model``), set by the run.
	"""

	# Class defaults: an error pickled before these attributes existed is rebuilt without them.
	usage: Usage | None = None
	usage_by_model: Mapping[str, Usage] = MappingProxyType({})

	def __init__(
		self,
		message: str,
		*,
		provider: str,
		model: str | None = None,
		status_code: int | None = None,
		retryable: bool = False,
		context_exceeded: bool = False,
		usage: Usage | None = None,
		usage_by_model: Mapping[str, Usage] | None = None,
	) -> None:
		where = f"{provider}:{model}" if model else provider
		super().__init__(f"{where}: {message}")
		self.provider = provider
		self.model = model
		self.status_code = status_code
		self.retryable = retryable
		self.context_exceeded = context_exceeded
		self.usage = usage
		self.usage_by_model = dict(usage_by_model or {})


class UnreadableAttachment(ProviderError):
	"""A model cannot read a file the conversation sends it, so the request was not sent."""


class IntegrationError(OpenMoltError):
	"""An integration's definition or credential is invalid.

	Args:
		message: What went wrong and what to do.
		integration: The integration id.
	"""

	def __init__(self, message: str, *, integration: str) -> None:
		super().__init__(f"{integration}: {message}")
		self.integration = integration


class ToolError(OpenMoltError):
	"""A tool could not do its work. The agent loop reports it to the model as an error result.

	Args:
		message: A message for the model: what failed and, when known, how to call the tool right.
		tool: The tool handle.
		status_code: The HTTP status of the service's reply, for HTTP tools.
		details: JSON-serializable details (the service's error body, trimmed).
		retryable: Whether the same call may succeed later.
	"""

	def __init__(
		self,
		message: str,
		*,
		tool: str = "",
		status_code: int | None = None,
		details: Any = None,
		retryable: bool = False,
	) -> None:
		super().__init__(message)
		self.message = message
		self.tool = tool
		self.status_code = status_code
		self.details = details
		self.retryable = retryable

	def to_dict(self) -> dict[str, Any]:
		"""The error as the JSON object the model sees."""
		out: dict[str, Any] = {"message": self.message}
		if self.status_code is not None:
			out["status"] = self.status_code
		if self.details is not None:
			out["details"] = self.details
		return out


class ApprovalError(OpenMoltError):
	"""An approval decision was refused; the call it was for did not run.

	Args:
		message: What is wrong with the decision and what to do.
		problem: ``forged`` (not signed by this instance), ``replayed`` (for another call or run,
			or decided already), ``stale`` (the call's arguments changed, or it no longer waits)
			or ``invalid`` (the edited input does not match the tool's input schema).
		call: The call the decision names (``tool:<step>:<index>:<handle>``).
	"""

	def __init__(self, message: str, *, problem: str, call: str = "") -> None:
		super().__init__(message)
		self.problem = problem
		self.call = call


class RunError(OpenMoltError):
	"""A run stopped on an error it could not feed back to the model; ``result.state`` resumes it.

	Args:
		message: What went wrong.
		result: The run's result up to the failure.
	"""

	def __init__(self, message: str, *, result: RunResult) -> None:
		super().__init__(message)
		self.result = result

	def to_dict(self) -> dict[str, Any]:
		"""The error as JSON: type, message, the result so far and the state to resume from."""
		return {
			"type": type(self).__name__,
			"message": str(self),
			"result": self.result.to_dict(),
			"state": self.result.state.to_dict(),
		}


class RunCancelledError(RunError, ConfigurationError):
	"""A durable run was cancelled (``om.cancel``): final, as a later answer or resume is refused.

	Args:
		message: Which run, and that it was cancelled.
		result: The run's result as far as it is known.
	"""


def _rebuild(cls: type[OpenMoltError], args: tuple[Any, ...], state: dict[str, Any]) -> Any:
	error = cls.__new__(cls, *args)
	error.args = args
	error.__dict__.update(state)
	return error


def _json(value: Any) -> Any:
	if value is None or isinstance(value, str | int | float | bool):
		return value
	if isinstance(value, list | tuple):
		return [_json(v) for v in value]
	if isinstance(value, dict):
		return {str(k): _json(v) for k, v in value.items()}
	to_dict = getattr(value, "to_dict", None)
	return to_dict() if callable(to_dict) else str(value)
