"""A failed run's error chain (its cause, the cause's notes and arguments) shows no secret, as
``traceback`` prints it; the exceptions keep their types."""

from __future__ import annotations

import traceback
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.errors import RunError
from openmolt_core.testing import ScriptedModel

pytestmark = pytest.mark.anyio

KEY = "sk-live-Chained-0042"


class ProviderBoom(Exception):
	pass


async def test_the_cause_of_a_failed_run_shows_no_secret() -> None:
	async def fail(request: Any) -> Any:
		try:
			raise ValueError(f"inner {KEY}")
		except ValueError as inner:
			error = ProviderBoom("the provider said", {"key": KEY})
			error.add_note(f"sent to https://api.example/v1?key={KEY}")
			raise error from inner

	om = OpenMolt({"openai": {"api_key": KEY}}, entry_points=False)
	agent = om.create_agent(name="A", model=ScriptedModel([fail]))
	with pytest.raises(RunError) as raised:
		await agent.run("go")
	error = raised.value
	shown = "".join(traceback.format_exception(error))
	assert "ProviderBoom" in shown and "inner [redacted]" in shown, shown
	assert KEY not in shown
	assert isinstance(error.__cause__, ProviderBoom)
	assert isinstance(error.__cause__.__cause__, ValueError)
