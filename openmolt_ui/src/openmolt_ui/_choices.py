"""What the run list can be filtered by: every status and every origin, from where they are defined.

The page's two menus are made here, from the core's lists (`openmolt_core.result.RunStatus`,
`openmolt_core.triggers.TRIGGER_KINDS`), and the server checks a filter against the same tuples:
a status or a kind of trigger added to the core is in the menu without an edit to the page.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from typing import get_args

from openmolt_core.result import RunStatus
from openmolt_core.triggers import TRIGGER_KINDS

__all__ = ["ORIGINS", "STATUSES", "options"]

STATUSES: tuple[str, ...] = (
	"running",
	"waiting",
	*get_args(RunStatus),
	"cancelled",
	"killed",
	"stranded",
	"skipped",
)
"""The statuses the list can be filtered by (every `RunStatus`, ``cancelled``, ``killed``, and
the run store's ``stranded`` and ``skipped``: `openmolt_core.runstore.StoredRun.status`)."""

ORIGINS: tuple[str, ...] = tuple(
	dict.fromkeys(("cli", "api", "agent", *(k for k in TRIGGER_KINDS if k != "operator")))
)
"""Where a run can come from, as its row records it (`openmolt_core.observe.started_by`): the CLI,
Python (``api``), a calling agent (``agent``: a sub-agent's run), any trigger. The trigger kind
``operator`` is the trust of the operator's own code, whose runs record ``api`` or ``cli``."""

_LABELS: Mapping[str, str] = {
	"human_input_required": "waits for an answer",
	"approval_required": "waits for approval",
	"authorization_required": "waits for an account",
	"waiting": "waits for a person (live)",
	"cli": "CLI",
	"api": "API",
	"mcp": "MCP",
	"a2a": "A2A",
	"agui": "AG-UI",
}


def options(values: Iterable[str], any_label: str) -> str:
	"""The ``<option>`` elements of a filter menu: "any" first, then each value with its label.

	Args:
		values: The values (`STATUSES` or `ORIGINS`).
		any_label: The label of the empty choice (``any status``).
	"""
	items = [f'<option value="">{html.escape(any_label)}</option>']
	for value in values:
		label = _LABELS.get(value, value.replace("_", " "))
		items.append(f'<option value="{html.escape(value)}">{html.escape(label)}</option>')
	return "\n".join(items)
