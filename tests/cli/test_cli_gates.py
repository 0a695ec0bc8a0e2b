"""Agent files set the taint policy and built-in guardrails."""

import json
from pathlib import Path
from typing import Any

import pytest

from openmolt import ConfigurationError
from openmolt_core.cli._agentfile import AgentFileError
from openmolt_core.cli._run import load


def write(tmp_path: Path, **extra: Any) -> str:
	path = tmp_path / "a.json"
	spec = {"name": "A", "model": "openai:gpt-5-mini", "integrations": ["httpRequest"], **extra}
	path.write_text(json.dumps(spec))
	return str(path)


def test_an_agent_file_sets_the_taint_policy_and_guardrails(tmp_path: Path) -> None:
	path = write(
		tmp_path,
		taintPolicy={"onOutbound": "refuse", "onlyTrifecta": False},
		guardrails=[
			{"use": "max_size", "limit": 2000},
			{"use": "prompt_injection", "action": "refuse"},
			{"use": "json_schema", "on": "tool_call", "tools": "httpRequest", "schema": {}},
			{"use": "pii_redaction", "kinds": ["email", "card"]},
		],
	)
	agent = load(path, env_file=None, verbose=False).agent
	safety: Any = agent._hooks.by_name["safety"]
	assert safety.policy.on_outbound == "refuse" and safety.policy.only_trifecta is False
	assert safety.gates(
		agent._tools.values()
	)  # only_trifecta off: the outbound httpRequest is gated once tainted
	guards = [(g.name, g.on) for g in safety.guardrails]
	assert guards == [
		("max_size", "input"),
		("prompt_injection", "tool_result"),
		("json_schema", "tool_call"),
		("pii_redaction", "input"),
	]
	assert safety.guardrails[2].tools == ("httpRequest",)


@pytest.mark.parametrize(
	("guardrails", "message"),
	[
		([{"use": "nope"}], r"guardrails\[0\]: 'nope' is no built-in guardrail"),
		([{"use": "max_size", "limit": 5, "size": 3}], r"unknown option\(s\) \['size'\]"),
		([{"use": "max_size"}], r"guardrails\[0\] \(max_size\).*limit"),
		([{"limit": 5}], r"an entry is \{\"use\": name"),
		([{"use": "max_size", "limit": -1}], "limit must be a whole number"),
		(
			[{"use": "max_size"}],
			r"a\.json: guardrails\[0\] \(max_size\): missing required option 'limit'$",
		),
		(
			[{"use": "max_size", "limit": None}],
			r"a\.json: guardrails\[0\]\.limit: Input should be a valid integer \(got null\)$",
		),
		(
			[{"use": "max_size", "limit": "10"}],
			r'a\.json: guardrails\[0\]\.limit: Input should be a valid integer \(got "10"\)$',
		),
		(
			[{"use": "pii_redaction"}, {"use": "prompt_injection", "threshold": "x"}],
			r'a\.json: guardrails\[1\]\.threshold: Input should be a valid integer \(got "x"\)$',
		),
		(
			[{"use": "pii_redaction", "message": "no"}],
			r'a\.json: guardrails\[0\]\.message: Input should be a valid boolean \(got "no"\)$',
		),
		(
			[{"use": "pii_redaction", "kinds": ["email", "emial"]}],
			r"a\.json: guardrails\[0\]\.kinds\[1\]: Input should be 'email', 'phone', 'card', "
			r"'iban', 'ssn' or 'ip' \(got \"emial\"\)$",
		),
		(
			[{"use": "json_schema", "schema": {}, "tools": [1]}],
			r"a\.json: guardrails\[0\]\.tools\[0\]: Input should be a valid string \(got 1\)$",
		),
	],
)
def test_a_bad_guardrail_entry_names_its_place(
	tmp_path: Path, guardrails: list[Any], message: str
) -> None:
	with pytest.raises((ConfigurationError, AgentFileError), match=message):
		load(write(tmp_path, guardrails=guardrails), env_file=None, verbose=False)


def test_a_bad_taint_policy_is_named(tmp_path: Path) -> None:
	with pytest.raises((ConfigurationError, AgentFileError), match=r'"allow".*not "sometimes"'):
		load(write(tmp_path, taintPolicy="sometimes"), env_file=None, verbose=False)
	with pytest.raises(ConfigurationError, match=r'onOutbound: "approve", .* not "maybe"'):
		load(write(tmp_path, taintPolicy={"onOutbound": "maybe"}), env_file=None, verbose=False)


@pytest.mark.parametrize("key", ["warn", "onlyTrifecta"])
def test_a_taint_policy_switch_is_true_or_false(tmp_path: Path, key: str) -> None:
	""" "warn": "no" is refused, not taken as true (a string is truthy): JSON's types hold."""
	with pytest.raises(ConfigurationError, match=rf'{key}: true or false, not "no"'):
		load(write(tmp_path, taintPolicy={key: "no"}), env_file=None, verbose=False)
