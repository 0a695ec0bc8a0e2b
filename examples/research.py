"""A Python agent file: `openmolt examples/research.py --input "espresso"`.

The command imports this file and reads `agent`: an Agent, or (as here) a function that takes the
OpenMolt instance the command built with the API keys it found. `input` and `schedules` are optional.
"""

from pydantic import BaseModel, Field

from openmolt import OpenMolt
from openmolt_core.cli import ask_on_terminal


class Summary(BaseModel):
	topic: str
	facts: list[str] = Field(description="Three short facts.")


input = "the history of the bicycle"


def agent(om: OpenMolt):
	return om.create_agent(
		name="Researcher",
		model="openai:gpt-5-mini",
		instructions="Give three short, well-known facts about the topic in the input.",
		output_schema=Summary,
		on_human_input_request=ask_on_terminal,
		max_steps=4,
	)
