"""``OpenMolt(secrets=...)``: values the application knows are secret join the instance's set."""

from __future__ import annotations

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel


def test_secrets_given_to_the_instance_are_masked_by_its_agents() -> None:
	om = OpenMolt(entry_points=False, secrets=["db-password-in-code-0006"])
	assert "db-password-in-code-0006" in om.secrets.values()
	redact = om.create_agent(name="A", model=ScriptedModel([]))._redactor
	assert redact("pw=db-password-in-code-0006") == "pw=[redacted]"
	assert "one-string-0007" in OpenMolt(entry_points=False, secrets="one-string-0007").secrets


def test_a_mapping_gives_its_values_not_its_names() -> None:
	"""``secrets={"db": value}`` masks the value; the name stays an ordinary word."""
	om = OpenMolt(entry_points=False, secrets={"stripe": "mapped-secret-value-0010"})
	assert "mapped-secret-value-0010" in om.secrets.values()
	assert "stripe" not in om.secrets.values()
	redact = om.create_agent(name="A", model=ScriptedModel([]))._redactor
	assert redact("stripe key mapped-secret-value-0010") == "stripe key [redacted]"


def test_a_secret_given_as_bytes_or_a_secret_str_is_not_dropped() -> None:
	from pydantic import SecretStr

	om = OpenMolt(entry_points=False)
	om.secrets.add(SecretStr("secret-str-value-0008"), b"bytes-secret-0009", None, "")
	assert {"secret-str-value-0008", "bytes-secret-0009"} <= om.secrets.values()
