"""Skills as a capability: the ``skills.load`` tool and the first turn's list of skills.

``create_agent(skills=[...])`` builds it (`openmolt_core.skills` reads the skill folders). The
first turn lists each skill by name and description; the model loads one on demand with
``skills.load``, which stays callable when the agent searches its tools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from openmolt_core.hooks import AgentInfo, Capability

if TYPE_CHECKING:
	from openmolt_core.skills import Skill
	from openmolt_core.tools import Tool

__all__ = ["Skills"]


class Skills(Capability):
	"""An agent's skills, listed in the first turn and loaded with ``skills.load``.

	Args:
		skills: The skills, in the order the first turn lists them.
	"""

	__slots__ = ("skills",)

	name = "skills"
	in_fingerprint: ClassVar[bool] = False  # its tool and its schema are in the fingerprint

	def __init__(self, skills: Sequence[Skill]) -> None:
		self.skills: tuple[Skill, ...] = tuple(skills)

	def tools(self, agent: AgentInfo) -> Sequence[Tool]:
		"""The ``skills.load`` tool (it says which tools a skill needs that the agent lacks)."""
		from openmolt_core.skills import skill_tool

		return [skill_tool(self.skills, available=agent.tools)]

	def first_turn(self, agent: AgentInfo) -> Mapping[str, Any]:
		"""``"skills": [{"name", "description"}, ...]``."""
		from openmolt_core.skills import describe

		return {"skills": describe(self.skills)}
