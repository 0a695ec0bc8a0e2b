"""Write openmolt_core/command_schemas.json from the command models: ``uv run python tests/core/update_command_schemas.py``.

The reply schema describes every built-in command; asking pydantic for their JSON Schemas builds
each command model and costs a fresh process milliseconds per command, so `command_schema` reads
them from this file. The models stay the source: tests/core/test_command_schemas.py fails when
the file differs from what they give (after a change in ``commands.py`` or a pydantic update), and
this script writes it again.
"""

from __future__ import annotations

import json
import sys

from openmolt_core.commands import COMMANDS
from openmolt_core.envelope import GENERATED, derive_command_schema


def text() -> str:
	"""The file's content: each built-in command's schema by class name, in `COMMANDS` order."""
	schemas = {command.__name__: derive_command_schema(command) for command in COMMANDS}
	return json.dumps(schemas, indent="\t", ensure_ascii=False) + "\n"


def main() -> int:
	"""Write the file (``--check``: exit 1 when it is out of date instead)."""
	if "--check" in sys.argv[1:]:
		return 0 if GENERATED.read_text(encoding="utf-8") == text() else 1
	GENERATED.write_text(text(), encoding="utf-8")
	print(f"wrote {GENERATED}")
	return 0


if __name__ == "__main__":
	raise SystemExit(main())
