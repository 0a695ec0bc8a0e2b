"""``agent.start(run_id=X)`` twice: a retry attaches to its run; another user's start is refused.

A taken run id attaches to its run (a webhook's delivery retried on another server, a client's
retry): nothing runs twice, and the retry gets the run's result. A start for another end user
under that id is not a retry of it: attached, its caller would be handed the first user's run
(its output and state) as its own, and its own input would be dropped unsaid.
"""

from __future__ import annotations

import pytest

from openmolt import ConfigurationError, OpenMolt
from openmolt_core.testing import ScriptedModel, finish

pytestmark = pytest.mark.anyio


async def test_a_start_for_another_user_under_a_taken_run_id_is_refused(url: str) -> None:
	"""Alice's run holds the id: the same start again attaches (the model is asked once); Bob's
	start under it is refused naming the run, and gets nothing of Alice's run."""
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel([finish("for alice"), finish("for bob")])
	agent = om.create_agent(name="Desk", model=model)
	try:
		first = await (await agent.start("alice's question", run_id="r1", user="alice")).result()
		assert first is not None and first.output == "for alice"
		again = await (await agent.start("alice's question", run_id="r1", user="alice")).result()
		assert again is not None and again.output == "for alice" and model.calls == 1
		with pytest.raises(ConfigurationError, match="run r1 acts for another user"):
			await agent.start("bob's question", run_id="r1", user="bob")
		with pytest.raises(ConfigurationError, match="run r1 acts for another user"):
			await agent.start("anyone's question", run_id="r1")
		assert model.calls == 1
	finally:
		await om.aclose()
