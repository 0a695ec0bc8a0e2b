"""The ``callers`` of an A2A or AG-UI trigger: each mistake is an error naming the field and the
fix, and never the token."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import ValidationError

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.testing import ScriptedModel
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer

KINDS = ["a2a", "agui"]


def _server(kind: str, config: dict[str, Any]) -> TriggerServer:
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]))
	return TriggerServer([(agent, Triggers.model_validate({kind: config}))], port=0)


@pytest.mark.parametrize("kind", KINDS)
def test_an_unset_variable_names_the_caller_and_the_variable_to_export(
	kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A caller's tokenEnv that is not set stops the server, naming the field and the export."""
	monkeypatch.delenv("CRM_TOKEN", raising=False)
	with pytest.raises(ConfigurationError) as refused:
		_server(kind, {"callers": {"crm": {"tokenEnv": "CRM_TOKEN"}}})
	assert "callers.crm.tokenEnv" in str(refused.value)
	assert "export CRM_TOKEN" in str(refused.value)


@pytest.mark.parametrize("kind", KINDS)
def test_a_variable_holding_only_spaces_is_an_empty_token(
	kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A token of spaces would match nothing a caller can send: refused, naming the caller."""
	monkeypatch.setenv("CRM_TOKEN", "   ")
	with pytest.raises(ConfigurationError, match=r"caller 'crm'.*empty"):
		_server(kind, {"callers": {"crm": {"tokenEnv": "CRM_TOKEN"}}})


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("config", ["callers", "token"])
def test_a_token_too_short_to_mask_or_to_resist_guessing_is_refused(
	kind: str, config: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
	"""Under 8 characters (what the logs mask): refused with how to make one, never shown."""
	monkeypatch.setenv("CRM_TOKEN", "abc12")
	caplog.set_level(logging.DEBUG)
	given = (
		{"callers": {"crm": {"tokenEnv": "CRM_TOKEN"}}}
		if config == "callers"
		else {"tokenEnv": "CRM_TOKEN"}
	)
	with pytest.raises(ConfigurationError) as refused:
		_server(kind, given)
	message = str(refused.value)
	assert "has 5 characters; give one of at least 8" in message
	assert "secrets.token_urlsafe" in message
	assert "abc12" not in message and "abc12" not in caplog.text
	monkeypatch.setenv("CRM_TOKEN", "abc12abc")  # 8: served
	assert _server(kind, given) is not None


@pytest.mark.parametrize("kind", KINDS)
def test_two_callers_with_one_token_are_refused_without_showing_it(
	kind: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
	"""The token names its caller: two with one token (given or read) are refused, by name."""
	shared = "shared-token-0123456789abcdef"
	monkeypatch.setenv("WEB_TOKEN", shared)
	caplog.set_level(logging.DEBUG)
	with pytest.raises(ConfigurationError) as refused:
		_server(
			kind,
			{"callers": {"crm": {"token": shared}, "web": {"tokenEnv": "WEB_TOKEN"}}},
		)
	assert "'crm' and 'web'" in str(refused.value)
	assert "a token of its own" in str(refused.value)
	assert shared not in str(refused.value)
	assert shared not in caplog.text


@pytest.mark.parametrize(
	("config", "says"),
	[
		(
			{"token": "t" * 20, "callers": {"crm": {"token": "u" * 20}}},
			"not both",
		),
		(
			{"tokenEnv": "SOME_TOKEN", "callers": {"crm": {"token": "u" * 20}}},
			"callers.default.tokenEnv",
		),
		({"callers": {"crm team": {"token": "u" * 20}}}, "'crm team' is not a caller name"),
		({"callers": {"crm:web": {"token": "u" * 20}}}, "letters, digits, '-' and '_'"),
		({"callers": {"": {"token": "u" * 20}}}, "is not a caller name"),
		({"callers": {}}, "name at least one caller"),
		({"callers": {"crm": {}}}, "tokenEnv"),
		({"callers": {"crm": {"token": ""}}}, "empty"),
		({"callers": {"crm": {"token": "  "}}}, "empty"),
		({"callers": {"crm": {"token": "u" * 20, "tokenEnv": "X"}}}, "not both"),
	],
)
@pytest.mark.parametrize("kind", KINDS)
def test_a_bad_callers_setting_is_a_validation_error_naming_the_fix(
	kind: str, config: dict[str, Any], says: str
) -> None:
	"""Both a token and callers, a bad name, no caller, a caller without (or with an empty) token."""
	with pytest.raises(ValidationError) as refused:
		Triggers.model_validate({kind: config})
	assert says in str(refused.value)
	assert "u" * 20 not in str(refused.value)


@pytest.mark.parametrize("kind", KINDS)
def test_a_caller_named_default_keeps_the_single_tokens_ids(kind: str) -> None:
	"""``callers.default`` is the caller of a single token: its owner is the SDK's ``""``."""
	server = _server(
		kind, {"callers": {"default": {"token": "d" * 20}, "crm": {"token": "c" * 20}}}
	)
	guard = server.guards[(kind, "Helper")]
	assert set(guard.tokens) == {"default", "crm"}
	assert set(guard.limits) == {"default", "crm"}


def test_a_callers_token_is_masked_in_the_triggers_repr() -> None:
	"""A literal caller token never shows in the settings' repr (it is a secret field)."""
	token = "literal-caller-token-0123456789"
	triggers = Triggers.model_validate({"a2a": {"callers": {"crm": {"token": token}}}})
	assert token not in repr(triggers)
	assert token not in str(triggers)


def test_a_request_no_guard_admitted_is_nobody_not_the_default_caller() -> None:
	"""Unknown at the seam is unsafe: a request without an admitted caller (an open path) and an
	A2A call built without one own nothing of the default caller's (tasks, contexts, threads)."""
	from starlette.requests import Request

	from openmolt_serve._token import DEFAULT_CALLER, NOBODY, caller_of
	from openmolt_serve.a2a import Caller, call_caller

	bare = Request({"type": "http", "method": "GET", "path": "/", "headers": []})
	assert caller_of(bare) == NOBODY != DEFAULT_CALLER
	assert call_caller(None) == NOBODY
	assert Caller(NOBODY).user_name not in ("", DEFAULT_CALLER)
	admitted = Request({"type": "http", "method": "POST", "path": "/", "headers": [], "state": {}})
	admitted.scope["state"]["openmolt_caller"] = DEFAULT_CALLER
	assert caller_of(admitted) == DEFAULT_CALLER
