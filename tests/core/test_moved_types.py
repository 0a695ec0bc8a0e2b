"""Types moved down to the layer that uses them stay importable from their old modules.

Each move removed an upward import from the kernel or the contract (importlinter.toml); the old
name is the same object, so code that imported it from its old home keeps working.
"""

from __future__ import annotations

from typing import Any, get_args

import pytest

from openmolt_core.tools import ToolContext


def test_structured_mode_is_the_contracts() -> None:
	"""`StructuredMode` is part of the model contract (`ModelRequest.response_mode`)."""
	from openmolt_core import llm, structured

	assert structured.StructuredMode is llm.StructuredMode
	assert get_args(llm.StructuredMode) == ("strict", "partial", "off")
	assert "StructuredMode" in structured.__all__ and "StructuredMode" in llm.__all__


def test_the_run_record_is_the_schedules() -> None:
	"""`RunRecord` (what ``schedule:*`` events carry) lives with the schedules' history; old homes re-export it."""
	from openmolt_core import _history, result, scheduler

	assert _history.RunRecord is result.RunRecord is scheduler.RunRecord
	assert _history.RecordStatus is result.RecordStatus is scheduler.RecordStatus
	assert set(get_args(result.RunStatus)) < set(get_args(result.RecordStatus))


def test_model_fallback_is_a_capability_and_the_models_are_the_kernels() -> None:
	"""The kernel keeps a slot per model (`_chain`); trying the next model is the fallback
	capability's (`capabilities.fallback`). `fallback` re-exports both, `_chain` its old names."""
	from openmolt_core import _chain, fallback
	from openmolt_core.capabilities import fallback as capability

	moved = {
		"ChainProvider",
		"FallbackReason",
		"ModelChain",
		"ModelFallback",
		"ModelFallbackEvent",
		"fallback_reason",
	}
	for name in moved:
		assert getattr(fallback, name) is getattr(capability, name), name
	for name in ("ModelSlot", "record", "slot_id"):
		assert getattr(fallback, name) is getattr(_chain, name), name
	for name in set(fallback.__all__) - {"ModelFallback"}:  # what lived in _chain still imports
		assert getattr(_chain, name) is getattr(fallback, name), name
	assert not {"ModelChain", "fallback_reason", "ChainProvider"} & set(_chain.__all__)
	assert issubclass(fallback.ModelChain, _chain.AgentModels)
	assert fallback.fallback_reason(TimeoutError()) == "timeout"


def test_the_schema_dialect_lives_with_the_fitter() -> None:
	"""`SchemaDialect` is described beside the fitter that reads it; structured re-exports it."""
	from openmolt_core import _fit, structured

	assert structured.SchemaDialect is _fit.SchemaDialect
	assert "SchemaDialect" in structured.__all__
	assert structured.SchemaDialect(name="x", max_size=10).violations({"type": "string"}) == (
		"17 bytes (the x limit is 10)",  # {"type":"string"}
	)


def test_the_registrars_are_part_of_the_hook_contract() -> None:
	"""What each hook is handed is specified with the hooks; plugins re-exports it."""
	import openmolt_core
	from openmolt_core import _markers, hookspecs, plugins

	for name in (
		"CapabilityFactory",
		"CapabilityRegistrar",
		"CommandRegistrar",
		"IntegrationRegistrar",
		"ProviderFactory",
		"ProviderRegistrar",
		"SkillRegistrar",
	):
		assert getattr(plugins, name) is getattr(hookspecs, name), name
		assert name in plugins.__all__ and name in hookspecs.__all__
	assert openmolt_core.hookimpl is hookspecs.hookimpl is _markers.hookimpl
	assert hookspecs.hookspec is _markers.hookspec


def test_streaming_is_a_capability_and_keeps_its_old_paths() -> None:
	"""The live reply and its decoder live with the streaming capability; the old paths re-export them."""
	from openmolt_core import _livereply, _replystream, capabilities, hooks
	from openmolt_core.capabilities import _replydecoder, streaming

	assert set(_replystream.__all__) == set(_replydecoder.__all__)
	for name in _replydecoder.__all__:
		assert getattr(_replystream, name) is getattr(_replydecoder, name), name
	assert set(_livereply.__all__) == set(streaming.__all__)
	assert {"Send", "Streaming", "sender"} <= set(streaming.__all__)
	for name in streaming.__all__:
		assert getattr(_livereply, name) is getattr(streaming, name), name
	assert streaming.Streaming is capabilities.Streaming
	assert streaming.Send is hooks.ModelSend


def test_the_logging_filter_and_the_redactors_live_with_the_secrets() -> None:
	"""The logging filter and the redactors are the secrets module's; _redact re-exports them."""
	from openmolt_core import _redact, secrets
	from openmolt_core._support import masking

	for name in (
		"LOGGERS",
		"MASK",
		"RedactingFilter",
		"Redactor",
		"install_log_redaction",
		"redact_handler",
		"redactor_for",
	):
		assert getattr(_redact, name) is getattr(secrets, name), name
		assert name in _redact.__all__
	for name in (
		"LOGGERS",
		"MASK",
		"RedactingFilter",
		"StreamMask",
		"held_back",
		"install_log_redaction",
		"mask",
		"redact_handler",
		"spellings",
	):
		assert getattr(secrets, name) is getattr(masking, name), name
		assert name in secrets.__all__


def test_a_secret_set_alone_masks_the_logs() -> None:
	"""A secret added to a set is masked in the logs with no redactor ever loaded."""
	import subprocess
	import sys

	code = """
import io, logging, sys
from openmolt_core.secrets import SecretSet
kept = SecretSet()
kept.add("sk-canary-0123456789")
out = io.StringIO()
logging.getLogger("httpx").addHandler(logging.StreamHandler(out))
logging.getLogger("httpx").warning("GET https://x/?key=sk-canary-0123456789")
assert "openmolt_core._redact" not in sys.modules
print(out.getvalue().strip())
"""
	done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
	assert done.stdout.strip() == "GET https://x/?key=[redacted]"


def test_the_support_libraries_keep_their_old_paths() -> None:
	"""The libraries with no agent concept moved to `openmolt_core._support`; old paths re-export them."""
	from openmolt_core import (
		_fit,
		_jsonsafe,
		_jsonschema,
		_lazy,
		_private,
		_repair,
		_schemacheck,
		_suggest,
		_support,
		_sync,
		structured,
	)
	from openmolt_core._support import (
		jsonsafe,
		jsonschema,
		metaschema,
		private,
		schemafit,
		suggest,
		sync,
	)

	assert _jsonschema.JsonSchemaValidator is jsonschema.JsonSchemaValidator
	assert _jsonschema.format_errors is jsonschema.format_errors
	assert _schemacheck.check_schema is metaschema.check_schema
	assert _fit.Fitter is schemafit.Fitter and _fit.measure is schemafit.measure
	assert _repair.Decode is schemafit.Decode and _repair.ObjectRepair is schemafit.ObjectRepair
	assert structured.SchemaDialect is schemafit.SchemaDialect
	assert "SchemaDialect" in structured.__all__
	assert _jsonsafe.loads is jsonsafe.loads and _jsonsafe.UnsafeJson is jsonsafe.UnsafeJson
	assert _sync.call is sync.call and _sync.cancelled is sync.cancelled
	assert _lazy.lazy_exports is _support.lazy_exports and _lazy.loaded is _support.loaded
	assert _suggest.suggestion is suggest.suggestion
	assert _private.private_file is private.private_file and _private.FILE_MODE == 0o600
	for old, new in [
		(_jsonschema, jsonschema),
		(_schemacheck, metaschema),
		(_jsonsafe, jsonsafe),
		(_sync, sync),
		(_lazy, _support),
		(_suggest, suggest),
		(_private, private),
	]:
		assert old.__all__ == new.__all__


def test_feature_events_live_beside_their_features() -> None:
	"""A feature's event class moved to its feature; ``openmolt_core.events`` re-exports it."""
	from openmolt_core import _chain, accounts, approvals, compaction, events, fallback, scheduler
	from openmolt_core.capabilities import _safety_events, safety
	from openmolt_core.capabilities import fallback as model_fallback

	homes = {
		"ApprovalRequestEvent": approvals,
		"ApprovalDecisionEvent": approvals,
		"AuthorizationRequestEvent": accounts,
		"CompactionEvent": compaction,
		"GuardrailEvent": _safety_events,  # beside the capability, which every agent loads
		"TaintEvent": _safety_events,
		"ModelFallbackEvent": model_fallback,  # beside the capability that emits it
		"ScheduleEvent": scheduler,
	}
	for name, home in homes.items():
		cls = getattr(events, name)
		assert cls is getattr(home, name) and issubclass(cls, events.Event), name
		assert cls.__module__ == home.__name__ and name in home.__all__, name
		assert name in dir(events)
		assert cls(agent="A", step=1, **_required(cls)).name in events.EVENT_NAMES
	assert _chain.ModelFallbackEvent is events.ModelFallbackEvent  # its old homes
	assert fallback.ModelFallbackEvent is events.ModelFallbackEvent
	assert safety.GuardrailEvent is events.GuardrailEvent and safety.TaintEvent is events.TaintEvent


def _required(cls: type) -> dict[str, object]:
	import dataclasses

	return {
		f.name: None
		for f in dataclasses.fields(cls)
		if f.default is dataclasses.MISSING and f.name not in ("agent", "step")
	}


def test_an_agent_without_the_feature_accepts_its_event_names() -> None:
	"""``agent.on`` takes every event name, whether or not the agent has the feature."""
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, finish

	agent = OpenMolt(entry_points=False).create_agent(name="A", model=ScriptedModel([finish("x")]))
	for name in ("approval:request", "guardrail", "taint", "compaction", "schedule:run"):
		agent.on(name, lambda event: None)


def test_finding_the_durability_backend_is_the_assembly_s() -> None:
	"""`load_backend` moved to `openmolt_core._durable` (L2); the kernel's module re-exports it."""
	from openmolt_core import _durable, durability

	assert durability.load_backend is _durable.load_backend
	assert "load_backend" in dir(durability)


def test_the_option_models_live_with_their_readers() -> None:
	"""`options` keeps the memory options the loop reads; the others moved to their readers.

	``create_agent``'s config and integration entries are the assembly's (`agentconfig`, L2), the
	engine's keys of an integration config the HTTP engine's; their old names are the same objects.
	"""
	from openmolt_core import agentconfig, options
	from openmolt_core.integrations import config

	for name in ("AgentConfig", "IntegrationCredential", "IntegrationEntry"):
		assert getattr(options, name) is getattr(agentconfig, name), name
		assert name in dir(options) and name not in options.__all__
	assert options.EngineConfig is config.EngineConfig
	assert options.EngineConfig.of({"allowInternalHosts": ["db"]}).allow_internal_hosts == ["db"]
	assert {"AgentMemory", "MemoryPart", "parse_options"} <= set(options.__all__)


def test_the_retry_policy_is_the_http_layer_s() -> None:
	"""The kernel names a tool's retry policy by its contract (`tools.Retries`); `retry` is L2's."""
	import tomllib
	from pathlib import Path

	from openmolt_core import RetryPolicy, retry, tools

	policy: tools.Retries = RetryPolicy(attempts=2)
	assert RetryPolicy is retry.RetryPolicy
	assert "Retries" in tools.__all__ and hasattr(policy, "retrying")
	config = tomllib.loads(Path(__file__).parents[2].joinpath("importlinter.toml").read_text())
	contract, kernel = config["tool"]["importlinter"]["contracts"][0]["layers"][-2:-4:-1]
	assert "retry" not in contract.replace(" ", "").split(":") + kernel.replace(" ", "").split(":")


@pytest.mark.anyio
async def test_the_moved_feature_events_reach_the_run_store(tmp_path: Any) -> None:
	"""Events whose classes moved beside their features are still recorded, with their data."""
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, call_tool, finish
	from openmolt_core.tools import tool

	@tool(labels=["untrusted"])
	def fetch() -> str:
		"""Fetch a page."""
		return "page"

	@tool(labels=["private"])
	def vault() -> str:
		"""Read the vault."""
		return "secret"

	@tool(labels=["outbound"])
	def send(to: str) -> str:
		"""Send.

		Args:
			to: Whom.
		"""
		return "sent"

	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	model = ScriptedModel([call_tool("local.fetch"), call_tool("local.send", to="a"), finish("x")])
	agent = om.create_agent(
		name="A",
		model=model,
		tools=[fetch, vault, send],
		on_approval_request=lambda request: request.approve(),
	)
	result = await agent.run("go")
	stored = {e.name: e.data for e in await om.run_store.events(result.state.run_id)}  # type: ignore[union-attr]
	assert stored["taint"]["tool"] == "local.fetch"  # capabilities.safety's TaintEvent
	assert stored["approval:request"]["request"]["tool"] == "local.send"  # approvals' events
	assert stored["approval:decision"]["action"] == "approved"
	await om.aclose()


def test_the_price_check_keeps_its_cost_and_assembly_paths() -> None:
	"""The price check of ``max_cost`` is _pricecheck's; _cost and assembly re-export its names."""
	from openmolt_core import _cost, _pricecheck, assembly

	for name in ("Model", "OtherModel", "check_prices"):
		assert getattr(_cost, name) is getattr(_pricecheck, name), name
		assert getattr(assembly, name) is getattr(_pricecheck, name), name
		assert name in assembly.__all__ and name in dir(assembly), name


def test_the_stranded_run_event_is_the_durable_backends() -> None:
	"""``run:stranded`` (a worker's event) lives with the durable backend; events re-exports it."""
	from openmolt_core import _durable, events

	assert events.RunStrandedEvent is _durable.RunStrandedEvent
	assert "run:stranded" in events.EVENT_NAMES
	event = _durable.RunStrandedEvent(agent="a", step=0, version="1", current="2", worker="w")
	assert event.name == "run:stranded"


def test_function_tools_are_a_feature_the_tool_contract_re_exports() -> None:
	"""`FunctionTool` and `tool` live in `functiontools` (L2); `tools` names them, same objects."""
	import openmolt
	import openmolt_core
	from openmolt_core import functiontools, tools

	for name in ("ExecuteFn", "FunctionTool", "tool"):
		assert getattr(tools, name) is getattr(functiontools, name), name
		assert name in dir(tools) and name not in tools.__all__
	assert openmolt.FunctionTool is openmolt_core.FunctionTool is functiontools.FunctionTool
	made = tools.tool(lambda a: a, name="echo")
	assert isinstance(made, functiontools.FunctionTool) and isinstance(made, tools.Tool)


def test_the_file_store_is_behind_the_contract_s_file_access() -> None:
	"""The kernel types with `files.FileAccess`; the store moved to `filestore`, same objects."""
	from openmolt_core import files, filestore

	for name in (
		"FileStore",
		"LocalFile",
		"MAX_DATA_URL_BYTES",
		"PathResolver",
		"parse_data_url",
		"split_range",
	):
		assert getattr(files, name) is getattr(filestore, name), name
		assert name in dir(files) and name not in files.__all__
	assert {"FILE_PREFIX", "FileAccess", "StoredFile"} <= set(files.__all__)
	store: files.FileAccess = filestore.FileStore().for_agent(allow_file_system=False)
	assert files.split_range("openmolt-file:abc#bytes=2-") == ("openmolt-file:abc", (2, None))
	assert store.read("data:text/plain,hi").data == b"hi"


@pytest.mark.anyio
async def test_the_file_store_is_made_when_a_tool_first_uses_it() -> None:
	"""Creating an agent makes no store; a tool's first save makes the instance's one."""
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, call_tool, finish
	from openmolt_core.tools import tool

	kept: list[str] = []

	@tool(labels=[])
	async def keep(text: str, context: ToolContext) -> str:
		"""Keep a text as a file.

		Args:
			text: The text.
		"""
		assert context.files is not None
		kept.append((await context.files.save(text.encode(), name="t.txt"))["file"])
		return kept[-1]

	om = OpenMolt(entry_points=False)
	model = ScriptedModel([call_tool("local.keep", text="hi"), finish("done")])
	agent = om.create_agent(name="A", model=model, tools=[keep])
	assert om._files is None  # no store yet
	assert (await agent.run("x")).output == "done"
	assert om._files is not None and om.files.read(kept[0]).data == b"hi"
	await om.aclose()


@pytest.mark.anyio
async def test_a_tool_s_files_keep_the_store_s_methods_for_tools(tmp_path: Any) -> None:
	"""``context.files`` (once a `FileStore` view) still saves, reads, describes and finds paths."""
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, call_tool, finish
	from openmolt_core.tools import tool

	seen: dict[str, Any] = {}

	@tool(labels=[])
	async def keep(text: str, context: ToolContext) -> str:
		"""Keep a text as a file.

		Args:
			text: The text.
		"""
		files: Any = context.files
		ref = (await files.save(text.encode(), name="t.txt", media_type="text/plain"))["file"]
		seen["open"] = (await files.open(ref)).data
		seen["resolve"] = (await files.resolve(ref)).data
		seen["info"] = (await files.info(ref))["size"]
		seen["describe"] = files.describe(ref)["size"]
		seen["path"] = files.path_of(ref).read_bytes()
		return ref

	om = OpenMolt(entry_points=False, files_dir=str(tmp_path))
	model = ScriptedModel([call_tool("local.keep", text="hi"), finish("done")])
	agent = om.create_agent(name="A", model=model, tools=[keep])
	assert (await agent.run("x")).output == "done"
	assert seen == {"open": b"hi", "resolve": b"hi", "info": 2, "describe": 2, "path": b"hi"}
	await om.aclose()


def test_the_secrets_found_by_name_are_the_masking_library_s() -> None:
	"""`environment_secrets` and `settings_secrets` moved to the support library; `secrets` re-exports them."""
	from openmolt_core import secrets
	from openmolt_core._support import masking

	assert secrets.environment_secrets is masking.environment_secrets
	assert secrets.settings_secrets is masking.settings_secrets
	assert {"environment_secrets", "settings_secrets"} <= set(secrets.__all__)
	assert secrets.environment_secrets({"X_API_KEY": "k" * 10, "HOME": "/h" * 8}) == {"k" * 10}
	assert secrets.settings_secrets({"api_key": "sk-123", "model": "m"}) == {"sk-123"}


def test_load_tools_is_the_capabilities_helper() -> None:
	"""`load_tools`, used only by capabilities (tool search, offload), lives with them; hooks re-exports it."""
	from openmolt_core import capabilities, hooks
	from openmolt_core.hooks import load_tools

	assert load_tools is capabilities.load_tools is hooks.load_tools
	assert "load_tools" in capabilities.__all__ and "load_tools" in dir(hooks)


def test_the_streaming_events_live_with_streaming() -> None:
	"""`TextDeltaEvent` and `CommandReadyEvent`, emitted only by streaming, live with it."""
	from openmolt_core import events
	from openmolt_core.capabilities import streaming
	from openmolt_core.events import CommandReadyEvent, TextDeltaEvent

	assert TextDeltaEvent is streaming.TextDeltaEvent is events.TextDeltaEvent
	assert CommandReadyEvent is streaming.CommandReadyEvent
	assert issubclass(TextDeltaEvent, events.Event)
	assert TextDeltaEvent(agent="A", step=1, index=0, field="output", text="x").name == "text:delta"
	assert {"text:delta", "command:ready"} <= events.EVENT_NAMES


def test_a_credential_config_s_secrets_are_the_masking_library_s() -> None:
	"""`secret_values` and `secret_names` moved to the support library; `_binding` re-exports them."""
	from openmolt_core import _binding
	from openmolt_core._support import masking

	assert _binding.secret_values is masking.secret_values
	assert _binding.secret_names is masking.secret_names
	config = {"api_key": "sk-123456", "region": "eu-west-1", "oauth": {"client_secret": "abcdef"}}
	assert masking.secret_values(config) == {"sk-123456", "abcdef"}
	assert masking.secret_names(config) == {"api_key", "oauth.client_secret"}


def test_stream_reply_is_the_streaming_capability_s() -> None:
	"""`stream_reply`, used only by the streaming capability, lives with it; `streaming` re-exports it."""
	from openmolt_core import streaming
	from openmolt_core.capabilities import streaming as capability
	from openmolt_core.streaming import stream_reply

	assert stream_reply is capability.stream_reply is streaming.stream_reply
	assert "stream_reply" in dir(streaming) and "stream_reply" in capability.__all__


def test_model_list_is_the_fallback_feature_s() -> None:
	"""`model_list` reads the fallback option: it lives in `fallback`; `_chain` re-exports it."""
	from openmolt_core import _chain, fallback
	from openmolt_core.errors import ConfigurationError

	assert _chain.model_list is fallback.model_list
	assert fallback.model_list(["a:x"], ["b:y"]) == ["a:x", "b:y"]
	with pytest.raises(ConfigurationError, match="listed twice"):
		fallback.model_list("a:x", ["a:x"])


def test_the_file_store_made_on_first_use_is_one_whichever_threads_ask(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""Two threads asking for the store first get the same one (a sync tool's worker, the loop)."""
	import threading
	import time

	from openmolt import OpenMolt
	from openmolt_core import assembly

	made = assembly.file_store

	def slow(om: Any) -> Any:
		time.sleep(0.05)  # the other thread asks meanwhile
		return made(om)

	monkeypatch.setattr(assembly, "file_store", slow)
	om = OpenMolt(entry_points=False)
	got: list[Any] = []
	threads = [threading.Thread(target=lambda: got.append(om.files)) for _ in range(2)]
	for t in threads:
		t.start()
	for t in threads:
		t.join()
	assert got[0] is got[1] is om.files


def test_the_screening_of_a_files_bytes_is_a_support_library() -> None:
	"""`screen`, `textual`, `masked_labels` and `screened_base64` take bytes, a media type and
	secrets, nothing of an agent: they live in `_support/filescreen`; `files` gives the same
	objects under their old names (and in its ``__all__``)."""
	from openmolt_core import files
	from openmolt_core._support import filescreen

	for name in filescreen.__all__:
		assert getattr(files, name) is getattr(filescreen, name), name
		assert name in files.__all__, name


def test_compactions_check_keeps_its_old_names() -> None:
	"""`needs_compaction` left the kernel for compaction's capability: its old names give it."""
	from openmolt_core import _cost, capabilities, compaction

	assert _cost.needs_compaction is capabilities.needs_compaction is compaction.needs_compaction
	assert capabilities.Compaction(compaction.DEFAULT_COMPACTION).rebuild is None


def test_the_option_models_mechanism_is_a_support_library() -> None:
	"""`Options` and its helpers (both spellings, masked reprs, messages naming each key) live in
	`_support/optionmodels`; `options` gives the same objects under their old names."""
	from openmolt_core import options
	from openmolt_core._support import optionmodels

	for name in optionmodels.__all__:
		if name not in ("problems", "setting_problems"):  # parse_options' and read_model_config's
			assert getattr(options, name) is getattr(optionmodels, name), name
			assert name in options.__all__, name
	assert issubclass(options.AgentMemory, optionmodels.Options)


def test_the_secret_sets_and_redactors_are_a_support_library() -> None:
	"""The sets, the keys given in code and the redactors are `_support.secretset`'s; `secrets`
	re-exports them."""
	from openmolt_core import _redact, secrets
	from openmolt_core._support import secretset

	for name in secretset.__all__:
		assert getattr(secrets, name) is getattr(secretset, name), name
		assert name in secrets.__all__
	assert _redact.Redactor is secretset.Redactor and _redact.redactor_for is secretset.redactor_for
	known = secrets.SecretSet()
	known.add("sk-moved-secret-123")
	assert secrets.Redactor(known=known)("key sk-moved-secret-123") == "key [redacted]"


def test_the_json_helpers_are_the_support_libraries() -> None:
	"""`prompt.dumps` is safe JSON's, `example_value` and the envelope's transforms JSON Schema's."""
	from openmolt_core import prompt
	from openmolt_core._support import jsonsafe, jsonschema

	assert prompt.dumps is jsonsafe.dumps
	assert prompt.example_value is jsonschema.example_value
	assert prompt.dumps({"b": float("nan"), "a": "\ud800"}) == '{"b":"NaN","a":"\ufffd"}'
	defs: dict[str, object] = {}
	lifted = jsonschema.lift_defs(
		{"$ref": "#/$defs/A", "$defs": {"A": {"type": "string"}}}, "t0", defs
	)
	assert lifted == {"$ref": "#/$defs/t0.A"} and defs == {"t0.A": {"type": "string"}}


def test_the_taint_policys_key_reader_is_the_taint_modules() -> None:
	"""`snake_options` (its one reader is the taint policy) keeps its old path in `options`."""
	from openmolt_core import options, taint

	assert options.snake_options is taint.snake_options
	assert taint.snake_options({"onOutbound": "allow"}, "x") == {"on_outbound": "allow"}


def test_the_streaming_contract_sits_with_the_streaming_capability() -> None:
	"""The provider's streaming contract is L2: the loop never names it, the capability reads it."""
	import tomllib
	from pathlib import Path

	from openmolt_core import streaming
	from openmolt_core.capabilities import streaming as capability

	config = tomllib.loads(Path(__file__).parents[2].joinpath("importlinter.toml").read_text())
	layers = config["tool"]["importlinter"]["contracts"][0]["layers"]
	contract, kernel, features = (layers[i].replace(" ", "").split(":") for i in (-2, -3, -4))
	assert "streaming" not in contract + kernel and "streaming" in features
	assert capability.stream_reply is streaming.stream_reply
