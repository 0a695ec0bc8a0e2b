import sys
from pathlib import Path

# The conformance helpers live one level up (tests/integrations/_discovery.py), shared by all
# integration tests; test modules are not packages, so make that folder importable.
_HELPERS = str(Path(__file__).resolve().parents[1])
if _HELPERS not in sys.path:
	sys.path.insert(0, _HELPERS)
