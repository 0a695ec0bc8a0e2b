"""An agent served over AG-UI by `openmolt serve` in the durable tests: the fake server's model.

The user's message is the run's input, so its text names the fake server's scenario. Its
questions park (`park_questions`): the thread's next request answers them.
"""

from __future__ import annotations

from crash_agents import ServerModel

from openmolt import OpenMolt
from openmolt_serve.chats import park_questions

TOKEN = "durable-agui-token-0123456789"

om = OpenMolt()
agent = om.create_agent(name="Helper", model=ServerModel(), instructions="Help.")
park_questions(agent)
triggers = {"agui": {"token": TOKEN}}
