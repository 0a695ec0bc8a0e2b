"""Every Google Workspace/YouTube tool conforms to Google's discovery documents."""

from __future__ import annotations

from typing import Any

import pytest
from _discovery import discovery_document, discovery_method, discovery_problems, keyword_problems

from openmolt_core.integrations import HttpTool, Integration
from openmolt_integrations import gmail, google_calendar, google_drive, google_sheets, youtube

# tool handle -> discovery method id (a tuple marks the PUT of a resumable upload session)
CALENDAR = {
	"listCalendars": "calendar.calendarList.list",
	"listEvents": "calendar.events.list",
	"getEvent": "calendar.events.get",
	"createEvent": "calendar.events.insert",
	"quickAddEvent": "calendar.events.quickAdd",
	"updateEvent": "calendar.events.patch",
	"deleteEvent": "calendar.events.delete",
	"moveEvent": "calendar.events.move",
	"listEventInstances": "calendar.events.instances",
	"queryFreeBusy": "calendar.freebusy.query",
	"createCalendar": "calendar.calendars.insert",
}
GMAIL = {
	"listMessages": "gmail.users.messages.list",
	"getMessage": "gmail.users.messages.get",
	"sendMessage": "gmail.users.messages.send",
	"createDraft": "gmail.users.drafts.create",
	"listDrafts": "gmail.users.drafts.list",
	"sendDraft": "gmail.users.drafts.send",
	"modifyMessageLabels": "gmail.users.messages.modify",
	"batchModifyMessages": "gmail.users.messages.batchModify",
	"trashMessage": "gmail.users.messages.trash",
	"listThreads": "gmail.users.threads.list",
	"getThread": "gmail.users.threads.get",
	"getAttachment": "gmail.users.messages.attachments.get",
	"listLabels": "gmail.users.labels.list",
	"createLabel": "gmail.users.labels.create",
	"getProfile": "gmail.users.getProfile",
}
DRIVE = {
	"listFiles": "drive.files.list",
	"getFile": "drive.files.get",
	"downloadFile": "drive.files.get",
	"exportFile": "drive.files.export",
	"createFolder": "drive.files.create",
	"uploadFile": "drive.files.create",
	"startResumableUpload": "drive.files.create",
	"uploadResumableContent": ("drive.files.create",),
	"uploadResumableChunk": ("drive.files.create",),
	"getResumableUploadStatus": ("drive.files.create",),
	"updateFile": "drive.files.update",
	"updateFileContent": "drive.files.update",
	"copyFile": "drive.files.copy",
	"deleteFile": "drive.files.delete",
	"shareFile": "drive.permissions.create",
	"listPermissions": "drive.permissions.list",
	"getAbout": "drive.about.get",
}
SHEETS = {
	"createSpreadsheet": "sheets.spreadsheets.create",
	"getSpreadsheet": "sheets.spreadsheets.get",
	"getValues": "sheets.spreadsheets.values.get",
	"batchGetValues": "sheets.spreadsheets.values.batchGet",
	"updateValues": "sheets.spreadsheets.values.update",
	"appendValues": "sheets.spreadsheets.values.append",
	"batchUpdateValues": "sheets.spreadsheets.values.batchUpdate",
	"clearValues": "sheets.spreadsheets.values.clear",
	"addSheet": "sheets.spreadsheets.batchUpdate",
	"deleteSheet": "sheets.spreadsheets.batchUpdate",
	"deleteRows": "sheets.spreadsheets.batchUpdate",
	"batchUpdateSpreadsheet": "sheets.spreadsheets.batchUpdate",
}
YOUTUBE = {
	"search": "youtube.search.list",
	"listVideos": "youtube.videos.list",
	"uploadVideo": "youtube.videos.insert",
	"startResumableVideoUpload": "youtube.videos.insert",
	"uploadVideoContent": ("youtube.videos.insert",),
	"uploadVideoChunk": ("youtube.videos.insert",),
	"getVideoUploadStatus": ("youtube.videos.insert",),
	"updateVideo": "youtube.videos.update",
	"deleteVideo": "youtube.videos.delete",
	"rateVideo": "youtube.videos.rate",
	"setThumbnail": "youtube.thumbnails.set",
	"listChannels": "youtube.channels.list",
	"listPlaylists": "youtube.playlists.list",
	"createPlaylist": "youtube.playlists.insert",
	"listPlaylistItems": "youtube.playlistItems.list",
	"addToPlaylist": "youtube.playlistItems.insert",
	"listCommentThreads": "youtube.commentThreads.list",
	"postComment": "youtube.commentThreads.insert",
	"replyToComment": "youtube.comments.insert",
}

SUITES: dict[str, tuple[Integration, str, dict[str, str | tuple[str]]]] = {
	"googleCalendar": (google_calendar.INTEGRATION, "calendar.v3", CALENDAR),
	"gmail": (gmail.INTEGRATION, "gmail.v1", GMAIL),
	"googleDrive": (google_drive.INTEGRATION, "drive.v3", DRIVE),
	"googleSheets": (google_sheets.INTEGRATION, "sheets.v4", SHEETS),
	"youtube": (youtube.INTEGRATION, "youtube.v3", YOUTUBE),
}
CASES = [
	pytest.param(iid, tool.handle, id=f"{iid}.{tool.handle}")
	for iid, (integration, _, _) in SUITES.items()
	for tool in integration.tools
	if isinstance(tool, HttpTool)
]
# Core tools that call no Google method (fileInfo reads the local file store).
CORE_TOOLS = {"fileInfo"}
# Composed tools: Python that sends only the integration's declarative tools, by handle.
COMPOSED: dict[str, dict[str, tuple[str, ...]]] = {
	"googleSheets": google_sheets.ROW_REQUESTS,
	"googleCalendar": google_calendar.COMPOSED_REQUESTS,
}
ROW_METHODS = {
	"lookupRows": {"sheets.spreadsheets.values.get", "sheets.spreadsheets.values.batchGet"},
	"appendOrUpdateRow": {
		"sheets.spreadsheets.values.get",
		"sheets.spreadsheets.values.update",
		"sheets.spreadsheets.values.append",
	},
	"respondToEvent": {"calendar.events.get", "calendar.events.patch"},
}
"""The discovery methods each composed Sheets tool calls (what the issue asks of it)."""


@pytest.mark.parametrize("iid", list(SUITES))
def test_every_tool_is_mapped_to_a_discovery_method(iid: str) -> None:
	"""Each tool names the discovery method it calls, and no mapping is stale."""
	integration, _, mapping = SUITES[iid]
	composed = set(COMPOSED.get(iid, {}))
	assert {t.handle for t in integration.tools} - CORE_TOOLS - composed == set(mapping)


@pytest.mark.parametrize("iid", list(COMPOSED))
def test_composed_tools_send_only_checked_declarative_tools(iid: str) -> None:
	"""Every request of a composed tool is a declarative tool checked against discovery above."""
	integration, _, mapping = SUITES[iid]
	http = {t.handle for t in integration.tools if isinstance(t, HttpTool)}
	for handle, requests in COMPOSED[iid].items():
		assert handle in {t.handle for t in integration.tools} and handle not in http
		assert set(requests) <= http & set(mapping)
		assert {mapping[r] for r in requests} == ROW_METHODS[handle]


@pytest.mark.parametrize(("iid", "handle"), CASES)
def test_tool_conforms_to_discovery(iid: str, handle: str) -> None:
	"""Method, URL, parameters and body fields agree with the discovery document."""
	integration, api, mapping = SUITES[iid]
	tool = next(t for t in integration.tools if t.handle == handle)
	target = mapping[handle]
	session = isinstance(target, tuple)
	method_id = target[0] if isinstance(target, tuple) else target
	assert discovery_problems(tool, integration, api, method_id, resumable_session=session) == []


# (integration, tool, problem prefix): why the input does not carry the reference's keyword.
_LOCAL_TIME = (
	"EventDateTime.dateTime: 'a time zone offset is required unless a time zone is explicitly "
	"specified in timeZone' (calendar.v3), so a local time with timeZone is valid and an RFC 3339 "
	"date-time format would refuse it"
)
KEYWORD_EXCEPTIONS = {
	("googleCalendar", "createEvent", "input start (body.start).dateTime"): _LOCAL_TIME,
	("googleCalendar", "createEvent", "input end (body.end).dateTime"): _LOCAL_TIME,
	("googleCalendar", "updateEvent", "input start (body.start).dateTime"): _LOCAL_TIME,
	("googleCalendar", "updateEvent", "input end (body.end).dateTime"): _LOCAL_TIME,
}


@pytest.mark.parametrize(("iid", "handle"), CASES)
def test_inputs_keep_the_references_formats_patterns_and_enums(iid: str, handle: str) -> None:
	"""Each input that fills a parameter or body field keeps its format, pattern, enum and bounds.

	Nested properties of such an input are fields of the reference schema, checked alike.
	"""
	integration, api, mapping = SUITES[iid]
	tool = next(t for t in integration.tools if t.handle == handle)
	target = mapping[handle]
	method_id = target[0] if isinstance(target, tuple) else target
	problems = [
		p
		for p in keyword_problems(tool, api, method_id)
		if (iid, handle, p.split(":")[0]) not in KEYWORD_EXCEPTIONS
	]
	assert problems == []


def test_the_keyword_check_rejects_dropped_formats_and_enums() -> None:
	"""A dropped date-time format, a value outside the enum, a low bound or a wrong name fails."""
	events = next(t for t in google_calendar.INTEGRATION.tools if t.handle == "listEvents")
	props = dict(events.input_schema["properties"])
	props["timeMin"] = {"type": "string"}
	props["orderBy"] = {"type": "string", "enum": ["startTime", "bogus"]}
	props["maxResults"] = {"type": "integer", "minimum": 0}
	broken = events.model_copy(
		update={"input_schema": {**events.input_schema, "properties": props}}
	)
	text = "\n".join(keyword_problems(broken, "calendar.v3", "calendar.events.list"))
	assert "parameter timeMin: the reference's format date-time is missing" in text
	assert "parameter orderBy: ['bogus'] are not in the enum" in text
	assert "parameter maxResults: minimum 0 below the reference's 1" in text
	create = next(t for t in google_calendar.INTEGRATION.tools if t.handle == "createEvent")
	attendees = create.input_schema["properties"]["attendees"]
	items = attendees["items"]
	renamed = {**items, "properties": {**items["properties"], "mail": {"type": "string"}}}
	wrong_name = create.model_copy(
		update={
			"input_schema": {
				**create.input_schema,
				"properties": {
					**create.input_schema["properties"],
					"attendees": {**attendees, "items": renamed},
				},
			}
		}
	)
	assert (
		"input attendees (body.attendees)[].mail is not a field of the reference schema"
		in keyword_problems(wrong_name, "calendar.v3", "calendar.events.insert")
	)
	video = next(t for t in youtube.INTEGRATION.tools if t.handle == "updateVideo")
	status = video.input_schema["properties"]["status"]
	nested = {**status, "properties": {**status["properties"], "publishAt": {"type": "string"}}}
	no_format = video.model_copy(
		update={
			"input_schema": {
				**video.input_schema,
				"properties": {**video.input_schema["properties"], "status": nested},
			}
		}
	)
	assert any(
		p.startswith("input status (body.status).publishAt: the reference's format date-time")
		for p in keyword_problems(no_format, "youtube.v3", "youtube.videos.update")
	)


def test_every_keyword_exception_is_still_needed() -> None:
	"""An exception that no longer matches a problem is stale and goes."""
	found = set()
	for iid, handle, _ in KEYWORD_EXCEPTIONS:
		integration, api, mapping = SUITES[iid]
		tool = next(t for t in integration.tools if t.handle == handle)
		target = mapping[handle]
		method_id = target[0] if isinstance(target, tuple) else target
		found |= {(iid, handle, p.split(":")[0]) for p in keyword_problems(tool, api, method_id)}
	assert set(KEYWORD_EXCEPTIONS) <= found


@pytest.mark.parametrize("iid", list(SUITES))
def test_oauth_scopes_exist_in_discovery(iid: str) -> None:
	"""The OAuth scope strings the credential asks for are scopes the API defines."""
	from _discovery import discovery_document

	integration, api, _ = SUITES[iid]
	defined = set(discovery_document(api)["auth"]["oauth2"]["scopes"])
	oauth = integration.credential("oauth2")
	assert oauth is not None and oauth.scopes
	assert set(oauth.scopes) <= defined


@pytest.mark.parametrize(("iid", "handle"), CASES)
def test_the_oauth_scopes_a_tool_is_granted_include_one_its_method_accepts(
	iid: str, handle: str
) -> None:
	"""The OAuth scopes an agent gets for a tool let Google accept the tool's method.

	Discovery lists, per method, the scopes any one of which authorizes it. The credential asks
	for the scopes its ``scope_map`` gives the tool's scopes (all of them: a tool needs each of
	its scopes), or every scope it lists when it has no map; one of those must be the method's,
	or Google answers 403 insufficient scopes to every call of the tool.
	"""
	integration, api, mapping = SUITES[iid]
	tool = next(t for t in integration.tools if t.handle == handle)
	target = mapping[handle]
	method = discovery_method(api, target[0] if isinstance(target, tuple) else target)
	oauth = integration.credential("oauth2")
	assert oauth is not None
	if oauth.scope_map:
		granted = {s for scope in tool.scopes for s in oauth.scope_map.get(scope, [])}
		granted |= set(oauth.scopes) - {s for v in oauth.scope_map.values() for s in v}
	else:
		granted = set(oauth.scopes)
	accepted = set(method.get("scopes", []))
	assert granted & accepted, (
		f"{handle} ({method['id']}) is granted {sorted(granted)}; Google accepts only "
		f"{sorted(accepted)}"
	)


def _accepted(iid: str, handle: str) -> list[set[str]]:
	"""The scopes each Google method a tool calls accepts (any one authorizes the method)."""
	_, api, mapping = SUITES[iid]
	if handle in ROW_METHODS:
		methods = sorted(ROW_METHODS[handle])
	else:
		target = mapping[handle]
		methods = [target[0] if isinstance(target, tuple) else target]
	return [set(discovery_method(api, m).get("scopes", [])) for m in methods]


def unneeded_scopes(iid: str) -> list[str]:
	"""The OAuth scopes an agent given one tool scope is asked for that none of that scope's
	tools needs: without the scope, each tool's methods still accept one the agent is asked for."""
	from openmolt_core.integrations.oauth import requested_scopes

	integration = SUITES[iid][0]
	oauth = integration.credential("oauth2")
	assert oauth is not None
	found = []
	for scope in integration.scopes:
		asked = set(requested_scopes(integration, oauth, [scope]))
		needs = [
			accepted
			for tool in integration.tools
			if scope in tool.scopes and tool.handle not in CORE_TOOLS
			for accepted in _accepted(iid, tool.handle)
		]
		for one in sorted(asked):
			if all(accepted & (asked - {one}) for accepted in needs):
				found.append(f"{scope}: {one}")
	return found


@pytest.mark.parametrize("iid", list(SUITES))
def test_each_tool_scope_asks_for_no_oauth_scope_its_tools_do_without(iid: str) -> None:
	"""The consent asks an agent for no scope its tool scopes' methods do without (discovery's
	per-method scopes): a YouTube agent that only reads is not asked to upload videos."""
	assert unneeded_scopes(iid) == []


def test_the_checker_rejects_a_wrong_tool() -> None:
	"""A tool with a wrong method, path, query name and body field is reported, not passed."""
	from openmolt_core.integrations import HttpTool

	bad = HttpTool(
		handle="x",
		description="x",
		method="POST",
		endpoint="/drive/v3/file/{{ input.id }}",
		query_params={"pageSize": "1", "bogus": "2"},
		body={"nam": "{{ input.name }}"},
	)
	problems = discovery_problems(bad, google_drive.INTEGRATION, "drive.v3", "drive.files.copy")
	text = "\n".join(problems)
	assert "URL" in text
	assert "bogus" in text and "pageSize" in text
	assert "body.nam" in text
	wrong_method = bad.model_copy(
		update={
			"method": "GET",
			"endpoint": "/drive/v3/files/{{ input.fileId }}/copy",
			"query_params": {},
			"body": None,
		}
	)
	assert any(
		"method GET" in p
		for p in discovery_problems(
			wrong_method, google_drive.INTEGRATION, "drive.v3", "drive.files.copy"
		)
	)


def test_the_checker_rejects_broken_resumable_session_tools() -> None:
	"""A chunk whose body range differs from Content-Range, or a status query with a body, fails."""
	chunk = next(t for t in google_drive.INTEGRATION.tools if t.handle == "uploadResumableChunk")
	status = next(
		t for t in google_drive.INTEGRATION.tools if t.handle == "getResumableUploadStatus"
	)

	def problems(tool: HttpTool) -> str:
		return "\n".join(
			discovery_problems(
				tool,
				google_drive.INTEGRATION,
				"drive.v3",
				"drive.files.create",
				resumable_session=True,
			)
		)

	wrong_range = chunk.model_copy(update={"body": "{{ input.file }}#bytes=0-{{ input.end }}"})
	assert "#bytes= range of Content-Range" in problems(wrong_range)
	not_accepting = chunk.model_copy(update={"accept_statuses": []})
	assert "accept 308" in problems(not_accepting)
	with_body = status.model_copy(update={"headers": {"Content-Range": "bytes 0-1/2"}})
	assert "bytes */<total>" in problems(with_body)


def _mask_tree(mask: str) -> dict[str, Any]:
	"""A partial-response ``fields`` mask as a tree: ``a,b(c,d)`` -> {a: {}, b: {c: {}, d: {}}}."""
	tree: dict[str, Any] = {}
	depth, start, name = 0, 0, ""
	for i, char in enumerate(mask + ","):
		if char == "(" and depth == 0:
			name, start = mask[start:i].strip(), i + 1
		if char in "()":
			depth += 1 if char == "(" else -1
			if depth == 0 and char == ")":
				tree[name] = _mask_tree(mask[start:i])
				start = i + 1
		elif char == "," and depth == 0:
			if mask[start:i].strip():
				tree[mask[start:i].strip()] = {}
			start = i + 1
	return tree


def _default_mask(template: str) -> str:
	"""The mask a ``fields`` template sends when the model gives no input of its own."""
	from openmolt_core.integrations.templating import render_string

	return str(render_string(template, {"input": {}, "config": {}}))


def _mask_problems(tree: dict[str, Any], schema: dict[str, Any] | None, where: str) -> list[str]:
	"""How an output schema departs from the fields a mask asks for (a missing, an extra one)."""
	if not schema or not tree:
		return []
	if schema.get("type") == "array" or "items" in schema:
		return _mask_problems(tree, schema.get("items"), where + "[]")
	props = schema.get("properties")
	if props is None:
		return []
	problems = [
		f"{where}.{k} is asked for but not in the output schema" for k in tree if k not in props
	]
	problems += [
		f"{where}.{k} is in the output schema but not asked for" for k in props if k not in tree
	]
	for key, sub in tree.items():
		problems += _mask_problems(sub, props.get(key), f"{where}.{key}")
	return problems


@pytest.mark.parametrize(("iid", "handle"), CASES)
def test_the_output_schema_lists_the_fields_the_tool_asks_for(iid: str, handle: str) -> None:
	"""With a ``fields`` mask Google returns exactly those fields: the output schema lists them.

	Each asked field is a field of the method's response (discovery), and the output schema
	neither misses one (the model would not know it gets it) nor promises one not asked for.
	"""
	integration, api, mapping = SUITES[iid]
	tool = next(t for t in integration.tools if t.handle == handle)
	fields = tool.query_params.get("fields")
	if not isinstance(fields, str) or tool.output_schema is None or tool.response_headers:
		return  # no mask, or the output is a reply header (a resumable session's Location)
	target = mapping[handle]
	method = discovery_method(api, target[0] if isinstance(target, tuple) else target)
	tree = _mask_tree(_default_mask(fields))
	doc = discovery_document(api)
	assert _mask_reference_problems(doc, tree, method["response"], "response") == []
	assert _mask_problems(tree, tool.output_schema, "output") == []


def _mask_reference_problems(
	doc: dict[str, Any], tree: dict[str, Any], schema: dict[str, Any], where: str
) -> list[str]:
	if "$ref" in schema:
		schema = doc["schemas"][schema["$ref"]]
	if "items" in schema:
		return _mask_reference_problems(doc, tree, schema["items"], where + "[]")
	props = schema.get("properties", {})
	problems = [f"{where}.{k} is not a field of the reference" for k in tree if k not in props]
	for key, sub in tree.items():
		if key in props and sub:
			problems += _mask_reference_problems(doc, sub, props[key], f"{where}.{key}")
	return problems
