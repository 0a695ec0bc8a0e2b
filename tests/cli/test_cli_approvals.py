"""The command asks for approvals on a terminal, refuses without one, or lets --approvals decide."""

import contextlib
import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

from openmolt_core.cli._progress import Progress
from openmolt_core.cli._run import load

AGENT = """
import json, sys
from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish


def refund(customer: str, amount: int) -> dict:
	'''Refund a customer.

	Args:
		customer: The customer id.
		amount: Cents.
	'''
	print(f"REFUNDED {amount}", file=sys.stderr)
	return {"refunded": amount}


def report(request):
	# Finish with what the refund call's result said, so the test can read it on stdout.
	return finish(json.loads(request.messages[-1].content)["results"][0])


om = OpenMolt(entry_points=False)
call = {**call_tool("local.refund", customer="cus_1", amount=500), "reason": "the customer asked"}
agent = om.create_agent(
	name="Pay",
	model=ScriptedModel([call, report]),
	tools=[refund],
	requires_approval=["local.refund"],
)
input = "refund cus_1"
"""


def write_agent(tmp_path: Path) -> Path:
	path = tmp_path / "pay.py"
	path.write_text(AGENT)
	return path


def entry_of(stdout: str) -> dict[str, Any]:
	result = json.loads(stdout)
	assert result["status"] == "success", result
	output: dict[str, Any] = result["output"]
	return output


def test_without_a_terminal_the_run_parks_for_the_viewer(tmp_path: Path, cli: Any) -> None:
	"""No terminal on stdin: nothing runs, the run parks in the store and says where to decide it."""
	import anyio

	from openmolt_core.runstore import RunStore

	store = tmp_path / "runs.db"
	env = cli.clean_env(OPENMOLT_RUN_STORE=str(store))
	done = cli.openmolt(str(write_agent(tmp_path)), "--json", cwd=tmp_path, env=env)
	assert done.returncode == 6, done.stderr  # ExitCode.APPROVAL_REQUIRED
	result = json.loads(done.stdout)
	assert result["status"] == "approval_required"
	# said for the command's user, piped or not: the file named, no Python call
	assert f"`openmolt ui {tmp_path / 'pay.py'}`" in result["error"]
	assert "agent.resume" not in result["error"]
	assert "REFUNDED" not in done.stderr
	(row,) = anyio.run(RunStore(store).runs)
	assert row.status == "approval_required" and row.pending is not None
	assert row.pending["kind"] == "approval"
	assert row.trigger == {"kind": "cli", "where": "Pay"}  # where the run came from
	# The line for a person names the file and gives no Python advice, as the JSON does.
	plain = cli.openmolt(str(write_agent(tmp_path)), cwd=tmp_path, env=env)
	said = plain.stderr.splitlines()[-1]
	assert said.startswith("openmolt: the run ended with status approval_required: local.refund")
	assert f"`openmolt ui {tmp_path / 'pay.py'}`" in said
	assert "agent.resume" not in said and "AGENT_FILE" not in said


def test_a_parked_run_s_summary_names_the_file_and_no_python_call(tmp_path: Path) -> None:
	"""On a terminal, the summary's error line says how to decide with the command, not Python."""
	from openmolt_core.cli._run import _print_result
	from openmolt_core.llm import Usage
	from openmolt_core.result import RunResult, RunState

	path = write_agent(tmp_path)
	error = (
		"local.refund waits for approval (no terminal to decide this call; the run parks: decide "
		"it in the viewer (`openmolt ui AGENT_FILE`), or run the command on a terminal, or with "
		"--approvals approve); decide with agent.approval_requests(state) and "
		"agent.resume(state, decision=...)"
	)
	result = RunResult(None, "approval_required", "", [], 1, Usage(), RunState(), error)
	loaded = load(str(path), env_file=None, verbose=False)
	out = io.StringIO()
	with contextlib.redirect_stdout(out):
		_print_result(result, loaded, Progress("plain", io.StringIO()), readable=True)
	text = out.getvalue()
	assert f"decide it in the viewer (`openmolt ui {path}`)" in text
	assert "agent.resume" not in text and "approval_requests" not in text


def test_the_flag_approves_or_denies_every_call(tmp_path: Path, cli: Any) -> None:
	"""--approvals approve runs the call; --approvals deny refuses it."""
	path = str(write_agent(tmp_path))
	approved = cli.openmolt(path, "--approvals", "approve", cwd=tmp_path)
	assert entry_of(approved.stdout)["result"] == {"refunded": 500}
	assert "REFUNDED 500" in approved.stderr
	denied = cli.openmolt(path, "--approvals", "deny", cwd=tmp_path)
	assert "--approvals deny" in entry_of(denied.stdout)["error"]
	assert "REFUNDED" not in denied.stderr


def run_on_a_terminal(tmp_path: Path, cli: Any, typed: bytes) -> tuple[str, str]:
	primary, secondary = pty.openpty()
	proc = subprocess.Popen(
		[sys.executable, "-m", "openmolt", str(write_agent(tmp_path))],
		cwd=tmp_path,
		env=cli.clean_env(),
		stdin=secondary,
		stdout=subprocess.PIPE,
		stderr=subprocess.PIPE,
		text=True,
	)
	os.close(secondary)
	os.write(primary, typed)
	out, err = proc.communicate(timeout=60)
	os.close(primary)
	assert proc.returncode == 0, err
	return out, err


def test_on_a_terminal_a_person_approves(tmp_path: Path, cli: Any) -> None:
	"""The call, its reason and input are shown; 'y' runs it."""
	out, err = run_on_a_terminal(tmp_path, cli, b"y\n")
	assert "Pay wants to call local.refund" in err
	assert "reason: the customer asked" in err and '"amount": 500' in err
	assert entry_of(out)["approval"]["decision"] == "approved"
	assert "REFUNDED 500" in err


def test_on_a_terminal_a_person_edits_the_input(tmp_path: Path, cli: Any) -> None:
	"""'e' and a JSON line: the edited input runs; a line that is no JSON asks again."""
	typed = b'e\nnot json\ne\n{"customer": "cus_1", "amount": 250}\n'
	out, err = run_on_a_terminal(tmp_path, cli, typed)
	entry = entry_of(out)
	assert entry["approval"]["decision"] == "edited"
	assert entry["input"] == {"customer": "cus_1", "amount": 250}
	assert "not JSON" in err and "REFUNDED 250" in err


def test_on_a_terminal_a_person_denies_with_a_reason(tmp_path: Path, cli: Any) -> None:
	"""'n' and a reason: the model reads the reason."""
	out, err = run_on_a_terminal(tmp_path, cli, b"n\nopen a ticket first\n")
	assert entry_of(out)["error"] == "denied by the approver: open a ticket first"
	assert "REFUNDED" not in err


def test_an_agent_file_sets_its_approval_rules(tmp_path: Path) -> None:
	"""requiresApproval in a JSON agent file becomes the agent's policy."""
	path = tmp_path / "a.json"
	path.write_text(
		json.dumps(
			{
				"name": "A",
				"model": "openai:gpt-5-mini",
				"integrations": ["httpRequest"],
				"requiresApproval": ["httpRequest:writes"],
			}
		)
	)
	loaded = load(str(path), env_file=None, verbose=False)
	listed = json.loads(loaded.agent._static_prefix() + "}")["tools"]
	assert [t.get("approval") for t in listed] == [True]
