"""PII redaction at its edges: unicode addresses, cards after other numbers, long inputs."""

from collections.abc import Callable

import pytest

from openmolt_core.guardrails import find_pii, redact_pii
from tests._scaling import assert_scales_linearly


@pytest.mark.parametrize(
	("text", "expected"),
	[
		("mail jöhn@example.com now", "mail [email] now"),
		("mail josé.garcía+news@correo.example.es now", "mail [email] now"),
		("mail ada@exämple.de now", "mail [email] now"),
		("mail ada.l+tag@mail.sub.example.co.uk now", "mail [email] now"),
	],
)
def test_an_address_with_non_ascii_letters_is_redacted_whole(text: str, expected: str) -> None:
	"""An address with letters beyond ASCII is redacted whole, not left half visible."""
	assert redact_pii(text, ["email"])[0] == expected


@pytest.mark.parametrize(
	("text", "expected"),
	[
		("qty 3 4111111111111111", "qty 3 [card]"),
		("ref 12 4111 1111 1111 1111", "ref 12 [card]"),
		("ids 1234 4111-1111-1111-1111", "ids 1234 [card]"),
		("cards 4111 1111 1111 1111 5555 5555 5555 4444", "cards [card] [card]"),
		("4111111111111111 7", "[card] 7"),
	],
)
def test_a_card_written_next_to_another_number_is_still_found(text: str, expected: str) -> None:
	"""A card number after or before another number (spaced apart) is redacted, not skipped."""
	redacted, _ = redact_pii(text, ["card"])
	assert redacted == expected
	assert redact_pii(redacted, ["card"])[0] == redacted


@pytest.mark.parametrize(
	"build",
	[
		lambda n: "a" * n,
		lambda n: "a." * (n // 2),
		lambda n: "x@" + "a" * n,
		lambda n: "4" * n,
		lambda n: "1 " * (n // 2),
		lambda n: "3 " * (n // 2),
		lambda n: "4111 " * (n // 5),
	],
	ids=["letters", "dotted", "domain", "digits", "spaced", "spaced-network", "groups"],
)
def test_a_megabyte_of_text_is_scanned_in_linear_time(build: Callable[[int], str]) -> None:
	"""Emails and cards over 1 MB of adversarial text: the cost grows linearly (no quadratic scan)."""
	found = assert_scales_linearly(build, lambda text: find_pii(text, ["email", "card"]), 1_000_000)
	assert found == []


def test_many_phone_numbers_are_all_found_quickly() -> None:
	"""Tens of thousands of phone numbers are all redacted, in time linear in their number."""
	pytest.importorskip("phonenumbers")
	found = assert_scales_linearly(
		lambda n: "call 415 555 2671 " * n, lambda text: find_pii(text, ["phone"]), 20_000
	)
	assert len(found) == 20_000


def test_a_phone_number_after_many_other_numbers_is_still_found() -> None:
	"""A phone number after more digit runs than phonenumbers tries by default is still redacted."""
	pytest.importorskip("phonenumbers")
	text = "ref 12 " * 70_000 + "call 415 555 2671"
	assert redact_pii(text, ["phone"])[0].endswith("call [phone]")
