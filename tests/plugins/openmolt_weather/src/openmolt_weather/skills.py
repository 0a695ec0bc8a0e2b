"""Skills shipped by a plugin: the ``weather-skills`` entry point registers a folder of two."""

from __future__ import annotations

from pathlib import Path

from openmolt_core import hookimpl
from openmolt_core.plugins import SkillRegistrar


@hookimpl
def register_skills(register: SkillRegistrar) -> None:
	register(Path(__file__).parent / "skill_files")
