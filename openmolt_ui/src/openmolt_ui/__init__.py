"""OpenMolt's live run viewer: ``openmolt ui``, a local page showing runs as they happen.

```python
from openmolt_ui import Viewer

om = OpenMolt(run_store="runs.db")
async with Viewer(om) as viewer:
    print(viewer.url)          # http://127.0.0.1:PORT/?token=...
    agent = om.create_agent(..., on_human_input_request=viewer.ask)
    await agent.run("...")
```

See docs/guides/ui.md. The core finds this package through the ``openmolt.extensions`` entry point
``ui`` (for ``openmolt ui`` and ``openmolt AGENT_FILE --ui``) and never imports Starlette.
"""

from __future__ import annotations

from openmolt_ui._live import ApprovalDecision, LiveRuns, PendingApproval
from openmolt_ui.cli import main, with_viewer
from openmolt_ui.viewer import Viewer

__all__ = ["ApprovalDecision", "LiveRuns", "PendingApproval", "Viewer", "main", "with_viewer"]
