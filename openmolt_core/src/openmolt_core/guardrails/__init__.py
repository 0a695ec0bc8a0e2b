"""Guardrails: input, tool-call, tool-result and output checks, as functions or agents.

The model is in `openmolt_core.guardrails.base` (`Guardrail`, `Verdict`, the stages); the
built-ins are `pii_redaction` (`openmolt_core.guardrails.pii`), `prompt_injection`
(`openmolt_core.guardrails.injection`), `max_size` and `json_schema`
(`openmolt_core.guardrails.checks`); `from_spec` makes a built-in from an agent file's entry. Give them to ``create_agent(guardrails=[...])`` or, for
every agent of an instance, ``OpenMolt(guardrails=[...])``. Guide: docs/guides/guardrails.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from openmolt_core._support import lazy_exports

if TYPE_CHECKING:
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

_EXPORTS = {
	"STAGES": "openmolt_core.guardrails.base",
	"VERDICT_SCHEMA": "openmolt_core.guardrails.base",
	"Action": "openmolt_core.guardrails.base",
	"GuardFunction": "openmolt_core.guardrails.base",
	"Guardrail": "openmolt_core.guardrails.base",
	"GuardrailCheck": "openmolt_core.guardrails.base",
	"Stage": "openmolt_core.guardrails.base",
	"Verdict": "openmolt_core.guardrails.base",
	"allow": "openmolt_core.guardrails.base",
	"guardrail": "openmolt_core.guardrails.base",
	"refuse": "openmolt_core.guardrails.base",
	"rewrite": "openmolt_core.guardrails.base",
	"trip": "openmolt_core.guardrails.base",
	"json_schema": "openmolt_core.guardrails.checks",
	"max_size": "openmolt_core.guardrails.checks",
	"injection_signals": "openmolt_core.guardrails.injection",
	"prompt_injection": "openmolt_core.guardrails.injection",
	"find_pii": "openmolt_core.guardrails.pii",
	"pii_redaction": "openmolt_core.guardrails.pii",
	"redact_pii": "openmolt_core.guardrails.pii",
	"BUILTINS": "openmolt_core.guardrails.spec",
	"from_spec": "openmolt_core.guardrails.spec",
}

# The built-ins load on first use: a run without guardrails imports only the model (base).
__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
