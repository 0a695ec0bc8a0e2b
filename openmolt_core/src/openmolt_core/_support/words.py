"""Words in messages: counts, and wrong values as an error may show them.

Counts read ``1 attempt``, ``2 attempts``, never ``1 attempts``; a wrong value is shown when it is
short, and a long text (a key in the wrong place) only by its length.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["SHOWN_TEXT", "json_kind", "money", "problems", "quantity", "secret_place", "shown"]


def quantity(n: int, noun: str, plural: str | None = None) -> str:
	"""``n`` and the noun, singular for one and plural otherwise (``1 step``, ``0 steps``).

	Args:
		n: The count.
		noun: The singular noun.
		plural: The plural when it is not the noun plus ``s`` (``1 entry``, ``2 entries``).
	"""
	return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def money(cost: float | None, unpriced: int = 0) -> str | None:
	"""A run's cost in words: ``$0.0123``, or ``$0.0123+ (2 calls unpriced)``.

	A cost of some calls only (others had no price: `openmolt_core.llm.Usage.cost_partial`) is a
	lower bound, never shown as the whole. None when no call had a price. The CLI's summary, its
	logs and ``openmolt serve``'s run lines all say a cost this way.

	Args:
		cost: The usage's ``cost_usd``.
		unpriced: Its ``unpriced_calls``.
	"""
	if cost is None:
		return None
	if unpriced:
		return f"${cost:.4f}+ ({quantity(unpriced, 'call')} unpriced)"
	return f"${cost:.4f}"


def json_kind(value: object) -> str:
	"""A value's JSON type in words, for an error that must not repeat the value (a secret).

	``null``, ``a boolean``, ``a number``, ``a string``, ``an array`` or ``an object`` (any
	other value: ``a <type name>``).

	Args:
		value: The value given.
	"""
	if value is None:
		return "null"
	if isinstance(value, bool):
		return "a boolean"
	if isinstance(value, int | float):
		return "a number"
	if isinstance(value, str):
		return "a string"
	if isinstance(value, list | tuple):
		return "an array"
	if isinstance(value, dict):
		return "an object"
	return f"a {type(value).__name__}"


SHOWN_TEXT = 20
"""The longest text an error repeats: a longer one (a key pasted in the wrong place) is named by
its length."""


def shown(value: object, at: Sequence[object] = ()) -> str:
	"""A wrong value for its error: its type, and the value itself when short and not a secret.

	Text longer than `SHOWN_TEXT` is never repeated (a key given where a list or settings go
	would be), only its length; any other value is repeated when its ``repr`` is short, masked
	with the secrets known now. A value given under a name that says secret (`secret_place`: a
	credential, a token, a header) is never repeated, whatever its length: a password given where
	the credential's dict goes, or in a list, is named by its type and size.

	Args:
		value: The value given.
		at: Where it was given: the keys on its way (``("credential", "config")``).
	"""
	if isinstance(value, str | bytes | list | tuple | dict) and (
		secret_place(at) or (isinstance(value, str | bytes) and len(value) > SHOWN_TEXT)
	):
		what = "characters" if isinstance(value, str | bytes) else "items"
		return f"{type(value).__name__} of {len(value)} {what}"
	if secret_place(at):
		return type(value).__name__
	from openmolt_core._support.masking import mask_known  # an error's words only

	text = mask_known(repr(value))
	return type(value).__name__ + (f" {text}" if len(text) <= 60 else "")


def secret_place(at: Sequence[object]) -> bool:
	"""Whether a value given at ``at`` (the keys on its way) is a secret by its place's name.

	A key named like a secret (``credential``, ``apiKey``, ``token``...: the one list,
	`openmolt_core._support.masking.secret_name`), or ``headers`` (every header's value may
	carry a token), anywhere on the way: what is inside a credential's ``config`` is a secret too.

	Args:
		at: The keys (a pydantic error's ``loc``, a path in an agent file).
	"""
	from openmolt_core._support.masking import secret_name

	for part in at:
		if isinstance(part, str):
			if part.lower() in ("header", "headers") or secret_name(part):
				return True
	return False


def problems(error: Any) -> str:
	"""A pydantic ``ValidationError``'s problems, each ``where: what``, without the values given.

	Its own text repeats each wrong value (``input_value=...``), which may be a secret of the
	definition it checked.

	Args:
		error: The ``pydantic.ValidationError``.
	"""
	found = error.errors(include_input=False, include_url=False, include_context=False)
	return "; ".join(
		f"{'.'.join(str(p) for p in e['loc']) or 'the value'}: {e['msg']}" for e in found
	)
