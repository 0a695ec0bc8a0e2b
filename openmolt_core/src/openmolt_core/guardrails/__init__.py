"""Guardrails: input, tool-call, tool-result and output checks, as functions or agents.

The model is in `openmolt_core.guardrails.base` (`Guardrail`, `Verdict`, the stages); the
built-ins are `pii_redaction` (`openmolt_core.guardrails.pii`), `prompt_injection`
(`openmolt_core.guardrails.injection`), `max_size` and `json_schema`
(`openmolt_core.guardrails.checks`); `from_spec` makes a built-in from an agent file's entry. Give them to ``create_agent(guardrails=[...])`` or, for
every agent of an instance, ``OpenMolt(guardrails=[...])``. Guide: docs/guides/guardrails.md.
"""

from __future__ import annotations

from openmolt_core.guardrails.base import (
	STAGES,
	VERDICT_SCHEMA,
	Action,
	GuardFunction,
	Guardrail,
	GuardrailCheck,
	Stage,
	Verdict,
	allow,
	guardrail,
	refuse,
	rewrite,
	trip,
)
from openmolt_core.guardrails.checks import json_schema, max_size
from openmolt_core.guardrails.injection import injection_signals, prompt_injection
from openmolt_core.guardrails.pii import find_pii, pii_redaction, redact_pii
from openmolt_core.guardrails.spec import BUILTINS, from_spec

__all__ = [
	"BUILTINS",
	"STAGES",
	"VERDICT_SCHEMA",
	"Action",
	"GuardFunction",
	"Guardrail",
	"GuardrailCheck",
	"Stage",
	"Verdict",
	"allow",
	"find_pii",
	"from_spec",
	"guardrail",
	"injection_signals",
	"json_schema",
	"max_size",
	"pii_redaction",
	"prompt_injection",
	"redact_pii",
	"refuse",
	"rewrite",
	"trip",
]
