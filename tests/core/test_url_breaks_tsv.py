r"""A tab after a URL's secret ends the URL as a line break does: a TSV row keeps its columns.

``id\thttps://h/x?api_key=SECRET\tColumn2\tColumn3`` (a tool's TSV, a spreadsheet export) was
read as the secret ``SECRET\tColumn2\tColumn3``: the row's next columns were masked with it (and
their joined spelling was a secret of the run). A tab joined a secret as a WHATWG parser reads a
URL; a line break did only where the URL goes on after it (``PASS\nWORD@host``). Both now join
where the URL goes on, or where what follows the break reads as a token's rest (a link
hard-wrapped in an email: ``?token=abcdef1234\n5678xyz9``, whose second half a line break's
rule showed).
"""

from __future__ import annotations

import json

import pytest

from openmolt_core._support.masking import mask_url_logins, mask_urls, urls_secrets

KEY = "abc123def456"


@pytest.mark.parametrize(
	"row",
	[
		"id\thttps://h.example/x?api_key={k}\tColumn2\tColumn3",
		"id\thttps://h.example/x?api_key={k}\tnote\n2\tnext row",
		"https://h.example/x?sig={k}\tThen reply",
		"https://h.example/x?token={k}&#9;Column2",
		"https://h.example/x?token={k}&Tab;Column2",
	],
)
def test_a_tab_ends_the_url_and_its_secret(row: str) -> None:
	text = row.format(k=KEY)
	masked = mask_urls(text)
	assert KEY not in masked, masked
	for word in ("Column2", "Column3", "note", "Then reply", "next row"):
		if word in text:
			assert word in masked, masked
	assert all("Column2" not in s and "note" not in s for s in urls_secrets(text)), urls_secrets(
		text
	)


def test_json_escaped_tsv_keeps_its_columns() -> None:
	text = json.dumps({"rows": f"https://h.example/x?api_key={KEY}\tColumn2\tColumn3"})
	masked = mask_urls(text)
	assert KEY not in masked and "Column2\\tColumn3" in masked, masked


@pytest.mark.parametrize("brk", ["\t", "\n", "\\n", "\\t", "&#10;"])
def test_a_token_cut_by_a_break_is_masked_whole(brk: str) -> None:
	text = f"see https://h.example/x?token=abcdef1234{brk}5678xyz9 ok"
	masked = mask_urls(text)
	assert "abcdef1234" not in masked and "5678xyz9" not in masked, masked
	assert masked.endswith(" ok")


def test_a_login_across_a_tab_is_still_masked() -> None:
	text = "https://u:PASS\tWORD1@host.example/x\tColumn2"
	masked = mask_url_logins(text)
	assert "PASS" not in masked and "WORD1" not in masked and "Column2" in masked, masked
