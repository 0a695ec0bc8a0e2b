"""A plugin whose skill is malformed (no description)."""

from __future__ import annotations

from openmolt_core import hookimpl
from openmolt_core.plugins import SkillRegistrar


@hookimpl
def register_skills(register: SkillRegistrar) -> None:
	register({"name": "broken-skill", "description": ""})
