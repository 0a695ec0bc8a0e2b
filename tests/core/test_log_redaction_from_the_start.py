"""A log is masked from the moment an instance exists, whatever secrets it knows yet.

The record factory that masks every record (`openmolt_core._support.masking.install_log_redaction`)
was installed only when a secret was added by value (`SecretSet.add`) or a redactor with secrets
was made: an instance whose secrets come from the environment (read at their first use) or that
knows none yet logged an API key of the environment, and a URL's password or ``?api_key=`` (which
a log masks though no source knows them), in clear until then; a process with no secret at all
never masked a URL's. Each case runs in a fresh process: the factory is process-wide, and a test
before it would have installed it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

PASSWORD = "Passw0rd-xyz9Q"
QUERY_KEY = "AK-12345678Zq"
ENV_KEY = "sk-envkey-1234567890abc"
URL = f"https://bob:{PASSWORD}@api.example.com/v1/items?api_key={QUERY_KEY}&q=1"

_LOGGED = f"""
import logging, sys
logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(name)s %(message)s")
from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel
om = OpenMolt(entry_points=False)
{{made}}
for name in ("openmolt", "httpx", "some.library"):
	logging.getLogger(name).warning("failed for url %s", {URL!r})
	logging.getLogger(name).warning("the key was %s", {ENV_KEY!r})
	logging.getLogger(name).warning("error: Client error for url '{URL}'")
"""

MADE = {
	"an instance": "",
	"an agent": "om.create_agent(name='A', model=ScriptedModel([]))",
}


def _logged(made: str, *, env_key: bool) -> str:
	import os

	env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
	if env_key:
		env["OPENAI_API_KEY"] = ENV_KEY
	code = _LOGGED.format(made=made)
	done = subprocess.run(
		[sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
	)
	return done.stdout + done.stderr


@pytest.mark.parametrize("made", list(MADE))
@pytest.mark.parametrize("env_key", [True, False], ids=["key in the environment", "no secret"])
def test_a_log_is_masked_before_any_secret_is_added(made: str, env_key: bool) -> None:
	"""A URL's password and secret query value, and the environment's key, never show."""
	shown = _logged(MADE[made], env_key=env_key)
	assert shown.count("failed for url") == 3, shown
	assert PASSWORD not in shown and QUERY_KEY not in shown, shown
	if env_key:
		assert ENV_KEY not in shown, shown
	assert "https://bob:[redacted]@api.example.com" in shown
