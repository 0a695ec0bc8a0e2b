"""Skills: listed by name and description, loaded on demand, granting nothing."""

import json
from pathlib import Path
from typing import Any

import pytest

from openmolt import ConfigurationError, OpenMolt
from openmolt_core.skills import MAX_SKILL_CHARS, Skill, parse_skill
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio

INVOICES = """---
name: invoices
description: How we check and pay supplier invoices.
allowed-tools: [local.pay, stripe.createRefund]
---
# Paying invoices

1. Check the VAT rate in vat-rates.csv.
2. Pay with local.pay.
"""


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
	root = tmp_path / "skills"
	(root / "invoices").mkdir(parents=True)
	(root / "invoices" / "SKILL.md").write_text(INVOICES)
	(root / "invoices" / "vat-rates.csv").write_text("country,rate\nNO,25\n")
	(root / "huge").mkdir()
	(root / "huge" / "SKILL.md").write_text(
		"---\nname: huge\ndescription: Too much to read.\n---\n" + "x" * (MAX_SKILL_CHARS + 10)
	)
	(tmp_path / "secret.txt").write_text("outside")
	(root / "invoices" / "escape").symlink_to(tmp_path / "secret.txt")
	return root


def pay(amount: int) -> str:
	"""Pay an amount."""
	return "paid"


def results(model: ScriptedModel, call: int) -> list[dict[str, Any]]:
	return json.loads(model.requests[call].messages[-1].content)["results"]


def test_skill_md_front_matter_is_read() -> None:
	"""name, description, allowed-tools and the body come from SKILL.md."""
	skill = parse_skill(INVOICES)
	assert skill.name == "invoices" and skill.description.startswith("How we check")
	assert skill.allowed_tools == ("local.pay", "stripe.createRefund")
	assert skill.instructions.startswith("# Paying invoices")


@pytest.mark.parametrize(
	("text", "message"),
	[
		("no front matter", "must start with front matter"),
		("---\nname: Bad Name\ndescription: x\n---\n", "lowercase letters"),
		("---\nname: ok\n---\nbody", "description must say"),
		("---\nname ok\ndescription: d\n---\n", "is not 'key: value'"),
	],
)
def test_malformed_skills_are_refused_with_the_fix(text: str, message: str) -> None:
	"""A bad SKILL.md is a ConfigurationError naming the problem."""
	with pytest.raises(ConfigurationError, match=message):
		parse_skill(text)


async def test_the_prompt_lists_skills_and_the_model_loads_one(skills_dir: Path) -> None:
	"""The first turn lists names and descriptions only; skills.load returns the body and files."""
	model = ScriptedModel(
		[
			call_tool("skills.load", name="invoices"),
			call_tool("skills.load", name="invoices", file="vat-rates.csv"),
			finish("ok"),
		]
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Clerk", model=model, tools=[pay], skills=[skills_dir])
	await agent.run("pay the invoice")
	first = json.loads(model.requests[0].messages[0].content)
	assert first["skills"] == [
		{"name": "huge", "description": "Too much to read."},
		{"name": "invoices", "description": "How we check and pay supplier invoices."},
	]
	assert "Paying invoices" not in model.requests[0].messages[0].content
	[loaded] = results(model, 1)
	assert loaded["result"]["instructions"].startswith("# Paying invoices")
	assert loaded["result"]["files"] == ["vat-rates.csv"]
	assert "stripe.createRefund" in loaded["result"]["unavailable"]
	assert "local.pay" not in loaded["result"]["unavailable"]
	[file] = results(model, 2)
	assert file["result"]["content"] == "country,rate\nNO,25\n"
	# the prefix stayed byte-identical: the load arrived as a result
	assert model.requests[2].messages[0].content == model.requests[0].messages[0].content


async def test_unknown_missing_escaping_and_huge_skills_are_errors_the_model_reads(
	skills_dir: Path,
) -> None:
	"""An unknown skill, a missing file, a file outside the skill and a huge skill are refused."""
	model = ScriptedModel(
		[
			call_tool("skills.load", name="invoice"),
			call_tool("skills.load", name="invoices", file="rates.csv"),
			call_tool("skills.load", name="invoices", file="../../secret.txt"),
			call_tool("skills.load", name="invoices", file="escape"),
			call_tool("skills.load", name="huge"),
			finish("ok"),
		]
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Clerk", model=model, skills=[skills_dir])
	await agent.run()
	unknown = results(model, 1)[0]["error"]
	assert "invalid input" in unknown and "'invoices'" in unknown
	assert "has no file 'rates.csv'" in results(model, 2)[0]["error"]
	assert "vat-rates.csv" in results(model, 2)[0]["error"]
	assert "give a path inside the skill" in results(model, 3)[0]["error"]
	assert "has no file 'escape'" in results(model, 4)[0]["error"]
	assert "too large to load" in results(model, 5)[0]["error"]
	assert "outside" not in json.dumps([r.messages[-1].content for r in model.requests])


def test_skills_from_code_and_duplicates() -> None:
	"""Skill objects and dicts work; two skills of one name are refused."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="A",
		model=ScriptedModel([]),
		skills=[Skill(name="tone", description="Write in our tone.", instructions="Be brief.")],
	)
	assert "skills.load" in agent.tools
	with pytest.raises(ConfigurationError, match="two skills are named 'tone'"):
		om.create_agent(
			name="B",
			model=ScriptedModel([]),
			skills=[{"name": "tone", "description": "a"}, {"name": "tone", "description": "b"}],
		)
	with pytest.raises(ConfigurationError, match="neither a skill folder"):
		om.create_agent(name="C", model=ScriptedModel([]), skills=["/no/such/folder"])
