"""``verbose`` per instance and per agent: the run observers' capability marks each run."""

import logging
import subprocess
import sys
import textwrap
from typing import Any

import anyio
import pytest

SCRIPT = textwrap.dedent(
	"""
	import anyio
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, call_tool, finish

	def agent(om, name, **options):
		return om.create_agent(name=name, model=ScriptedModel([finish("ok")]), **options)

	async def main():
		loud, quiet = OpenMolt(entry_points=False, verbose=True), OpenMolt(entry_points=False)
		await agent(loud, "Loud").run("x")
		await agent(quiet, "Quiet").run("x")
		await agent(loud, "Hushed", config={"verbose": False}).run("x")
		late = agent(quiet, "Late")
		quiet.verbose = True  # read at each run
		await late.run("x")
		quiet.verbose = False
		inner = agent(quiet, "Inner")
		steps = [call_tool("local.Inner", task="t"), finish("ok")]
		outer = loud.create_agent(name="Outer", model=ScriptedModel(steps), tools=[inner])
		assert (await outer.run("x")).output == "ok"
		# marking a run changes no fingerprint and adds no hook (the observers' wrap_run does it)
		hushed = agent(quiet, "Outer", tools=[inner])
		assert outer.fingerprint() == hushed.fingerprint()
		assert len(outer._hooks.wrap_run) == len(hushed._hooks.wrap_run) == 1
		print("checked")

	anyio.run(main)
	"""
)


def test_only_the_runs_of_verbose_agents_print_their_steps() -> None:
	"""A verbose instance's runs print, a quiet one's do not, an agent's own setting wins."""
	done = subprocess.run(
		[sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True, timeout=120
	)
	assert done.stdout.strip() == "checked"
	printed = done.stderr
	assert "openmolt: Loud step 1" in printed
	assert "openmolt: Late step 1" in printed  # the instance's setting, read when the run starts
	assert "Outer step 2" in printed  # after the sub-agent's call
	assert "invalid_reply" not in printed  # the sub-agent was called
	for quiet in ("Quiet", "Hushed", "Inner"):  # a quiet run nested in a verbose one stays quiet
		assert f"{quiet} step" not in printed, printed


FAILING = textwrap.dedent(
	"""
	import anyio
	from openmolt import OpenMolt
	from openmolt_core.hooks import Capability
	from openmolt_core.testing import ScriptedModel, finish

	class Broken(Capability):
		name = "broken"

		async def before_model(self, run):
			raise RuntimeError("a bug in a capability")

	async def main():
		om = OpenMolt(entry_points=False, verbose=True)
		agent = om.create_agent(
			name="Loud", model=ScriptedModel([finish("ok")]), capabilities=[Broken()]
		)
		try:
			await agent.run("x")
		except Exception as exc:
			print(type(exc).__name__)

	anyio.run(main)
	"""
)


def test_a_verbose_runs_unexpected_failure_reaches_stderr() -> None:
	"""The failure the loop logs once the drive has ended is printed, with its traceback."""
	done = subprocess.run(
		[sys.executable, "-c", FAILING], capture_output=True, text=True, check=True, timeout=120
	)
	assert done.stdout.strip() == "RunError"
	assert (
		"openmolt: Loud: the run failed unexpectedly: PluginError: capabilities:broken: "
		"its before_model hook raised RuntimeError"
	) in done.stderr
	assert "a bug in a capability" in done.stderr and "Traceback" in done.stderr
	assert done.stderr.count("the run failed unexpectedly") == 1


def test_an_unexpected_failure_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
	"""With capabilities around the drive or none, the application's handlers get one record."""
	from openmolt import OpenMolt
	from openmolt_core.errors import RunError
	from openmolt_core.hooks import Capability
	from openmolt_core.testing import ScriptedModel, finish

	class Broken(Capability):
		name = "broken"

		async def before_model(self, run: Any) -> None:
			raise RuntimeError("a bug in a capability")

	async def main() -> None:
		om = OpenMolt(entry_points=False)
		agent = om.create_agent(
			name="A", model=ScriptedModel([finish("ok")]), capabilities=[Broken()]
		)
		assert agent._hooks.wrap_run  # the run observers' capability wraps every drive
		with pytest.raises(RunError, match="failed unexpectedly"):
			await agent.run("x")

	with caplog.at_level(logging.ERROR, logger="openmolt"):
		anyio.run(main)
	failures = [r for r in caplog.records if "failed unexpectedly" in r.getMessage()]
	assert len(failures) == 1
	assert failures[0].exc_info or failures[0].exc_text  # with its traceback


LATE = textwrap.dedent(
	"""
	import anyio
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, finish

	async def main():
		om = OpenMolt(entry_points=False)  # the only instance: no verbose one made the handler
		agent = om.create_agent(name="Late", model=ScriptedModel([finish("ok")]))
		om.verbose = True
		await agent.run("x")

	anyio.run(main)
	"""
)


def test_an_instance_made_verbose_later_prints_its_runs() -> None:
	"""``om.verbose`` is read at each run, also when no instance of the process was verbose yet."""
	done = subprocess.run(
		[sys.executable, "-c", LATE], capture_output=True, text=True, check=True, timeout=120
	)
	assert "openmolt: Late step 1" in done.stderr
