import sys
from pathlib import Path

# The social conformance tests share _social_refs.py (npm references) and _social_checks.py; test
# modules are not packages, so make this folder importable.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
	sys.path.insert(0, _HERE)
