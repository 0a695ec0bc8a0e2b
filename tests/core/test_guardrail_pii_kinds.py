"""PII kinds beyond email, phone and card: IBANs, US SSNs, and IP addresses (opt-in)."""

from collections.abc import Callable

import pytest

from openmolt_core.errors import ConfigurationError
from openmolt_core.guardrails import find_pii, pii_redaction, redact_pii
from openmolt_core.guardrails.pii import PII_KINDS
from tests._scaling import assert_scales_linearly


@pytest.mark.parametrize(
	"iban",
	[
		"DE89 3704 0044 0532 0130 00",
		"DE89370400440532013000",
		"GB29 NWBK 6016 1331 9268 19",
		"FR14 2004 1010 0505 0001 3M02 606",
		"NL91ABNA0417164300",
		"BE68 5390 0754 7034",
		"NO93 8601 1117 947",
		"MT84 MALT 0110 0001 2345 MTLC AST0 01S",
		"LC55 HEMM 0001 0001 0012 0012 0002 3015",
		"RU02 0445 2560 0407 0281 0412 3456 7890 1",
		"ch93 0076 2011 6238 5295 7",
	],
)
def test_an_iban_in_its_printed_or_electronic_form_is_redacted_whole(iban: str) -> None:
	"""A valid IBAN (country, length, mod-97 check) is one [iban], whatever its country."""
	redacted, counts = redact_pii(f"pay to {iban}, thanks", ["iban", "card", "phone"])
	assert redacted == "pay to [iban], thanks"
	assert counts == {"iban": 1}


def test_an_iban_whose_digits_hold_a_card_number_is_an_iban() -> None:
	"""Its groups hold the Visa test card: the whole IBAN is redacted, not a card inside it."""
	assert redact_pii("DE95 4111 1111 1111 1111 00")[0] == "[iban]"


@pytest.mark.parametrize(
	"text",
	[
		"DE89 3704 0044 0532 0130 01",  # the check fails
		"DE89370400440532013000123",  # too long for Germany
		"DE89 3704 0044 0532 0130",  # too short
		"XX89 3704 0044 0532 0130 00",  # no such country
		"DE01 3704 0044 0532 0130 00",  # check digits 01, never issued
		"NO15 tickets sold, AB12 CD34 EF56 GH78 IJ90",
		"see ISO 13616 and RFC 5322; flight LH2026 at gate B12",
		"the SKU is GB29NWBK60161331926819X",  # inside a longer word
		"DE89 37040044 0532 0130 00",  # groups of the printed form are four characters
	],
)
def test_text_that_only_looks_like_an_iban_is_left_alone(text: str) -> None:
	"""A wrong check, length or country, or words shaped alike, are no IBAN."""
	assert find_pii(text, ["iban"]) == []


@pytest.mark.parametrize(
	("text", "expected"),
	[
		("ssn 123-45-6789 on file", "ssn [ssn] on file"),
		("SSN: 536-22-1234.", "SSN: [ssn]."),
	],
)
def test_a_us_social_security_number_is_redacted(text: str, expected: str) -> None:
	"""The dashed ``AAA-GG-SSSS`` form of a number the SSA could issue."""
	assert redact_pii(text, ["ssn"]) == (expected, {"ssn": 1})


@pytest.mark.parametrize(
	"text",
	[
		"000-12-3456",  # area 000
		"666-12-3456",  # area 666
		"912-34-5678",  # area 900-999 (ITINs and never issued)
		"123-00-4567",  # group 00
		"123-45-0000",  # serial 0000
		"078-05-1120",  # the Woolworth wallet card's, voided
		"219-09-9999",  # an advertisement's, voided
		"123456789",  # no dashes: any nine digits
		"order 2026-12-01, call 415-555-2671, part 1234-56-7890",
		"range 123-45-6789-0",
	],
)
def test_what_is_no_issued_ssn_is_left_alone(text: str) -> None:
	"""The ranges never issued, other dashed numbers and undashed digits are no SSN."""
	assert find_pii(text, ["ssn"]) == []


@pytest.mark.parametrize(
	("text", "expected"),
	[
		("from 192.168.10.7 at noon", "from [ip] at noon"),
		("host 8.8.8.8.", "host [ip]."),
		("v6 2001:db8::8a2e:370:7334 and ::ffff:10.0.0.1", "v6 [ip] and [ip]"),
		("link fe80::1ff:fe23:4567:890a%eth0", "link [ip]%eth0"),
		("server 2001:db8::1.", "server [ip]."),
	],
)
def test_ip_addresses_are_redacted_when_asked_for(text: str, expected: str) -> None:
	"""IPv4 and IPv6 addresses, validated by the standard library, under kind ``ip``."""
	assert redact_pii(text, ["ip"])[0] == expected


@pytest.mark.parametrize(
	"text",
	[
		"1.2.3.256 and 01.2.3.4 and 1.2.3 and 1.2.3.4.5",
		"at 12:30:45, mac 00:1A:2B:3C:4D:5E, std::vector, Add::Bee, a::b",
		"v1.2.3.4",
	],
)
def test_what_is_no_ip_address_is_left_alone(text: str) -> None:
	"""Out-of-range octets, leading zeros, OIDs, times, MACs and C++ names are no address."""
	assert find_pii(text, ["ip"]) == []


def test_ip_addresses_are_not_found_unless_asked_for() -> None:
	"""A version number reads like an IPv4 address: ``ip`` is not a default kind."""
	assert "ip" not in PII_KINDS and {"iban", "ssn"} <= set(PII_KINDS)
	assert redact_pii("version 1.2.3.4")[0] == "version 1.2.3.4"
	pii_redaction(kinds=["ip"])
	with pytest.raises(ConfigurationError, match="ip"):
		pii_redaction(kinds=["ipv4"])


@pytest.mark.parametrize(
	"build",
	[
		lambda n: "DE89 " * (n // 5),
		lambda n: "DE" + "1" * n,
		lambda n: "AB12 " * (n // 5),
		lambda n: "DE89 3704 " * (n // 10),
		lambda n: "123-45-" * (n * 3 // 20),
		lambda n: "1.2.3." * (n // 5),
		lambda n: "1:" * (n // 2),
		lambda n: "a:" * (n // 2),
		lambda n: ":" * n,
		lambda n: "f" * n,
	],
	ids=[
		"ibans",
		"long",
		"starts",
		"groups",
		"ssn",
		"dotted",
		"colons",
		"hexcolons",
		"bare",
		"hex",
	],
)
def test_a_megabyte_of_text_is_scanned_for_the_new_kinds_in_linear_time(
	build: Callable[[int], str],
) -> None:
	"""IBANs, SSNs and IP addresses over 1 MB of adversarial text: the cost grows linearly."""
	assert_scales_linearly(build, lambda text: find_pii(text, ["iban", "ssn", "ip"]), 1_000_000)
