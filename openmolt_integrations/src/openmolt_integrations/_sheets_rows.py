"""Google Sheets rows by a key column: look rows up, append a row or update the one that matches.

These are composed operations: they read the header row and the key column with
``spreadsheets.values.get``, then read the matching rows with ``values.batchGet`` or write with
``values.update`` / ``values.append``. The module holds the logic only; every request goes through
``send``, a function the Google Sheets integration gives (it runs the integration's own
declarative tools, ``getValues``, ``batchGetValues``, ``updateValues`` and ``appendValues``, which
the test suite checks against the Sheets v4 discovery document). The model never computes an A1
range: the sheet name is quoted and the column letters are derived here.

Between the read and the write another client may change the sheet; like every Sheets client
without locking, the write then lands on the row found by the read.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from openmolt_core.errors import ToolError

__all__ = ["Send", "a1_sheet", "column_letter", "lookup_rows", "upsert_row"]

Send = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Runs one of the integration's tools by handle with an input, returning its decoded reply."""

Cell = str | int | float | bool | None


def column_letter(index: int) -> str:
	"""The A1 letters of a 0-based column index (0 → A, 25 → Z, 26 → AA).

	Args:
		index: The column's 0-based index.

	Returns:
		The column letters.
	"""
	letters = ""
	number = index + 1
	while number:
		number, rest = divmod(number - 1, 26)
		letters = chr(ord("A") + rest) + letters
	return letters


def a1_sheet(name: str) -> str:
	"""A sheet name as A1 notation writes it: quoted, with inner quotes doubled.

	Args:
		name: The sheet (tab) title.

	Returns:
		``'<name>'`` with each ``'`` doubled, valid for every title.
	"""
	return "'" + name.replace("'", "''") + "'"


def _text(value: Cell) -> str:
	"""A value as Sheets displays it by default: TRUE/FALSE, 42 for 42.0."""
	if isinstance(value, bool):
		return "TRUE" if value else "FALSE"
	if isinstance(value, float) and value.is_integer():
		return str(int(value))
	return "" if value is None else str(value).strip()


async def _header(send: Send, input: Mapping[str, Any]) -> tuple[str, int, list[str]]:
	sheet = a1_sheet(str(input["sheetName"]))
	row = int(input.get("headerRow") or 1)
	reply = await send(
		"getValues",
		{"spreadsheetId": input["spreadsheetId"], "range": f"{sheet}!{row}:{row}"},
	)
	values = (reply or {}).get("values") or [[]]
	header = [_text(cell) for cell in values[0]]
	if not any(header):
		raise ToolError(
			f"headerRow: row {row} of sheet {input['sheetName']!r} is empty; the column names "
			"must be in that row (write them with updateValues, or give the right headerRow)"
		)
	return sheet, row, header


def _column(header: list[str], name: str, field: str) -> int:
	wanted = name.strip()
	if wanted in header:
		return header.index(wanted)
	folded = [i for i, h in enumerate(header) if h.casefold() == wanted.casefold()]
	if len(folded) == 1:
		return folded[0]
	names = ", ".join(repr(h) for h in header if h)
	raise ToolError(f"{field}: no column {name!r} in the header row; the columns are {names}")


async def _matches(
	send: Send, input: Mapping[str, Any], sheet: str, row: int, index: int, value: Cell
) -> list[int]:
	"""Row numbers (1-based) below the header whose key cell shows ``value``."""
	letter = column_letter(index)
	reply = await send(
		"getValues",
		{
			"spreadsheetId": input["spreadsheetId"],
			"range": f"{sheet}!{letter}{row + 1}:{letter}",
			"majorDimension": "COLUMNS",
		},
	)
	cells = ((reply or {}).get("values") or [[]])[0]
	wanted = _text(value)
	return [row + 1 + i for i, cell in enumerate(cells) if _text(cell) == wanted]


async def lookup_rows(input: Mapping[str, Any], send: Send) -> dict[str, Any]:
	"""The rows whose ``lookupColumn`` cell shows ``lookupValue``, as objects keyed by header.

	Args:
		input: ``spreadsheetId``, ``sheetName``, ``lookupColumn``, ``lookupValue`` and optional
			``headerRow`` (default 1), ``maxRows`` (default 50) and ``valueRenderOption``.
		send: Runs one of the integration's tools (see `Send`).

	Returns:
		``{"rows": [{"rowNumber", "values"}], "matchCount", "columns"}``.

	Raises:
		ToolError: ``lookupValue`` is empty, or the header row is empty or has no such column.
	"""
	if _text(input.get("lookupValue")) == "":
		raise ToolError("lookupValue: give the value to find; empty cells are not searched")
	sheet, row, header = await _header(send, input)
	index = _column(header, str(input["lookupColumn"]), "lookupColumn")
	found = await _matches(send, input, sheet, row, index, input["lookupValue"])
	limit = int(input.get("maxRows") or 50)
	rows: list[dict[str, Any]] = []
	if found[:limit]:
		last = column_letter(len(header) - 1)
		query: dict[str, Any] = {
			"spreadsheetId": input["spreadsheetId"],
			"ranges": [f"{sheet}!A{n}:{last}{n}" for n in found[:limit]],
		}
		if input.get("valueRenderOption"):
			query["valueRenderOption"] = input["valueRenderOption"]
		reply = await send("batchGetValues", query)
		for number, block in zip(found, (reply or {}).get("valueRanges") or [], strict=False):
			cells = (block.get("values") or [[]])[0]
			values = {h: (cells[i] if i < len(cells) else "") for i, h in enumerate(header) if h}
			rows.append({"rowNumber": number, "values": values})
	return {"rows": rows, "matchCount": len(found), "columns": [h for h in header if h]}


def _by_column(header: list[str], row: Mapping[str, Cell]) -> dict[int, Cell]:
	"""The row's values by column index; each name must be a distinct column of the header."""
	out: dict[int, Cell] = {}
	for name, value in row.items():
		index = _column(header, name, f"row.{name}")
		if index in out:
			raise ToolError(
				f"row.{name}: column {header[index]!r} is given twice; give each column once"
			)
		out[index] = value
	return out


def _cells(header: list[str], given: Mapping[int, Cell]) -> list[Cell]:
	"""The row's cells in header order; a column not given is null (Sheets skips nulls)."""
	cells: list[Cell] = [given.get(i) for i in range(len(header))]
	while cells and cells[-1] is None:
		cells.pop()
	return cells


_UPDATED_ROW = re.compile(r"![A-Z]+(\d+)(?::[A-Z]+\d+)?$")
"""The first row of an A1 range, read after the last ``!`` (a quoted sheet title may hold one)."""


async def upsert_row(input: Mapping[str, Any], send: Send) -> dict[str, Any]:
	"""Update the first row whose ``keyColumn`` cell shows the row's key value, else append it.

	Args:
		input: ``spreadsheetId``, ``sheetName``, ``keyColumn``, ``row`` (column name → value,
			the key column included) and optional ``headerRow`` and ``valueInputOption``.
		send: Runs one of the integration's tools (see `Send`).

	Returns:
		``{"action": "updated" | "appended", "rowNumber", "updatedRange", "matchedRows"}``.

	Raises:
		ToolError: The header row is empty, a column is unknown, or ``row`` lacks the key.
	"""
	row_input: Mapping[str, Cell] = input["row"]
	sheet, header_row, header = await _header(send, input)
	key = _column(header, str(input["keyColumn"]), "keyColumn")
	given = _by_column(header, row_input)
	if given.get(key) in (None, ""):
		raise ToolError(
			f"row: give the key column {header[key]!r} a value; it is how the row is found"
		)
	cells = _cells(header, given)
	found = await _matches(send, input, sheet, header_row, key, given[key])
	last = column_letter(len(header) - 1)
	option = {"valueInputOption": input.get("valueInputOption") or "USER_ENTERED"}
	if found:
		number = found[0]
		reply = await send(
			"updateValues",
			{
				"spreadsheetId": input["spreadsheetId"],
				"range": f"{sheet}!A{number}:{last}{number}",
				"values": [cells],
				**option,
			},
		)
		updated = (reply or {}).get("updatedRange")
		return {
			"action": "updated",
			"rowNumber": number,
			"updatedRange": updated,
			"matchedRows": found,
		}
	reply = await send(
		"appendValues",
		{
			"spreadsheetId": input["spreadsheetId"],
			"range": f"{sheet}!A{header_row}:{last}{header_row}",
			"values": [cells],
			"insertDataOption": "INSERT_ROWS",
			**option,
		},
	)
	updated = ((reply or {}).get("updates") or {}).get("updatedRange")
	match = _UPDATED_ROW.search(updated or "")
	return {
		"action": "appended",
		"rowNumber": int(match.group(1)) if match else None,
		"updatedRange": updated,
		"matchedRows": [],
	}
