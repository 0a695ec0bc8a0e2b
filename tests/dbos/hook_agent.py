"""An agent served by `openmolt serve` in the durable tests: a GitHub webhook, the fake server's model.

The payload is the run's input, so a JSON string body names the fake server's scenario.
"""

from __future__ import annotations

from crash_agents import ServerModel

from openmolt import OpenMolt

SECRET = "durable-hook-secret"

om = OpenMolt()
agent = om.create_agent(name="Hook", model=ServerModel(), instructions="Handle the delivery.")
triggers = {"webhook": {"scheme": "github", "secret": SECRET}}
