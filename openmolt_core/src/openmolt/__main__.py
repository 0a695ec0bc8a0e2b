"""``python -m openmolt``: the same as the ``openmolt`` command."""

from __future__ import annotations

from openmolt_core._main import main

raise SystemExit(main())
