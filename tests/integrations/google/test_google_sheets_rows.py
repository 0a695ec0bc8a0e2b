"""The row logic of Google Sheets' composed tools, through a fake ``send`` (no HTTP)."""

from __future__ import annotations

import pytest

from openmolt_core.errors import ToolError
from openmolt_integrations import google_sheets
from openmolt_integrations._sheets_rows import a1_sheet, column_letter, lookup_rows, upsert_row

pytestmark = pytest.mark.anyio


def test_column_letters_and_sheet_quoting() -> None:
	"""0-based indexes become A1 letters past Z; any sheet title is quoted, quotes doubled."""
	assert [column_letter(i) for i in (0, 25, 26, 51, 52, 701, 702)] == [
		"A",
		"Z",
		"AA",
		"AZ",
		"BA",
		"ZZ",
		"AAA",
	]
	assert a1_sheet("Sheet1") == "'Sheet1'"
	assert a1_sheet("Bob's list!") == "'Bob''s list!'"


async def test_lookup_compares_numbers_and_booleans_as_displayed(fake_send) -> None:
	"""42.0 matches "42", True matches "TRUE"; maxRows caps the rows read, not matchCount."""
	sent, send = fake_send(
		{
			"getValues": [
				{"values": [["Id", "Paid"]]},
				{"values": [["42", "7", "42", "42"]]},
				{"values": [["Id", "Paid"]]},
				{"values": [["TRUE", "FALSE"]]},
			],
			"batchGetValues": [
				{"valueRanges": [{"values": [["42", "TRUE"]]}]},
				{"valueRanges": []},
			],
		}
	)
	out = await lookup_rows(
		{
			"spreadsheetId": "s",
			"sheetName": "T",
			"lookupColumn": "Id",
			"lookupValue": 42.0,
			"maxRows": 1,
		},
		send,
	)
	assert out["matchCount"] == 3
	assert out["rows"] == [{"rowNumber": 2, "values": {"Id": "42", "Paid": "TRUE"}}]
	assert sent[2] == ("batchGetValues", {"spreadsheetId": "s", "ranges": ["'T'!A2:B2"]})
	out = await lookup_rows(
		{"spreadsheetId": "s", "sheetName": "T", "lookupColumn": "Paid", "lookupValue": True},
		send,
	)
	assert sent[4][1]["range"] == "'T'!B2:B"
	assert out["matchCount"] == 1


async def test_upsert_past_column_z_writes_the_whole_header_width(fake_send) -> None:
	"""A 28-column header updates A..AB of the matched row; trailing columns not given are left out."""
	header = [f"C{i}" for i in range(28)]
	sent, send = fake_send(
		{
			"getValues": [{"values": [header]}, {"values": [["", "k"]]}],
			"updateValues": [{"updatedRange": "'T'!A3:B3"}],
		}
	)
	out = await upsert_row(
		{"spreadsheetId": "s", "sheetName": "T", "keyColumn": "C1", "row": {"C1": "k", "C0": ""}},
		send,
	)
	assert sent[1][1]["range"] == "'T'!B2:B"
	assert sent[2] == (
		"updateValues",
		{
			"spreadsheetId": "s",
			"range": "'T'!A3:AB3",
			"values": [["", "k"]],
			"valueInputOption": "USER_ENTERED",
		},
	)
	assert out["action"] == "updated" and out["rowNumber"] == 3


async def test_an_ambiguous_case_insensitive_column_is_refused(fake_send) -> None:
	"""Two headers differing only in case need the exact spelling; the error lists them."""
	_, send = fake_send({"getValues": [{"values": [["Name", "NAME"]]}]})
	with pytest.raises(ToolError, match=r"lookupColumn: no column 'name'.*'Name', 'NAME'"):
		await lookup_rows(
			{"spreadsheetId": "s", "sheetName": "T", "lookupColumn": "name", "lookupValue": "x"},
			send,
		)


def test_composed_tools_send_only_declarative_tools_of_the_integration() -> None:
	"""Each request of lookupRows and appendOrUpdateRow is one of the integration's HTTP tools."""
	handles = {t.handle for t in google_sheets.TOOLS}
	for composed, requests in google_sheets.ROW_REQUESTS.items():
		assert composed in {t.handle for t in google_sheets.INTEGRATION.tools}
		assert set(requests) <= handles


@pytest.mark.parametrize("value", ["", "  ", None])
async def test_an_empty_lookup_value_is_refused_before_reading(value, fake_send) -> None:
	"""An empty value would match every blank cell; it is refused, naming the field."""
	sent, send = fake_send({})
	with pytest.raises(ToolError, match="lookupValue: give the value to find"):
		await lookup_rows(
			{"spreadsheetId": "s", "sheetName": "T", "lookupColumn": "Id", "lookupValue": value},
			send,
		)
	assert sent == []


async def test_an_appended_row_number_is_read_after_the_sheet_name(fake_send) -> None:
	"""The row number comes from the range after the quoted sheet title, even if the title holds
	'!' and a cell reference of its own ('Q1!B2 leads'!A9:C9 is row 9, not 2)."""
	sent, send = fake_send(
		{
			"getValues": [{"values": [["Email", "Name"]]}, {"values": [["b@example.com"]]}],
			"appendValues": [{"updates": {"updatedRange": "'Q1!B2 leads'!A9:B9"}}],
		}
	)
	out = await upsert_row(
		{
			"spreadsheetId": "s",
			"sheetName": "Q1!B2 leads",
			"keyColumn": "Email",
			"row": {"Email": "a@example.com", "Name": "Ana"},
		},
		send,
	)
	assert sent[2] == (
		"appendValues",
		{
			"spreadsheetId": "s",
			"range": "'Q1!B2 leads'!A1:B1",
			"values": [["a@example.com", "Ana"]],
			"insertDataOption": "INSERT_ROWS",
			"valueInputOption": "USER_ENTERED",
		},
	)
	assert out == {
		"action": "appended",
		"rowNumber": 9,
		"updatedRange": "'Q1!B2 leads'!A9:B9",
		"matchedRows": [],
	}
