"""OpenMolt's triggers: runs started by webhooks and chat messages, and ``openmolt serve``.

```python
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer

triggers = Triggers.model_validate({"webhook": {"scheme": "github", "secretEnv": "GH_SECRET"}})
async with TriggerServer([(agent, triggers)]) as server:
    ...                       # POST {server.url}/hooks/<agent name> starts a run
```

See docs/guides/triggers.md. The core finds this package through the ``openmolt.extensions``
entry point ``serve`` (for ``openmolt serve``) and never imports Starlette.
"""

from __future__ import annotations

from openmolt_serve.chats import Conversations, Incoming
from openmolt_serve.cli import main
from openmolt_serve.server import DEFAULT_PORT, TriggerServer
from openmolt_serve.slack import SlackApp
from openmolt_serve.telegram import TelegramBot
from openmolt_serve.webhooks import Webhook

__all__ = [
	"DEFAULT_PORT",
	"Conversations",
	"Incoming",
	"SlackApp",
	"TelegramBot",
	"TriggerServer",
	"Webhook",
	"main",
]
