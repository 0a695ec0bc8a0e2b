"""Agent files: the JSON file's model, its loader with line-accurate errors, and Python files.

``openmolt schema`` prints `AgentFile`'s JSON Schema.

A Python agent file defines a module-level ``agent``: an `Agent`, or a function that takes the
`OpenMolt` instance the command built (with the keys it resolved) and returns one. It may also
define ``input`` (the run's input), ``schedules`` (a list of schedule dicts) and ``triggers`` (a
dict in the shape of `openmolt_core.triggers.Triggers`, for ``openmolt serve``). A file for
``openmolt worker`` or ``openmolt serve`` may define ``agents`` instead: a list of such agents or
functions (its ``triggers`` then map each agent's name to its triggers).
"""

from __future__ import annotations

import copy
import importlib.util
import inspect
import json
import re
import sys
import traceback
import types
from bisect import bisect_right
from collections.abc import Sequence
from json.decoder import scanstring  # type: ignore[attr-defined]  # public, not in typeshed
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
	AliasChoices,
	BaseModel,
	ConfigDict,
	Field,
	ValidationError,
	field_validator,
)
from pydantic.fields import FieldInfo

from openmolt_core._support.docs import docs_url
from openmolt_core._support.words import SHOWN_TEXT, secret_place
from openmolt_core.agentconfig import AgentConfig, IntegrationEntry
from openmolt_core.cli._typos import (
	AGENT_FILE_SUFFIXES,
	MAX_AGENT_FILE_BYTES,
	near_file,
	no_such_file,
)
from openmolt_core.errors import ConfigurationError, PluginError
from openmolt_core.llm import ModelConfig
from openmolt_core.options import AgentMemory, Options, options_config

if TYPE_CHECKING:
	from importlib.machinery import ModuleSpec

	from openmolt_core.schedule import ScheduleSpec
	from openmolt_core.triggers import Triggers

__all__ = [
	"AGENT_FILE_SUFFIXES",
	"MAX_AGENT_FILE_BYTES",
	"AgentFile",
	"AgentFileError",
	"PythonAgent",
	"agent_files",
	"call_factory",
	"is_tool_source",
	"load_json_file",
	"load_python_file",
	"source_spec",
	"validate",
]


def agent_files(paths: Sequence[str]) -> list[Path]:
	"""The agent files of the arguments: files as given, folders' ``*.json`` and ``*.py``.

	In a folder, names that start with ``_`` or ``.`` (helpers, hidden and editor files) are
	left out, and so are ``*.schema.json`` files (``openmolt schema > agent-file.schema.json``,
	which editors read beside the agent files) and the JSON files an agent file's ``openapi``
	names: OpenAPI documents and imported integrations (`is_tool_source`). ``openmolt worker``
	and ``openmolt serve`` read their arguments with it.

	Args:
		paths: Agent files and folders of them.

	Raises:
		AgentFileError: A path does not exist, or a folder holds no agent file.
	"""
	out: list[Path] = []
	for text in paths:
		path = Path(text)
		if path.is_dir():
			found = sorted(
				p
				for p in path.iterdir()
				if p.suffix in AGENT_FILE_SUFFIXES
				and not p.name.startswith(("_", "."))
				and not p.name.endswith(".schema.json")
				and not is_tool_source(p)
			)
			if not found:
				raise AgentFileError(f"{path}: no agent files (*.json, *.py) in this folder")
			out.extend(found)
		elif path.exists():  # a regular file; anything else is refused by its loader, by kind
			out.append(path)
		else:
			raise AgentFileError(no_such_file(text, "file or folder"))
	return out


def is_tool_source(path: Path) -> bool:
	"""Whether a JSON file is an OpenAPI document or an imported integration, not an agent file.

	An OpenAPI document's ``openapi`` (Swagger's ``swagger``) is its version, a string (an agent
	file's ``openapi`` is an object); the JSON ``openmolt import-openapi --format json`` writes
	has ``tools`` and ``apiSetup``. A file that cannot be read as JSON is no tool source: it is
	read, and reported, as an agent file.
	"""
	if path.suffix != ".json":
		return False
	from openmolt_core._support.paths import read_text

	try:  # a FileRefused (a pipe, a device, a file over the limit) is an OSError
		data = json.loads(read_text(path, limit=_MAX_PEEK, encoding="utf-8-sig"))
	except (OSError, ValueError, RecursionError):
		return False
	if not isinstance(data, dict):
		return False
	version = data.get("openapi", data.get("swagger"))
	return isinstance(version, str) or ("tools" in data and "apiSetup" in data)


_MAX_PEEK = 64 << 20
"""Bytes of a JSON file `is_tool_source` reads (GitHub's whole OpenAPI document is about 12 MB)."""


class AgentFileError(ConfigurationError):
	"""The agent file is wrong; the message names the file, the line and the key."""


class _Model(Options):
	# The option models' one mechanism: camelCase aliases generated, snake_case names accepted,
	# secrets masked in a repr.
	model_config = options_config(frozen=False)


class CapabilitySpec(_Model):
	"""A capability a plugin provides, with its options."""

	name: str = Field(description="The name the plugin registers it under.")
	options: dict[str, Any] = Field(
		default_factory=dict, description="Given to the plugin's factory as keywords."
	)


class OpenApiSource(_Model):
	"""An OpenAPI document the agent uses as an integration, with the importer's options.

	``document`` may also be the JSON ``openmolt import-openapi --format json`` writes (an
	integration already imported and perhaps edited); the options then do not apply.
	"""

	document: str = Field(
		min_length=1,
		description="The OpenAPI 3 document (JSON or YAML), or an imported integration's JSON "
		"(import-openapi --format json); a path relative to the agent file.",
	)
	operations: list[str] | None = Field(
		default=None, description="Only these operations (operationIds, or the tool handles)."
	)
	tags: list[str] | None = Field(default=None, description="Only operations with these tags.")
	base_url: str | None = Field(
		default=None, description="The API's base URL (default: the document's first server)."
	)
	name: str | None = Field(default=None, description="The display name (default: its title).")
	labels: dict[str, list[str]] | None = Field(
		default=None,
		description="Taint labels by tool handle or pattern, replacing the ones the method and input give.",
	)
	allow_internal_hosts: list[str] = Field(
		default_factory=list,
		description="Internal hosts or networks the tools may reach, e.g. ['127.0.0.1'].",
	)
	allow_hosts: list[str] = Field(
		default_factory=list,
		description="Other hosts the document's operations may be served by.",
	)


def _rare_types() -> None:
	"""Import the types of ``schedules`` and ``triggers`` into this module, where pydantic reads them.

	`AgentFile` names them, and the two modules (the schedule and trigger models, about 10 ms of
	CPU in a fresh process) load only when the model is built: its first validation, JSON Schema
	or `AgentFile.model_rebuild`. A run of a file without schedules or triggers validates it with
	`_WithoutRare`, and ``-m`` only constructs an `AgentFile`: neither loads them.
	"""
	if "Triggers" not in globals():
		from openmolt_core.schedule import ScheduleSpec
		from openmolt_core.triggers import Triggers

		globals().update(ScheduleSpec=ScheduleSpec, Triggers=Triggers)


class AgentFile(_Model):
	"""An agent file for the ``openmolt`` command: create_agent options plus what the command needs.

	Keys are the spec's camelCase names; the snake_case names are accepted too. ``config``,
	``integrations`` and ``memory`` are the typed options of ``create_agent``
	(`openmolt_core.options`), so a file accepts and refuses what Python code does.
	"""

	model_config = ConfigDict(**options_config(frozen=False), title="OpenMolt agent file")

	schema_: str | None = Field(default=None, alias="$schema", description="For editors.")
	name: str = Field(min_length=1, description="The agent's name.")
	model: str | list[str] = Field(
		description="'provider:model', e.g. 'openai:gpt-5-mini'; or a list, the first model then "
		"its fallbacks in order (the same as fallbackModels).",
	)
	fallback_models: list[str] = Field(
		default_factory=list,
		description="Models to try, in order, when the model fails for good (5xx after the "
		"retries, 429 past its budget, overload, timeout), e.g. ['anthropic:claude-sonnet-4-5'].",
	)
	tool_loading: Literal["all", "search", "auto"] = Field(
		default="all",
		description="'all' lists every tool; 'search' shows a catalog the model searches and "
		"loads tools from; 'auto' searches above 30 tools.",
	)
	instructions: str | None = Field(default=None, description="What the agent must do.")
	instructions_path: str | None = Field(default=None, description="A file with the instructions.")
	model_settings: ModelConfig | None = Field(
		default=None,
		alias="modelConfig",
		validation_alias=AliasChoices("modelConfig", "model_config"),
		description="thinking, search, temperature, maxOutputTokens, topP, stop, providerOptions.",
	)
	config: AgentConfig | None = Field(
		default=None,
		description="Instance settings this agent overrides: maxSteps, maxTokens, timeout, maxCost, "
		"verbose, the caps (maxReplyChars, maxResultChars...) and maxResultCharsPerTool.",
	)
	integrations: list[str | IntegrationEntry] | dict[str, dict[str, Any]] = Field(
		default_factory=list,
		description="Integration ids or entries; or {id: config} to use each with that config.",
	)
	memory: AgentMemory | None = None
	output_schema: dict[str, Any] | None = Field(
		default=None, description="JSON Schema of the final output."
	)
	max_steps: int | None = Field(default=None, ge=1)
	max_tokens: int | None = Field(default=None, ge=1)
	timeout: float | None = Field(default=None, gt=0, description="Seconds per run.")
	max_cost: float | None = Field(
		default=None, gt=0, allow_inf_nan=False, description="US dollars per run (model calls)."
	)
	human_input: bool = Field(
		default=True,
		description="Let the agent ask on the terminal (non-interactive runs end instead).",
	)
	requires_approval: bool | list[str] | None = Field(
		default=None,
		description="Tool calls that wait for approval: true (all) or rules such as "
		"'stripe:writes', 'github.mergePullRequest', 'slack' (asked on the terminal).",
	)
	taint_policy: str | dict[str, Any] | None = Field(
		default=None,
		description="What a run that read untrusted content may still send out: 'approve' "
		"(default), 'refuse', 'allow', or {onOutbound, onlyTrifecta, untrusted, private, "
		f"outbound, warn}} ({docs_url('guides/safety.md')}).",
	)
	guardrails: list[dict[str, Any]] = Field(
		default_factory=list,
		description="Built-in guardrails: {use: pii_redaction | max_size | json_schema | "
		f"prompt_injection, ...options}} ({docs_url('guides/guardrails.md')}).",
	)
	llm_providers: dict[str, dict[str, Any]] = Field(
		default_factory=dict,
		description="Settings per provider, e.g. {'openai': {'apiKey': '...'}}.",
	)
	mcp_servers: dict[str, dict[str, Any]] = Field(
		default_factory=dict,
		description="MCP servers whose tools the agent uses, in the shape MCP clients use: "
		"{id: {command, args, env, cwd} or {url, headers}} (needs openmolt[mcp]).",
	)
	openapi: dict[str, Annotated[str, Field(min_length=1)] | OpenApiSource] = Field(
		default_factory=dict,
		description="Integrations made from OpenAPI documents, by the id the agent uses: "
		"{id: 'petstore.json'} or {id: {document, tags, operations, baseUrl, allowInternalHosts, "
		"allowHosts, labels}}; the JSON `openmolt import-openapi --format json` writes is "
		f"accepted too ({docs_url('guides/openapi.md')}). Keys: OPENMOLT_<ID>_<KEY> or integrations.",
	)
	durability: str | dict[str, Any] | None = Field(
		default=None,
		description="Make runs durable (needs openmolt[dbos]): a SQLite file, a postgresql:// "
		"URL, or {url, workerId, heartbeat, lapse, filesDir, ...}; --durability overrides it.",
	)
	skills: list[str] = Field(
		default_factory=list,
		description="Skill folders (relative to this file), or names of skills plugins provide.",
	)
	capabilities: list[str | CapabilitySpec] = Field(
		default_factory=list,
		description="Capabilities plugins provide, by name, or {name, options}: behaviour "
		f"attached to the agent's runs ({docs_url('guides/capabilities.md')}).",
	)
	input: Any = Field(default=None, description="The run's input (--input overrides it).")
	schedules: list[ScheduleSpec] = Field(
		default_factory=list, description="Run on these schedules instead of once."
	)
	triggers: Triggers | None = Field(
		default=None,
		description="Webhooks and chat channels that start runs (served by `openmolt serve`).",
	)

	@classmethod
	def model_rebuild(
		cls,
		*,
		force: bool = False,
		raise_errors: bool = True,
		_parent_namespace_depth: int = 2,
		_types_namespace: Any = None,
	) -> bool | None:
		"""Build the model (pydantic's `BaseModel.model_rebuild`), its schedule and trigger types first.

		Pydantic calls it at the model's first use (a validation, a JSON Schema), so every use
		finds them (`_rare_types`); `_WithoutRare`, which does not name them, does not import
		them.

		Args:
			force: Rebuild even if the model is complete.
			raise_errors: Raise if a type cannot be resolved.
			_parent_namespace_depth: Pydantic's: the caller's frame (this method's is counted).
			_types_namespace: Pydantic's: names to resolve the annotations with.
		"""
		if cls is not _WithoutRare:
			_rare_types()
		return super().model_rebuild(
			force=force,
			raise_errors=raise_errors,
			_parent_namespace_depth=_parent_namespace_depth + 1,
			_types_namespace=_types_namespace,
		)

	@classmethod
	def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
		"""The model's schema as another model's field or a TypeAdapter's type (pydantic's hook).

		Its schedule and trigger types imported first (`_rare_types`): pydantic builds such a
		schema from the fields' annotations, and does not call `model_rebuild` for it.

		Args:
			source: Pydantic's: the type asked for.
			handler: Pydantic's: the schema builder.
		"""
		if cls.__name__ != "_WithoutRare":
			_rare_types()
		return handler(source)

	def __init_subclass__(cls, **kwargs: Any) -> None:
		"""A subclass that keeps ``schedules`` or ``triggers`` (a program's own agent-file model).

		`AgentFile` is built first (`model_rebuild`), so the subclass inherits the fields with
		their types resolved: resolved in the subclass's module, they are unknown there.
		`_WithoutRare` gives both fields another type: it imports neither.

		Args:
			kwargs: Pydantic's class arguments.
		"""
		own = inspect.get_annotations(cls)
		if not ("schedules" in own and "triggers" in own):
			AgentFile.model_rebuild()
		super().__init_subclass__(**kwargs)

	@field_validator("model")
	@classmethod
	def _models(cls, value: str | list[str]) -> str | list[str]:
		if isinstance(value, list) and not value:
			raise ValueError("give at least one model id ('provider:model')")
		return value

	@property
	def models(self) -> list[str]:
		"""The model then its fallbacks, whichever way the file wrote them."""
		first = [self.model] if isinstance(self.model, str) else list(self.model)
		return [*first, *self.fallback_models]

	@field_validator("output_schema")
	@classmethod
	def _valid_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
		from openmolt_core._support.metaschema import check_schema

		if value is not None and (problems := check_schema(value)):
			raise ValueError("not a valid JSON Schema: " + "; ".join(problems))
		return value


_RARE = ("config", "openapi", "schedules", "triggers")
"""`AgentFile`'s fields whose models cost most to build (of the model's 12 ms of CPU in a fresh
process: the triggers about 4, the OpenAPI sources 2.4, the agent config 1.2, the schedules 1.1)
and that most files leave out."""


class _WithoutRare(AgentFile):
	# `AgentFile` for a file that gives none of `_RARE`: the same fields, validators and config,
	# and so the same errors, but those four take anything, so that their models are not built.
	# Never an instance anyone sees: `validate` makes an `AgentFile` of what it validated.
	config: Any = None
	openapi: Any = None
	schedules: Any = None
	triggers: Any = None


def validate(data: dict[str, Any]) -> AgentFile:
	"""``AgentFile.model_validate(data, strict=True)``, without building the rarely used models.

	A file that gives none of `_RARE` (in any spelling the model accepts, or any key that
	normalizes like one) is validated by a model without theirs, which accepts and refuses the
	same, in the same words; the `AgentFile` made of its values has the rare fields' defaults, as
	validation gives them (`tests/cli/test_cli_agentfile_rare.py` holds the two ways equal).

	Args:
		data: The agent file's JSON object.

	Raises:
		ValidationError: As `AgentFile.model_validate` raises it.
	"""
	if any(_norm(key) in _rare_spellings() for key in data):
		return AgentFile.model_validate(data, strict=True)
	common = _WithoutRare.model_validate(data, strict=True)
	given = common.model_fields_set
	return AgentFile.model_construct(given, **{name: getattr(common, name) for name in given})


def _rare_spellings() -> set[object]:
	"""Every spelling of `_RARE` the model accepts (name, alias, validation aliases), normalized."""
	spellings: set[object] = set()
	for name in _RARE:
		field = AgentFile.model_fields[name]
		spellings.update(_norm(n) for n in (name, field.alias) if n)
		choices = field.validation_alias
		for choice in getattr(choices, "choices", [choices]):
			if isinstance(choice, str):
				spellings.add(_norm(choice))
	return spellings


# positions in the JSON text ---------------------------------------------------------------

_SCALAR = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?|true|false|null")


def _norm(key: object) -> object:
	return key.replace("_", "").lower() if isinstance(key, str) else key


def _positions(text: str) -> dict[tuple[Any, ...], int]:
	"""Map each path in a valid JSON text (keys normalized) to the line where it starts."""
	starts = [0] + [m.end() for m in re.finditer("\n", text)]
	out: dict[tuple[Any, ...], int] = {}

	def line(i: int) -> int:
		return bisect_right(starts, i)

	def ws(i: int) -> int:
		while i < len(text) and text[i] in " \t\r\n":
			i += 1
		return i

	def value(i: int, path: tuple[Any, ...]) -> int:
		i = ws(i)
		out.setdefault(path, line(i))
		char = text[i]
		if char in "{[":
			close = "}" if char == "{" else "]"
			i, index = ws(i + 1), 0
			while text[i] != close:
				if char == "{":
					key, j = scanstring(text, i + 1)
					child = (*path, _norm(key))
					out.setdefault(child, line(i))
					i = value(ws(j) + 1, child)
				else:
					i = value(i, (*path, index))
					index += 1
				i = ws(i)
				if text[i] == ",":
					i = ws(i + 1)
			return i + 1
		if char == '"':
			end: int = scanstring(text, i + 1)[1]
			return end
		match = _SCALAR.match(text, i)
		return match.end() if match else i + 1

	value(0, ())
	return out


# validation errors ------------------------------------------------------------------------


def _data_path(data: Any, loc: tuple[Any, ...], missing: bool) -> tuple[list[Any], list[Any]]:
	# Follow the error's loc through the data, dropping union tags pydantic inserts; returns
	# the user's own keys and the matching normalized path. A tagged union's tag (a schedule's
	# 'cron') is dropped even when the user's dict has a key of that name.
	raw: list[Any] = []
	norm: list[Any] = []
	annotations: list[Any] = [AgentFile]
	for n, element in enumerate(loc):
		members = _tagged(annotations)
		if isinstance(element, str) and element in members:
			annotations = [members[element]]
			continue
		children = [c for a in annotations for c in _children(a, element)]
		annotations = children or annotations  # a plain union's tag ('str') keeps the place
		if isinstance(data, dict) and isinstance(element, str):
			match = next((k for k in data if _norm(k) == _norm(element)), None)
			if match is not None:
				raw.append(match)
				norm.append(_norm(match))
				data = data[match]
			elif missing and n == len(loc) - 1:
				raw.append(element)
				norm.append(_norm(element))
		elif isinstance(data, list) and isinstance(element, int) and element < len(data):
			raw.append(element)
			norm.append(element)
			data = data[element]
	return raw, norm


def _tagged(annotations: list[Any]) -> dict[str, Any]:
	"""The members of a tagged union among ``annotations`` (``Field(discriminator=...)``), by tag.

	The tag key is ``members[""]`` when there is one (a schedule's ``"type"``).
	"""
	members: dict[str, Any] = {}
	for annotation in annotations:
		if get_origin(annotation) is not Annotated:
			continue
		inner, *extras = get_args(annotation)
		key = next((e.discriminator for e in extras if isinstance(e, FieldInfo)), None)
		if not isinstance(key, str):
			continue
		for model in _models(inner):
			field = model.model_fields.get(key)
			for tag in get_args(field.annotation) if field is not None else ():
				members[str(tag)] = model
		members[""] = key
	return members


def _children(annotation: Any, key: Any) -> list[Any]:
	origin = get_origin(annotation)
	if origin is Annotated:
		return _children(get_args(annotation)[0], key)
	if origin in (Union, types.UnionType):
		return [c for arg in get_args(annotation) for c in _children(arg, key)]
	if isinstance(annotation, type) and issubclass(annotation, BaseModel) and isinstance(key, str):
		for name, field in annotation.model_fields.items():
			if _norm(key) in {_norm(name), _norm(field.alias or "")}:
				return [field.annotation]
		return []
	if origin is list and isinstance(key, int):
		return [get_args(annotation)[0]]
	if origin is dict and isinstance(key, str):
		return [get_args(annotation)[1]]
	return []


def _models(annotation: Any) -> list[type[BaseModel]]:
	origin = get_origin(annotation)
	if origin is Annotated:
		return _models(get_args(annotation)[0])
	if origin in (Union, types.UnionType):
		return [m for arg in get_args(annotation) for m in _models(arg)]
	if isinstance(annotation, type) and issubclass(annotation, BaseModel):
		return [annotation]
	return []


def _known_keys(path: list[Any], data: Any) -> list[str]:
	annotations: list[Any] = [AgentFile]
	for key in path:
		annotations = [c for a in annotations for c in _children(a, key)]
		data = data[key] if isinstance(data, dict | list) else None
		members = _tagged(annotations)
		tag = data.get(members.get("", "")) if isinstance(data, dict) else None
		if isinstance(tag, str) and tag and tag in members:  # a schedule's keys are its type's
			annotations = [members[tag]]
	keys: list[str] = []
	for model in (m for a in annotations for m in _models(a)):
		for name, field in model.model_fields.items():
			# An alias that is the name in other capitals (``a2A`` for ``a2a``) is no spelling
			# the docs use: the name stands for both.
			alias = field.alias if (field.alias or "").lower() != name.lower() else None
			for k in (alias, name):
				if k and k not in keys and not k.endswith("_") and k != "model_settings":
					keys.append(k)
	return keys


def _suggest(key: Any, known: list[str]) -> str | None:
	import difflib  # a mistyped key's hint only

	close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
	if close:
		return close[0]
	lowered = {k.lower().replace("_", ""): k for k in known}
	close = difflib.get_close_matches(str(_norm(key)), list(lowered), n=1)
	return lowered[close[0]] if close else None


def _nested_setting(key: Any) -> str | None:
	"""Where a top-level key that is a nested setting goes: ``"modelConfig": {"temperature": ...}``.

	A model setting (``temperature``, ``maxOutputTokens``) or an instance setting
	(``maxReplyChars``) written at the top of a file; None for any other key. Its spelling there
	is the camelCase one, whichever the file used.
	"""
	for container, kind, model in (
		("modelConfig", "a model setting", ModelConfig),
		("config", "an instance setting", AgentConfig),
	):
		for name, field in model.model_fields.items():
			if _norm(key) in (_norm(name), _norm(field.alias or name)):
				return f'{kind}: put it in "{container}": {{"{field.alias or name}": ...}}'
	return None


def _channels() -> list[type[BaseModel]]:
	"""The models of the chat channels ``triggers.channels`` takes, one per ``type``."""
	from openmolt_core.triggers import Triggers

	annotation = get_args(Triggers.model_fields["channels"].annotation)[0]
	return _models(annotation)


def _channel(raw: list[Any]) -> str | None:
	"""Where ``"triggers": {"telegram": ...}`` goes: a chat channel is an entry of ``channels``.

	None for any other key.
	"""
	if len(raw) != 2 or raw[0] != "triggers" or not isinstance(raw[1], str):
		return None
	kinds = [str(get_args(m.model_fields["type"].annotation)[0]) for m in _channels()]
	if raw[1].lower() not in kinds:
		return None
	return f'a chat channel: put it in "channels": [{{"type": "{raw[1].lower()}", ...}}]'


def _dotted(raw: list[Any]) -> str:
	return "".join(
		f"[{k}]" if isinstance(k, int) else (f".{k}" if i else str(k)) for i, k in enumerate(raw)
	)


def _expected_tags(data: Any, raw: Sequence[Any], loc: Sequence[Any], key: str) -> str:
	"""The values ``key`` may take at ``raw`` (asked of the model with a value it refuses)."""
	probe = copy.deepcopy(data)
	node = probe
	for part in raw:
		node = node[part]
	if not isinstance(node, dict):
		return ""
	node[key] = "\x00"
	try:
		AgentFile.model_validate(probe, strict=True)
	except ValidationError as exc:
		for error in exc.errors():
			if tuple(error["loc"]) == tuple(loc) and error["type"] == "union_tag_invalid":
				return str(error["ctx"]["expected_tags"])
	return ""


def _format_errors(exc: ValidationError, data: Any, text: str, file: str) -> str:
	# The walks below read `AgentFile`'s fields' types: resolved, even when `_WithoutRare` refused.
	AgentFile.model_rebuild()
	lines = _positions(text)

	def where(norm: list[Any]) -> int:
		for cut in range(len(norm), -1, -1):
			if tuple(norm[:cut]) in lines:
				return lines[tuple(norm[:cut])]
		return 1

	found = []
	for error in exc.errors():
		raw, norm = _data_path(data, tuple(error["loc"]), error["type"] == "missing")
		found.append((error, raw, norm))
	suggested: set[tuple[Any, ...]] = set()
	problems: list[tuple[int, str]] = []
	for error, raw, norm in found:
		if error["type"] == "extra_forbidden":
			nested = _nested_setting(raw[-1]) if len(raw) == 1 else _channel(raw)
			if nested is not None:  # not a typo of a top-level key (maxOutputTokens: maxTokens)
				problems.append((where(norm), f"{_dotted(raw)!r} is {nested}"))
				continue
			known = _known_keys(raw[:-1], data)
			close = _suggest(raw[-1], known)
			if close:
				suggested.add((*norm[:-1], _norm(close)))
			listed: dict[object, str] = {}
			for k in known:  # once each, as the docs spell it (missedRuns, not also missed_runs)
				listed.setdefault(_norm(k), k)
			shown = ", ".join(listed.values())
			hint = f"; did you mean {close!r}?" if close else f"; known keys: {shown}"
			problems.append((where(norm), f"unknown key {_dotted(raw)!r}{hint}"))
	for error, raw, norm in found:
		kind = error["type"]
		if kind == "extra_forbidden":
			continue
		# A union gives one error per alternative: keep the deepest ones only.
		if any(len(o) > len(norm) and o[: len(norm)] == norm for _, _, o in found):
			continue
		if kind == "missing":
			if tuple(norm) in suggested:
				continue  # already reported as a misspelled key
			parent = _dotted(raw[:-1])
			inside = f" in {parent!r}" if parent else ""
			problems.append((where(norm[:-1]), f"missing required key {raw[-1]!r}{inside}"))
			continue
		if kind in ("union_tag_not_found", "union_tag_invalid"):  # a schedule's "type"...
			key = str(error["ctx"]["discriminator"]).strip("'")
			tags = error["ctx"].get("expected_tags") or _expected_tags(data, raw, error["loc"], key)
			given = error["ctx"].get("tag")
			what = f"{key!r} is {given!r}, not" if given else f"missing key {key!r},"
			choices = f"{what} one of {tags}" if tags else what.rstrip(",")
			problems.append((where(norm), f"{_dotted(raw) or 'the file'}: {choices}"))
			continue
		if kind == "value_error":  # our own validators say what was wrong
			message = error["msg"].removeprefix("Value error, ")
			problems.append((where(norm), f"{_dotted(raw) or 'the file'}: {message}"))
			continue
		got = error.get("input")
		if secret_place(raw) and isinstance(got, str | list | dict):
			# Under a credential, a token, a header: a secret whatever its length.
			shown = f"text of {len(got)} characters" if isinstance(got, str) else type(got).__name__
		elif isinstance(got, str) and len(got) > SHOWN_TEXT:
			shown = f"text of {len(got)} characters"  # a key in the wrong place: not repeated
		elif secret_place(raw):
			shown = type(got).__name__
		elif isinstance(got, str | int | float | bool) or got is None:
			shown = json.dumps(got, ensure_ascii=False)
		else:
			shown = type(got).__name__
		if len(shown) > 60:
			shown = shown[:57] + "..."
		problems.append(
			(where(norm), f"{_dotted(raw) or 'the file'}: {error['msg']} (got {shown})")
		)
	unique = _one_per_union(sorted(set(problems)))
	return "\n".join(f"{file}:{line}: {message}" for line, message in unique)


_VALID = re.compile(r"^(?P<key>.+): Input should be a valid (?P<kind>[^()]+?) \(got (?P<got>.+)\)$")
_GOT = re.compile(r"^(?P<key>.+?): .+ \(got (?P<got>.+)\)$")


def _one_per_union(problems: list[tuple[int, str]]) -> list[tuple[int, str]]:
	"""One line for a key whose union's members each refused its type (``a valid list or dict``).

	When a member took the value's type but refused the value itself (``"document": ""``: at
	least 1 character), that is the line: the other members' "should be a valid ..." are noise.
	"""
	refused = {
		(line, m["key"], m["got"])
		for line, message in problems
		if _VALID.match(message) is None and (m := _GOT.match(message)) is not None
	}
	kinds: dict[tuple[int, str, str], list[str]] = {}
	out: list[tuple[int, str]] = []
	for line, message in problems:
		match = _VALID.match(message)
		if match is None:
			out.append((line, message))
			continue
		key = (line, match["key"], match["got"])
		if key in refused:
			continue
		if key not in kinds:
			kinds[key] = []
			out.append((line, ""))  # its place, filled below
		kinds[key].append(match["kind"])
	merged = iter(
		f"{key}: Input should be a valid {' or a valid '.join(sorted(found))} (got {got})"
		for (_, key, got), found in kinds.items()
	)
	return [(line, message or next(merged)) for line, message in out]


def _unreadable(path: Path, exc: OSError) -> str:
	"""Why an agent file cannot be read: its reason, a near name when it is missing."""
	near = near_file(str(path)) if isinstance(exc, FileNotFoundError) else None
	hint = f"; did you mean {near!r}?" if near else ""
	return f"{path}: cannot read the agent file: {exc.strerror or exc}{hint}"


def _refuse_constant(name: str, text: str) -> Any:
	# Python's json accepts NaN and Infinity; JSON does not, and neither do the agent-file keys.
	raise json.JSONDecodeError(
		f"{name} is not valid JSON; write a number or a string", text, max(text.find(name), 0)
	)


def _refuse_tainted(path: Path) -> None:
	"""Refuse an agent file a tainted run wrote through the FileSystem integration."""
	from openmolt_core.integrations._taintmarks import refuse_tainted

	try:
		refuse_tainted(path, "the agent file")
	except ConfigurationError as exc:
		raise AgentFileError(str(exc)) from None


def load_json_file(path: Path) -> AgentFile:
	"""Read and validate a JSON agent file.

	Raises:
		AgentFileError: The file cannot be read, is not JSON, or has unknown or wrong keys.
	"""
	from openmolt_core._support.paths import read_text

	_refuse_tainted(path)
	try:  # a BOM, as Notepad saves
		text = read_text(path, limit=MAX_AGENT_FILE_BYTES, encoding="utf-8-sig")
	except OSError as exc:
		raise AgentFileError(_unreadable(path, exc)) from None
	except UnicodeDecodeError as exc:
		from openmolt_core._support.textfile import not_utf8

		raise AgentFileError(not_utf8(str(path), exc)) from None
	try:
		data = json.loads(text, parse_constant=lambda name: _refuse_constant(name, text))
	except json.JSONDecodeError as exc:
		raise AgentFileError(
			f"{path}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})"
		) from exc
	if not isinstance(data, dict):
		raise AgentFileError(
			f"{path}:1: an agent file holds one JSON object, not {type(data).__name__}"
		)
	_refuse_unread_variables(data, text, path)
	try:
		# Strict: JSON has its own types, so "yes" is no boolean and "10" no number.
		return validate(data)
	except ValidationError as exc:
		raise AgentFileError(_format_errors(exc, data, text, str(path))) from exc


_VARIABLE = re.compile(r"\$(?:\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}|[A-Z][A-Z0-9_]+)")
"""A whole value that names an environment variable: ``${OPENAI_KEY}``, ``$OPENAI_KEY`` (a
secret that starts with ``$`` and a lower-case letter or digit, ``$ecret1``, is no name)."""


def _refuse_unread_variables(data: dict[str, Any], text: str, path: Path) -> None:
	"""``"apiKey": "${MY_KEY}"`` in llmProviders or integrations, which read no variables.

	Only ``mcpServers`` expands ``${VAR}``; anywhere else the text would be sent as the key. The
	command reads each key from its own variable (``OPENMOLT_OPENAI_API_KEY``) instead.

	Raises:
		AgentFileError: Such a value, with its line and the variable that is read.
	"""
	from openmolt_core._envvars import env_var

	for key, section in data.items():
		if _norm(key) not in ("llmproviders", "integrations"):
			continue
		for where, value in _strings(section, (key,)):
			if not _VARIABLE.fullmatch(value.strip()):
				continue
			owner: Any = where[1]
			if isinstance(owner, int):  # the list form: {"integration": id, "credential": ...}
				entry = section[owner] if isinstance(section, list) else None
				owner = entry.get("integration") if isinstance(entry, dict) else None
			field = where[-1]
			read = (
				f"set {env_var(owner, field)} (in the environment or a .env file) and leave the "
				"key out"
				if isinstance(owner, str) and isinstance(field, str)
				else "give the value itself"
			)
			line = _positions(text).get(tuple(_norm(w) for w in where))
			dotted = ".".join(f"[{w}]" if isinstance(w, int) else w for w in where).replace(
				".[", "["
			)
			raise AgentFileError(
				f"{path}:{line or 1}: {dotted}: {value!r} would be sent as it is written: only "
				f"mcpServers reads ${{VAR}}; {read}"
			)


def _strings(value: Any, where: tuple[Any, ...]) -> list[tuple[tuple[Any, ...], str]]:
	"""Every string inside ``value``, with its path."""
	if isinstance(value, str):
		return [(where, value)]
	if isinstance(value, dict):
		return [found for k, v in value.items() for found in _strings(v, (*where, k))]
	if isinstance(value, list):
		return [found for i, v in enumerate(value) for found in _strings(v, (*where, i))]
	return []


# Python files -----------------------------------------------------------------------------


def _located(path: Path, exc: BaseException) -> str:
	"""``file:line: Error: message``, the line being the file's last frame in the traceback."""
	line = next(
		(
			f.lineno
			for f in reversed(traceback.extract_tb(exc.__traceback__))
			if Path(f.filename) == path.resolve() or f.filename == str(path)
		),
		None,
	)
	where = f"{path}:{line}" if line else str(path)
	if isinstance(exc, ConfigurationError | PluginError):
		return f"{where}: {exc}"
	return f"{where}: {type(exc).__name__}: {exc}{_argument_hint(exc)}"


_UNEXPECTED = re.compile(r"^(\w+)\.(\w+)\(\) got an unexpected keyword argument '(\w+)'$")


def _argument_hint(exc: BaseException) -> str:
	"""``; did you mean 'max_steps'?`` for an argument OpenMolt's API does not take (``maxSteps``)."""
	import inspect

	from openmolt_core.agent import Agent
	from openmolt_core.openmolt import OpenMolt

	found = _UNEXPECTED.match(str(exc)) if isinstance(exc, TypeError) else None
	owner = {"OpenMolt": OpenMolt, "Agent": Agent}.get(found.group(1)) if found else None
	method = getattr(owner, found.group(2), None) if found and owner else None
	if found is None or method is None:
		return ""
	given = found.group(3)
	known = [p for p in inspect.signature(method).parameters if p not in ("self", "args", "kwargs")]
	snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", given).lower()  # an agent file's maxSteps
	close = snake if snake in known else _suggest(given, known)
	return f"; did you mean {close!r}?" if close else ""


def call_factory(factory: Any, om: Any, path: Path) -> Any:
	"""Call an agent file's ``agent(om)`` factory; an error names the file and its line.

	Raises:
		AgentFileError: The factory raised.
	"""
	try:
		return factory(om)
	except Exception as exc:
		raise AgentFileError(_located(path, exc)) from exc


class PythonAgent:
	"""What a Python agent file defines: its ``agent`` (or factory), ``input``, ``schedules``, ``triggers``.

	``agents`` holds the file's ``agents`` list, or ``[agent]``; ``triggers`` maps agent names to
	their triggers when the file defines ``agents`` (else it is the one agent's).
	"""

	def __init__(
		self,
		agent: Any,
		input: Any,
		schedules: list[Any],
		agents: list[Any] | None = None,
		triggers: Triggers | dict[str, Triggers] | None = None,
	) -> None:
		self.agent = agent
		self.input = input
		self.schedules = schedules
		self.agents = agents if agents is not None else [agent]
		self.triggers = triggers


def load_python_file(path: Path) -> PythonAgent:
	"""Import a Python agent file and read its ``agent``, ``input`` and ``schedules``.

	Raises:
		AgentFileError: The file cannot be imported or defines no ``agent``.
	"""
	if not path.exists():
		raise AgentFileError(no_such_file(str(path)))
	from openmolt_core._support.paths import read_file

	_refuse_tainted(path)
	try:
		source = read_file(path, limit=MAX_AGENT_FILE_BYTES)
	except OSError as exc:
		raise AgentFileError(_unreadable(path, exc)) from None
	name = "openmolt_agentfile_" + re.sub(r"\W", "_", path.stem)
	spec = source_spec(name, path, source)
	if spec is None or spec.loader is None:
		raise AgentFileError(f"{path}: cannot be imported as Python")
	module = importlib.util.module_from_spec(spec)
	sys.modules[name] = module
	sys.path.insert(0, str(path.parent.resolve()))
	try:
		spec.loader.exec_module(module)
	except Exception as exc:
		raise AgentFileError(_located(path, exc)) from exc
	several = getattr(module, "agents", None)
	if several is not None and not isinstance(several, list | tuple):
		raise AgentFileError(f"{path}: 'agents' must be a list of agents")
	if not hasattr(module, "agent") and not several:
		raise AgentFileError(
			f"{path}: defines no 'agent'; add `agent = om.create_agent(...)` or "
			"`def agent(om): return om.create_agent(...)`"
		)
	schedules = getattr(module, "schedules", [])
	if not isinstance(schedules, list | tuple):
		raise AgentFileError(f"{path}: 'schedules' must be a list of schedule dicts")
	agent = getattr(module, "agent", None)
	agents = list(several) if several else None
	triggers = _python_triggers(path, getattr(module, "triggers", None), by_name=bool(several))
	return PythonAgent(agent, getattr(module, "input", None), list(schedules), agents, triggers)


def source_spec(name: str, path: Path, source: bytes) -> ModuleSpec | None:
	"""The spec that imports a Python file from its ``source``, read already (`read_file`).

	Python's own loader would read the file again, without the checks: a file swapped for a
	named pipe in between would block the import. Its compiled cache is used as an import uses it.

	Args:
		name: The module's name.
		path: The file.
		source: Its bytes.
	"""
	from importlib.machinery import SourceFileLoader

	class _Read(SourceFileLoader):
		def get_data(self, path: str) -> bytes:
			return source if path == self.path else super().get_data(path)

	return importlib.util.spec_from_file_location(name, path, loader=_Read(name, str(path)))


def _python_triggers(
	path: Path, raw: Any, *, by_name: bool
) -> Triggers | dict[str, Triggers] | None:
	from openmolt_core.triggers import Triggers

	if raw is None or isinstance(raw, Triggers):
		return raw
	try:
		if by_name:
			if not isinstance(raw, dict):
				raise AgentFileError(f"{path}: triggers: map each agent's name to its triggers")
			return {str(k): Triggers.model_validate(v) for k, v in raw.items()}
		return Triggers.model_validate(raw)
	except ValidationError as exc:
		problems = "; ".join(
			f"triggers.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
		)
		raise AgentFileError(f"{path}: {problems}") from None
