"""Regular expressions for rare paths are compiled on first use, not on import."""

import json
import re
import subprocess
import sys
import textwrap

from openmolt_core._support import LazyPattern


def test_a_lazy_pattern_compiles_once_on_its_first_call_with_its_flags() -> None:
	"""The first call compiles it (flags kept); later calls return the same pattern."""
	word = LazyPattern(r"^stream", re.IGNORECASE)
	assert word._compiled is None
	compiled = word()
	assert compiled.match("STREAM closed")
	assert word() is compiled
	assert compiled.flags & re.IGNORECASE


IMPORTED = textwrap.dedent(
	"""
	import importlib, json, sys
	from openmolt_core._support import LazyPattern
	names = [
		"openmolt_core._parse", "openmolt_core._support.jsonschema",
		"openmolt_core._support.masking", "openmolt_core.functiontools", "openmolt_core.tools",
		"openmolt_providers._body", "openmolt_providers._common",
	]
	compiled = []
	for name in names:
		module = importlib.import_module(name)
		for key, value in vars(module).items():
			if isinstance(value, LazyPattern) and value._compiled is not None:
				compiled.append(f"{name}.{key}")
	print(json.dumps(compiled))
	"""
)


def test_importing_the_modules_compiles_none_of_their_lazy_patterns() -> None:
	"""Importing a module leaves its lazy patterns uncompiled (a fresh interpreter)."""
	out = subprocess.run(
		[sys.executable, "-c", IMPORTED], capture_output=True, text=True, check=True, timeout=120
	)
	assert json.loads(out.stdout.strip().splitlines()[-1]) == []
