"""Every error OpenMolt raises survives pickle (a durable store keeps it) and to_dict (JSON)."""

from __future__ import annotations

import importlib
import inspect
import json
import pickle
import pkgutil
from typing import Any

import pytest

import openmolt_core
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.errors import OpenMoltError, ProviderError, RunError, ToolError
from openmolt_core.llm import Message, Usage
from openmolt_core.result import RunResult, RunState
from openmolt_core.testing import ScriptedModelError

PACKAGES = [
	"openmolt_core",
	"openmolt_providers",
	"openmolt_integrations",
	"openmolt_mcp",
	"openmolt_dbos",
]


def _import_everything() -> None:
	for name in PACKAGES:
		package = importlib.import_module(name)
		for info in pkgutil.walk_packages(package.__path__, f"{name}."):
			try:
				importlib.import_module(info.name)
			except Exception:  # a module that needs an optional extra
				continue


def _subclasses(cls: type) -> list[type]:
	out = []
	for sub in cls.__subclasses__():
		out.append(sub)
		out.extend(_subclasses(sub))
	return out


def _result() -> RunResult:
	state = RunState(messages=[Message("user", "hi"), Message("assistant", "{}")], steps=1)
	state.usage.add(Usage(input_tokens=3, output_tokens=2))
	return RunResult(
		output=None,
		status="error",
		human_message="",
		plan=[],
		steps=1,
		usage=state.usage,
		state=state,
	)


def _instance(cls: type[Exception]) -> Exception:
	if issubclass(cls, RunError):
		return cls("the provider failed", result=_result())
	params = inspect.signature(cls.__init__).parameters
	kwargs: dict[str, Any] = {}
	for name, param in list(params.items())[1:]:
		if param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL) or name == "message":
			continue
		if param.default is inspect.Parameter.empty:
			kwargs[name] = (
				429 if name == "status_code" else (0.5 if "after" in name else f"<{name}>")
			)
	if issubclass(cls, ProviderError):
		kwargs.setdefault("provider", "openai")  # subclasses pass it on through **kwargs
		kwargs.setdefault("status_code", 503)
	if issubclass(cls, ToolError):
		kwargs.setdefault("details", {"error": {"code": "x"}})
	return cls("something failed; try again", **kwargs)


def _every_error() -> list[type[Exception]]:
	_import_everything()
	classes = {
		OpenMoltError,
		*_subclasses(OpenMoltError),
		HumanInputUnavailable,
		ScriptedModelError,
	}
	return sorted(classes, key=lambda c: f"{c.__module__}.{c.__qualname__}")


ERRORS = _every_error()


def test_the_list_covers_every_package_s_errors() -> None:
	"""The errors of the core and of the plugins are all found."""
	names = {c.__name__ for c in ERRORS}
	assert {
		"ConfigurationError",
		"PluginError",
		"ProviderError",
		"IntegrationError",
		"ToolError",
	} <= names
	assert {"RunError", "AgentFileError"} <= names
	assert len(ERRORS) >= 10


@pytest.mark.parametrize("cls", ERRORS, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_an_error_survives_a_pickle_round_trip(cls: type[Exception]) -> None:
	"""The same class, message and attributes after pickle.loads(pickle.dumps(error))."""
	error = _instance(cls)
	back = pickle.loads(pickle.dumps(error))
	assert type(back) is cls
	assert str(back) == str(error)
	assert back.args == error.args
	public = {k: v for k, v in vars(error).items() if k != "result"}
	assert {k: v for k, v in vars(back).items() if k != "result"} == public


@pytest.mark.parametrize(
	"cls", [c for c in ERRORS if issubclass(c, OpenMoltError)], ids=lambda c: c.__qualname__
)
def test_an_error_to_dicts_into_json(cls: type[OpenMoltError]) -> None:
	"""to_dict gives JSON holding the message (and, for tool errors, what the model sees)."""
	error = _instance(cls)
	data = error.to_dict()
	assert json.loads(json.dumps(data)) == data
	if issubclass(cls, ToolError):
		assert data["message"] == "something failed; try again"
	else:
		assert data["type"] == cls.__name__ and str(error) in data["message"]


def test_a_run_error_keeps_its_state_through_pickle_and_to_dict() -> None:
	"""A RunError read back in another process still carries the state to resume from."""
	error = _instance(RunError)
	assert isinstance(error, RunError)
	back = pickle.loads(pickle.dumps(error))
	assert isinstance(back, RunError)
	assert back.result.state.messages == error.result.state.messages
	assert back.result.state.run_id == error.result.state.run_id
	assert back.result.usage.to_dict() == error.result.usage.to_dict()
	data = back.to_dict()
	assert data["state"]["run_id"] == error.result.state.run_id
	assert RunState.from_dict(data["state"]).messages == error.result.state.messages


def test_provider_attributes_survive() -> None:
	"""Keyword-only attributes (provider, model, status, retryable) come back as they were."""
	error = ProviderError(
		"rate limited", provider="openai", model="gpt-5", status_code=429, retryable=True
	)
	back = pickle.loads(pickle.dumps(error))
	assert (back.provider, back.model, back.status_code, back.retryable) == (
		"openai",
		"gpt-5",
		429,
		True,
	)
	assert openmolt_core  # the package is importable by name, for the walk above
