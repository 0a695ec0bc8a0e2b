"""`_support.masking.mask_fields`: every field of a dataclass masked in place, fail closed.

The loop masks a third-party capability's events with it (`openmolt_core._execute._mask_event`);
tests/core/test_capability_seams.py tests that through the loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openmolt_core._support.masking import MASK, mask, mask_deep, mask_fields

SECRET = "sk-live-0123456789abcdef"
SECRETS = frozenset({SECRET})


def _text(text: str) -> str:
	return mask(text, SECRETS)


def _deep(value: Any) -> Any:
	return mask_deep(value, SECRETS)


class Opaque:
	"""An object the deep masking keeps as it is, whose text shows the secret."""

	__slots__ = ()

	def __repr__(self) -> str:
		return f"Opaque({SECRET})"


@dataclass(frozen=True)
class Carrier:
	kept: str
	text: str
	items: tuple[str, ...]
	nested: dict[str, Any] = field(default_factory=dict)
	count: int = 0
	other: Any = None


def test_every_field_but_the_skipped_ones_is_masked_in_place_a_frozen_one_too() -> None:
	carrier = Carrier(
		kept=SECRET,
		text=f"key {SECRET}",
		items=("a", SECRET),
		nested={"token": [SECRET]},
		count=3,
		other={Opaque()},  # a set: deep keeps it; its text shows the secret
	)
	mask_fields(carrier, _text, _deep, skip={"kept"})
	assert carrier.kept == SECRET
	assert carrier.text == f"key {MASK}"
	assert carrier.items == ("a", MASK) and type(carrier.items) is tuple
	assert carrier.nested == {"token": [MASK]}
	assert carrier.count == 3
	assert SECRET not in repr(carrier.other)  # fail closed: its JSON data, masked


def test_attributes_set_beside_the_fields_are_masked_and_clean_values_kept_as_they_are() -> None:
	carrier = Carrier(kept="k", text="clean", items=())
	object.__setattr__(carrier, "extra", f"x{SECRET}")
	nested = carrier.nested
	mask_fields(carrier, _text, _deep)
	assert carrier.extra == f"x{MASK}"  # type: ignore[attr-defined]
	assert carrier.text == "clean"
	assert carrier.nested == nested
