"""The ``openmolt`` command (grown by the CLI issue): run an agent file once."""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
	"""Run the ``openmolt`` command.

	Args:
		argv: The arguments (default: ``sys.argv[1:]``).

	Returns:
		The exit code.
	"""
	args = list(sys.argv[1:] if argv is None else argv)
	print("usage: openmolt AGENT_FILE", file=sys.stderr)
	return 2 if not args else 1
