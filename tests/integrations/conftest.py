"""The integration tests' shared helpers (``_discovery.py``, ``_edit.py``) live in this folder.

Test modules are not packages, so the folder is put on ``sys.path`` for the tests below it.
"""

import sys
from pathlib import Path

_HELPERS = str(Path(__file__).resolve().parent)
if _HELPERS not in sys.path:
	sys.path.insert(0, _HELPERS)
