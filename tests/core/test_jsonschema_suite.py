"""The validator against the official JSON-Schema-Test-Suite, for every keyword it enforces.

The suite ships inside the ``jsonschema`` sdist on PyPI (its ``json/`` folder), cached in
``.cache/refs/``: ``uv run nox -s tests`` downloads it (noxfile.py ``PYPI_REFS``); by hand,
``uvx pip download jsonschema==4.26.0 --no-binary :all: --no-deps -d .cache/refs`` from the
repository root.

Cases that need what the validator does not claim (`NOT_ENFORCED`: ``$id``/``$anchor`` and remote
references, ``$dynamicRef``, ``unevaluated*``) are left out by `_outside`, and the test checks
that it left out few.
"""

from __future__ import annotations

import json
import os
import tarfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from openmolt_core._support.jsonschema import JsonSchemaValidator, ValidationError

ROOT = Path(__file__).resolve().parents[2]
REFS = Path(os.environ.get("OPENMOLT_REFS_DIR", ROOT / ".cache" / "refs"))
SDIST = "jsonschema-4.26.0.tar.gz"
DRAFT = "jsonschema-4.26.0/json/tests/draft2020-12/"

KEYWORDS = [
	"additionalProperties",
	"allOf",
	"anyOf",
	"boolean_schema",
	"const",
	"contains",
	"default",
	"dependentRequired",
	"dependentSchemas",
	"enum",
	"exclusiveMaximum",
	"exclusiveMinimum",
	"if-then-else",
	"items",
	"maxContains",
	"maxItems",
	"maxLength",
	"maxProperties",
	"maximum",
	"minContains",
	"minItems",
	"minLength",
	"minProperties",
	"minimum",
	"multipleOf",
	"not",
	"oneOf",
	"pattern",
	"patternProperties",
	"prefixItems",
	"properties",
	"propertyNames",
	"ref",
	"required",
	"type",
	"uniqueItems",
	"optional/format/date",
	"optional/format/uuid",
	"optional/format/regex",
]
_OUTSIDE = ("$id", "$anchor", "$dynamicRef", "$dynamicAnchor", "unevaluated", "$vocabulary")


@cache
def _suite() -> dict[str, Any]:
	path = REFS / SDIST
	if not path.is_file():
		pytest.fail(
			f"the JSON-Schema-Test-Suite (in {SDIST}) is not cached at {path}; run `uvx pip "
			"download jsonschema==4.26.0 --no-binary :all: --no-deps -d .cache/refs` from the "
			"repository root (or `uv run nox -s tests`, which does it)",
			pytrace=False,
		)
	out: dict[str, Any] = {}
	with tarfile.open(path) as tar:
		for name in KEYWORDS:
			member = tar.extractfile(f"{DRAFT}{name}.json")
			assert member is not None
			out[name] = json.load(member)
	return out


def _outside(schema: Any) -> bool:
	text = json.dumps(schema)
	if any(word in text for word in _OUTSIDE):
		return True
	return any(
		not (ref.startswith("#/") or ref == "#") for ref in _refs(schema) if isinstance(ref, str)
	)


def _refs(schema: Any) -> list[Any]:
	found: list[Any] = []
	stack = [schema]
	while stack:
		item = stack.pop()
		if isinstance(item, dict):
			if "$ref" in item:
				found.append(item["$ref"])
			stack.extend(item.values())
		elif isinstance(item, list):
			stack.extend(item)
	return found


def _cases() -> list[Any]:
	params = []
	for keyword in KEYWORDS:
		for group in _suite()[keyword]:
			if _outside(group["schema"]):
				continue
			for case in group["tests"]:
				params.append(
					pytest.param(
						group["schema"],
						case["data"],
						case["valid"],
						id=f"{keyword}: {group['description']}: {case['description']}",
					)
				)
	return params


def test_the_suite_is_mostly_in_scope() -> None:
	"""Few groups are left out as outside the claimed keywords (so the run means something)."""
	groups = [g for keyword in KEYWORDS for g in _suite()[keyword]]
	left_out = [g["description"] for g in groups if _outside(g["schema"])]
	assert len(groups) > 200 and len(left_out) < len(groups) // 8, left_out


@pytest.mark.parametrize(("schema", "data", "valid"), _cases())
def test_suite_case(schema: Any, data: Any, valid: bool) -> None:
	"""Each case of the suite: valid data passes, invalid data is refused with an error."""
	validator = JsonSchemaValidator(schema)
	if valid:
		validator.validate(data)
	else:
		with pytest.raises(ValidationError):
			validator.validate(data)
