import sys
from pathlib import Path

# The helpers (tests/ecosystem/_ecosystem.py) are imported by the test modules, which are not a
# package (a package here named like the `mcp` SDK would shadow it); make this folder importable.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
	sys.path.insert(0, _HERE)
