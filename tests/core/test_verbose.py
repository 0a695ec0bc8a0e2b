"""``verbose`` per instance and per agent: the run observers' capability marks each run."""

import subprocess
import sys
import textwrap

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
