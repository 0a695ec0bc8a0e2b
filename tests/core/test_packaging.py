import tomllib
from pathlib import Path

from openmolt_core.plugins import extra_for

ROOT = Path(__file__).resolve().parents[2]


def _toml(path: str) -> dict:
	return tomllib.loads((ROOT / path).read_text())


def test_every_built_in_integration_has_its_extra_and_nothing_else_does() -> None:
	"""Each integration entry point has an openmolt[...] extra of the same name, and vice versa."""
	ids = _toml("openmolt_integrations/pyproject.toml")["project"]["entry-points"][
		"openmolt.integrations"
	]
	# Besides the integrations, extras name features with their own distribution (mcp, ui, otel,
	# dbos, serve, and serve's protocols a2a and agui; evals; the PII guardrail's phone numbers).
	extras = set(_toml("pyproject.toml")["project"]["optional-dependencies"]) - {
		"all",
		"mcp",
		"ui",
		"otel",
		"dbos",
		"serve",
		"a2a",
		"agui",
		"evals",
		"pii",
	}
	assert {extra_for(i) for i in ids} == extras
	assert len(ids) == 29


def _merged(requirements: list[str]) -> dict[str, tuple[frozenset[str], str]]:
	"""Requirements by distribution: the union of their extras, and the version spec."""
	import re

	out: dict[str, tuple[frozenset[str], str]] = {}
	for req in requirements:
		match = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[([^\]]*)\])?(.*)", req)
		assert match, req
		name, extras, spec = match.group(1), match.group(2) or "", match.group(3)
		had = out.get(name, (frozenset(), spec))[0]
		out[name] = (had | {e.strip() for e in extras.split(",") if e.strip()}, spec)
	return out


def test_all_installs_what_every_extra_installs() -> None:
	"""openmolt[all] pulls the union of the other extras (a distribution's extras merged)."""
	deps = _toml("pyproject.toml")["project"]["optional-dependencies"]
	union = [d for name, reqs in deps.items() if name != "all" for d in reqs]
	assert _merged(deps["all"]) == _merged(union)


def test_the_core_depends_only_on_the_design_card() -> None:
	"""openmolt-core's required dependencies are exactly the design card's packages."""
	names = {
		d.split(">")[0].split("=")[0].split("<")[0].strip()
		for d in _toml("openmolt_core/pyproject.toml")["project"]["dependencies"]
	}
	assert names == {
		"anyio",
		"httpx",
		"pydantic",
		"python-liquid",
		"pluggy",
		"croniter",
		"tenacity",
	}


def test_the_mcp_extra_installs_the_mcp_distribution_and_the_core_does_not() -> None:
	"""openmolt[mcp] (and all) pull openmolt-mcp; only openmolt-mcp depends on the MCP SDK."""
	extras = _toml("pyproject.toml")["project"]["optional-dependencies"]
	assert extras["mcp"] == ["openmolt-mcp==0.1.0"]
	assert "openmolt-mcp==0.1.0" in extras["all"]
	mcp = _toml("openmolt_mcp/pyproject.toml")["project"]
	assert any(d.startswith("mcp>=") for d in mcp["dependencies"])
	assert mcp["entry-points"]["openmolt.extensions"] == {"mcp": "openmolt_mcp"}


def test_the_dbos_extra_installs_openmolt_dbos_and_only_it_depends_on_dbos() -> None:
	"""openmolt[dbos] (and all) pull openmolt-dbos; only openmolt-dbos depends on dbos>=3.4,<4."""
	extras = _toml("pyproject.toml")["project"]["optional-dependencies"]
	assert extras["dbos"] == ["openmolt-dbos==0.1.0"]
	assert "openmolt-dbos==0.1.0" in extras["all"]
	dbos = _toml("openmolt_dbos/pyproject.toml")["project"]
	assert "dbos>=3.4,<4" in dbos["dependencies"]
	assert dbos["entry-points"]["openmolt.extensions"] == {"dbos": "openmolt_dbos"}
	for member in ("openmolt_core", "openmolt_providers", "openmolt_integrations", "openmolt_mcp"):
		deps = _toml(f"{member}/pyproject.toml")["project"]["dependencies"]
		assert not any(d.startswith("dbos") for d in deps)
