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
	# Besides the integrations, extras name features with their own distribution (mcp, ui, otel).
	extras = set(_toml("pyproject.toml")["project"]["optional-dependencies"]) - {
		"all",
		"mcp",
		"ui",
		"otel",
	}
	assert {extra_for(i) for i in ids} == extras
	assert len(ids) == 29


def test_all_installs_what_every_extra_installs() -> None:
	"""openmolt[all] pulls the union of the per-integration extras."""
	deps = _toml("pyproject.toml")["project"]["optional-dependencies"]
	union = {d for name, reqs in deps.items() if name != "all" for d in reqs}
	assert set(deps["all"]) == union


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
