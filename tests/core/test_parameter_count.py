"""How many parameters a callable takes, read once per method and again when its code changes."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from openmolt_core._support.sync import parameter_count


class Provider:
	def schema_dialect(self, model: str, config: Any = None) -> None:
		return None


def test_a_method_counts_without_self_and_a_builtin_counts_none() -> None:
	"""A bound method's ``self`` is not counted; a callable with no readable signature counts 0."""
	assert parameter_count(Provider().schema_dialect) == 2
	assert parameter_count(lambda model: None) == 1
	assert parameter_count(type("NoSig", (), {"__signature__": 1, "__call__": len})()) == 0


def test_a_methods_count_is_read_once_until_its_code_changes(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""The second ask of the same method reads no signature; new code is read again."""

	class Changing:
		def schema_dialect(self, model: str) -> None:
			return None

	reads: list[Any] = []
	real = inspect.signature

	def counting(obj: Any, *args: Any, **kwargs: Any) -> inspect.Signature:
		reads.append(obj)
		return real(obj, *args, **kwargs)

	monkeypatch.setattr(inspect, "signature", counting)
	provider = Changing()
	assert parameter_count(provider.schema_dialect) == 1
	assert parameter_count(provider.schema_dialect) == 1
	assert len(reads) == 1

	def two(self: Any, model: str, config: Any) -> None:
		return None

	Changing.schema_dialect.__code__ = two.__code__  # type: ignore[attr-defined]  # code swapped
	assert parameter_count(provider.schema_dialect) == 2
	assert len(reads) == 2
