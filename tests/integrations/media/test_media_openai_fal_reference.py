"""OpenAI GPT-Image checked against the `openai` package's image types; fal against `fal-client`."""

from __future__ import annotations

import functools
import inspect
import re
import typing
from pathlib import Path
from typing import Any, get_args, get_origin

import pytest

from openmolt_integrations import fal, openai_image

# The SDKs (openai: about 0.6 s of CPU to import) are imported by these tests only, in the
# sdk-types xdist group: one worker imports them, not each of the four at its collection.
pytestmark = pytest.mark.xdist_group("sdk-types")


def _literals(annotation: Any) -> set[str]:
	"""Every string Literal value inside an annotation (Optional, Union, Literal...)."""
	if get_origin(annotation) is typing.Literal:
		return {a for a in get_args(annotation) if isinstance(a, str)}
	return (
		set().union(*(_literals(a) for a in get_args(annotation)))
		if get_args(annotation)
		else set()
	)


@functools.cache
def _hints(kind: str) -> dict[str, Any]:
	"""The SDK's parameters of an image request: ``generate`` or ``edit``."""
	from openai.types import image_edit_params, image_generate_params

	if kind == "generate":
		return typing.get_type_hints(image_generate_params.ImageGenerateParamsNonStreaming)
	return typing.get_type_hints(image_edit_params.ImageEditParamsNonStreaming)


DEPRECATED = {"gpt-image-1", "dall-e-2", "dall-e-3"}
TOOLS = {t.handle: t for t in openai_image.INTEGRATION.tools}


def test_models_are_current_openai_models() -> None:
	"""Every offered model is in ImageModel, none is a shut-down one, and all current ones are offered."""
	from openai.types import image_model

	models = set(get_args(image_model.ImageModel))
	deprecation_note = Path(image_model.__file__).read_text().split("Deprecated values:", 1)[1]
	for name in DEPRECATED:
		assert f'"{name}"' in deprecation_note, f"{name} is no longer documented as deprecated"
	offered = set(openai_image.MODELS)
	assert offered <= models
	assert not offered & DEPRECATED
	assert offered == models - DEPRECATED
	assert openai_image.DEFAULT_MODEL in offered


@pytest.mark.parametrize(
	("mapping", "kind"),
	[(openai_image.GENERATE_PARAMS, "generate"), (openai_image.EDIT_PARAMS, "edit")],
	ids=["generate", "edit"],
)
def test_parameter_names_are_the_apis(mapping: dict[str, str], kind: str) -> None:
	"""Each tool input maps to a parameter of the SDK's params TypedDict."""
	assert set(mapping.values()) <= set(_hints(kind))


@pytest.mark.parametrize(
	("handle", "kind"),
	[("generateImage", "generate"), ("editImage", "edit")],
	ids=["generate", "edit"],
)
def test_enum_values_are_allowed_literals(handle: str, kind: str) -> None:
	"""quality, background, output_format, moderation, input_fidelity enums are SDK literals."""
	hints = _hints(kind)
	mapping = (
		openai_image.GENERATE_PARAMS if handle == "generateImage" else openai_image.EDIT_PARAMS
	)
	props = TOOLS[handle].input_schema["properties"]
	checked = 0
	for name, api in mapping.items():
		if "enum" in props[name] and api != "model":
			assert set(props[name]["enum"]) <= _literals(hints[api]), name
			checked += 1
	assert checked >= 3
	legacy = {"standard", "hd"}
	assert not legacy & set(props["quality"]["enum"])


def test_input_fidelity_goes_only_to_the_models_the_sdk_names() -> None:
	"""INPUT_FIDELITY is what ImageEditParams documents: 1.5 high/low, 1-mini low, omit for 2."""
	from openai.types import image_edit_params

	source = Path(image_edit_params.__file__).read_text()
	doc = " ".join(source.split("input_fidelity:", 1)[1].split('"""', 2)[1].split())
	assert "Supports `high` and `low` on `gpt-image-1.5`" in doc
	assert "`gpt-image-1-mini` supports only `low`" in doc
	assert "For `gpt-image-2`, omit this parameter" in doc
	assert openai_image.INPUT_FIDELITY == {
		"gpt-image-1.5": ("high", "low"),
		"gpt-image-1-mini": ("low",),
	}
	assert openai_image.DEFAULT_MODEL not in openai_image.INPUT_FIDELITY
	assert set(openai_image.INPUT_FIDELITY) <= set(openai_image.MODELS)


def test_input_names_are_the_apis_own() -> None:
	"""Every tool input passed to the API has the API's parameter name (output_format...), the
	source images included (image); the one input with no counterpart, file_name, is snake_case."""
	for mapping in (openai_image.GENERATE_PARAMS, openai_image.EDIT_PARAMS):
		assert all(name == api for name, api in mapping.items())
	for handle, kind in (("generateImage", "generate"), ("editImage", "edit")):
		hints = _hints(kind)
		props = set(TOOLS[handle].input_schema["properties"])
		assert props - {"file_name"} <= set(hints), (handle, props - set(hints))


def test_paths_and_multipart_fields_are_the_sdks() -> None:
	"""The SDK posts to /images/generations and /images/edits; several images go as image[]."""
	import openai
	from openai._utils import extract_files

	source = Path(inspect.getfile(openai.resources.images)).read_text()
	assert '"/images/generations"' in source
	assert '"/images/edits"' in source
	fields = extract_files({"image": [b"a", b"b"]}, paths=[["image", "<array>"]])
	assert [name for name, _ in fields] == ["image[]", "image[]"]
	single = extract_files({"image": b"a", "mask": b"m"}, paths=[["image"], ["mask"]])
	assert [name for name, _ in single] == ["image", "mask"]
	assert "mask" in _hints("edit") and "image" in _hints("edit")


# fal ------------------------------------------------------------------------------------


def test_fal_sdk_calls_take_the_arguments_we_pass() -> None:
	"""The AsyncClient methods the tools call accept the keyword arguments the tools pass."""
	import fal_client

	client = fal_client.AsyncClient
	run = inspect.signature(client.run).parameters
	assert {"application", "arguments", "path", "timeout"} <= set(run)
	submit = inspect.signature(client.submit).parameters
	assert {"application", "arguments", "path", "webhook_url"} <= set(submit)
	status = inspect.signature(client.status).parameters
	assert {"application", "request_id", "with_logs"} <= set(status)
	assert {"application", "request_id"} <= set(inspect.signature(client.result).parameters)
	assert {"application", "request_id"} <= set(inspect.signature(client.cancel).parameters)
	upload = list(inspect.signature(client.upload).parameters)
	assert upload[:4] == ["self", "data", "content_type", "file_name"]
	assert "key" in {f.name for f in fal_client.AsyncClient.__dataclass_fields__.values()}
	calls = {"run": run, "submit": submit, "status": status}
	calls |= {"result": inspect.signature(client.result).parameters}
	calls |= {"cancel": inspect.signature(client.cancel).parameters}
	for tool in fal.INTEGRATION.tools:
		if tool.handle in calls:
			# model is the SDK's application (fal's docs call it the model id)
			names = set(tool.input_schema["properties"]) - {"model"}
			assert names <= set(calls[tool.handle]), (tool.handle, names - set(calls[tool.handle]))


@pytest.mark.parametrize(
	"model",
	["fal-ai/flux/dev", "fal-ai/kling-video/v2.1/standard/image-to-video", "workflows/me/flow"],
)
def test_fal_model_pattern_accepts_sdk_endpoint_ids(model: str) -> None:
	"""Model ids the schema accepts are ones the SDK can parse into an app id."""
	import fal_client

	pattern = fal.INTEGRATION.tools[0].input_schema["properties"]["model"]["pattern"]
	assert re.fullmatch(pattern, model)
	app = fal_client.client.AppId.from_endpoint_id(model)
	assert app.owner and app.alias


def test_fal_status_names_are_the_queue_statuses() -> None:
	"""The statuses the tools report are the queue API's names, as the SDK parses them."""
	import fal_client

	source = Path(inspect.getfile(fal_client.client)).read_text()
	for name in ("IN_QUEUE", "IN_PROGRESS", "COMPLETED"):
		assert f'"{name}"' in source
	assert fal_client.client.QUEUE_URL_FORMAT == fal.INTEGRATION.api_setup.base_url + "/"
	(cred,) = fal.INTEGRATION.credential_setup
	assert cred.headers == {"Authorization": "Key {{ config.apiKey }}"}
	assert fal_client.auth.AuthCredentials("Key", "k").header_value == "Key k"


def _queue_path(model: str, request_id: str) -> str:
	"""The path fal-client's queue handle requests, as an HTTP client resolves it."""
	import fal_client
	import httpx

	app = fal_client.client.AppId.from_endpoint_id(model)
	prefix = f"{app.namespace}/" if app.namespace else ""
	# fal-client writes owner, alias and request_id into the URL as they are (no encoding).
	url = (
		f"{fal_client.client.QUEUE_URL_FORMAT}{prefix}{app.owner}/{app.alias}/requests/{request_id}"
	)
	return httpx.URL(url + "/status").path


def _accepts(handle: str, name: str, value: str) -> bool:
	schema = next(t for t in fal.INTEGRATION.tools if t.handle == handle).input_schema
	return re.fullmatch(schema["properties"][name]["pattern"], value) is not None


HOSTILE_REQUEST_IDS = ["a/b", "../../x/y/requests/z", "a?b=1", "a#b", "a%2Fb", "a b", "ü-1", ".."]
HOSTILE_MODELS = ["fal-ai/..", "fal-ai/./flux", "../fal-ai/flux", "fal-ai/flux/..", "./x/y"]


@pytest.mark.parametrize("handle", ["status", "result", "cancel"])
def test_fal_request_ids_stay_one_segment_of_the_sdks_queue_url(handle: str) -> None:
	"""fal-client puts request_id in its URL unencoded: only ids that stay one segment pass."""
	good = "764cabcf-b745-4b3e-ae38-1200304cf45b"
	assert _accepts(handle, "request_id", good)
	assert _queue_path("fal-ai/flux/dev", good).endswith(f"/requests/{good}/status")
	for bad in HOSTILE_REQUEST_IDS:
		assert not _accepts(handle, "request_id", bad), bad


@pytest.mark.parametrize("handle", ["run", "submit", "status", "result", "cancel"])
def test_fal_model_ids_cannot_climb_out_of_the_app(handle: str) -> None:
	"""A '.' or '..' segment in the model would be resolved away: the app would be another."""
	for bad in HOSTILE_MODELS:
		assert not _accepts(handle, "model", bad), bad
	assert _queue_path("fal-ai/..", "r1") == "/requests/r1/status"  # the climb it would make
