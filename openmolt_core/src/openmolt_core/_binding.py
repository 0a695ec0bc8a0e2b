"""The one record of a tool as an agent sees it (`BoundTool`), and the tools given to an agent.

Every tool an agent holds is bound into a `BoundTool`: its context, whether the granted scopes
allow it, its labels, its approval rule and its in-doubt policy. `bind_tools` binds the ones given
straight to ``create_agent(tools=[...])`` (made tools of functions and agents by the assembly,
`openmolt_core.functiontools`) and a capability's; an integration's are bound where integrations live
(`openmolt_core.integrations.binding`), and a tool without ``execute`` of its own (a declarative
HTTP tool) runs through the executor registered for its class (`register_executor`), so the
kernel never imports the HTTP engine.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, cast

from openmolt_core._support.jsonschema import JsonSchemaValidator
from openmolt_core._support.masking import secret_names, secret_values
from openmolt_core._support.sync import call
from openmolt_core.tools import (
	LABELS,
	UNKNOWN,
	CallingRun,
	InDoubt,
	Tool,
	ToolContext,
	check_in_doubt,
	check_labels,
	declared_labels,
	strictest,
)

if TYPE_CHECKING:
	import httpx

	from openmolt_core.files import FileAccess, StoredFile

__all__ = [
	"BoundTool",
	"CallFiles",
	"IntegrationInfo",
	"ToolDefinition",
	"ToolExecutor",
	"UserAccount",
	"bind_tools",
	"for_call",
	"register_executor",
	"secret_names",
	"secret_values",
	"shown",
	"shown_schema",
]


class ToolDefinition(Protocol):
	"""What the kernel reads of any tool: a `Tool`, or a declarative one an executor runs.

	A declarative HTTP tool (`openmolt_core.integrations.model.HttpTool`) has no ``execute``: it
	runs through the executor registered for its class (`register_executor`).
	"""

	@property
	def handle(self) -> str:
		"""The tool's name inside its integration (``getForecast``)."""
		...

	@property
	def description(self) -> str:
		"""What the tool does, written for a model."""
		...

	@property
	def input_schema(self) -> dict[str, Any]:
		"""JSON Schema of the input object."""
		...

	@property
	def output_schema(self) -> dict[str, Any] | None:
		"""JSON Schema of the output, or None."""
		...

	@property
	def scopes(self) -> Sequence[str]:
		"""The integration scopes an agent needs to see and call it."""
		...


class IntegrationInfo(Protocol):
	"""What the kernel reads of the integration a tool belongs to (an `Integration`)."""

	@property
	def name(self) -> str:
		"""Its display name (``Gmail``)."""
		...

	@property
	def description(self) -> str:
		"""One line on what it does (may be empty)."""
		...

	@property
	def scopes(self) -> Mapping[str, str]:
		"""The scopes it defines, each with what it grants."""
		...


ToolExecutor = Callable[["BoundTool", dict[str, Any], ToolContext], Awaitable[Any]]
"""Runs one call of a bound tool that has no ``execute`` of its own: (tool, input, context)."""

_EXECUTORS: dict[type, ToolExecutor] = {}


def register_executor(kind: type, executor: ToolExecutor) -> None:
	"""Run the tools of class ``kind`` (and its subclasses) with ``executor``.

	The HTTP engine registers its declarative tools' executor (`openmolt_core.integrations.binding`).

	Args:
		kind: The tool class; its instances have no ``execute`` of their own.
		executor: Called with the bound tool, the validated input and the call's context.
	"""
	_EXECUTORS[kind] = executor


def _executor_for(tool: object) -> ToolExecutor | None:
	"""The executor registered for the tool's class, or None (the tool runs its ``execute``)."""
	if not _EXECUTORS:
		return None
	for kind in type(tool).__mro__:
		found = _EXECUTORS.get(kind)
		if found is not None:
			return found
	return None


class UserAccount(Protocol):
	"""How a tool bound per end user finds that user's credential, for one call (`openmolt_core.accounts`)."""

	async def context(self, base: ToolContext, user: str | None) -> ToolContext:
		"""The context one call runs in: ``base`` with the user's config and auth.

		Args:
			base: The binding's context (the operator's client config, no tokens).
			user: The run's end user.

		Raises:
			ToolError: The user's credential is gone.
		"""
		...


_UNSHOWN = re.compile(
	"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"
	"\U000e0000-\U000e007f]"
)
"""What no tool description may carry to the model: controls (but a tab and a line break), and
the characters that hide text from a person while the model reads it (zero-width, bidirectional,
separators, word joiners, tags)."""


def shown(text: str) -> str:
	"""A tool's text as the model reads it: `_UNSHOWN` characters taken out (`BoundTool` applies it).

	Args:
		text: The description (anything else is returned as it is).
	"""
	if not isinstance(text, str) or _UNSHOWN.search(text) is None:
		return text
	return _UNSHOWN.sub("", text)


_SHOWN_KEYS = frozenset({"description", "title", "$comment"})
"""The keys of a JSON Schema whose words only describe (`shown_schema` cleans them)."""


def shown_schema(schema: Any) -> Any:
	"""A JSON Schema as the model reads it: `shown` on each description, title and comment.

	The same object when it holds none to clean (no copy), else a copy: the tool's own is kept.

	Args:
		schema: The schema (a dict, a list of them, anything else as it is).
	"""
	if isinstance(schema, dict):
		out: dict[str, Any] | None = None
		for key, value in schema.items():
			new = (
				shown(value)
				if key in _SHOWN_KEYS and isinstance(value, str)
				else shown_schema(value)
				if isinstance(value, (dict, list))
				else value
			)
			if new is not value:
				if out is None:
					out = dict(schema)
				out[key] = new
		return schema if out is None else out
	if isinstance(schema, list):
		items = [shown_schema(v) for v in schema]
		return schema if all(a is b for a, b in zip(items, schema, strict=True)) else items
	return schema


@dataclass(slots=True, repr=False)  # its own __repr__: none to generate
class BoundTool:
	"""A tool as one agent sees it: the one record of a tool, whatever its source.

	Every tool an agent holds (an integration's, a function, an MCP server's, an OpenAPI
	operation, an agent used as a tool, a skill's, a capability's own) is bound into one of
	these; capabilities read it through the `openmolt_core.hooks.ToolSpec` protocol (handle,
	schemas, scopes, labels, secret names, approval, in-doubt policy), never the tool's class.

	Args:
		handle: The full handle (``integration.tool``).
		tool: The tool: a `Tool` with its own ``execute``, or a declarative one (an
			`openmolt_core.integrations.model.HttpTool`) run by its registered executor.
		context: What the tool sees when it runs.
		allowed: Whether the agent's scopes allow it.
		missing_scopes: The scopes the agent lacks for it.
		integration: The integration it belongs to (None for ``create_agent(tools=...)``).
		approval: The policy rule that makes its calls wait for a decision, or None.
		labels: What it does with data (`openmolt_core.taint`), as the agent's policy reads it;
			None: what the tool declares, and `openmolt_core.tools.UNKNOWN` (``untrusted``
			and ``outbound``) when it declares nothing (fail closed).
		account: For an integration bound per end user: finds the run's user's credential for
			each call (`UserAccount`); None: the tool runs in ``context`` as bound.
		in_doubt_at_least: The laxest in-doubt policy its calls may follow (what else runs
			inside a call would run again with it; set by ``describe_tools``).
		in_doubt_default: The policy of its calls when the tool declares none, as a
			capability's ``describe_tools`` sets it (None: see `in_doubt`).
	"""

	handle: str
	tool: ToolDefinition
	context: ToolContext
	allowed: bool
	missing_scopes: Sequence[str]
	integration: IntegrationInfo | None = None
	approval: str | None = None
	_labels: frozenset[str] | None = None
	account: UserAccount | None = None
	_validator: JsonSchemaValidator | None = None
	_description: dict[str, Any] | None = None
	_described: frozenset[str] | None = None
	_shown: tuple[str, Any, Any] | None = None
	in_doubt_at_least: InDoubt = "retry"
	in_doubt_default: InDoubt | None = None

	def __repr__(self) -> str:
		# The context holds the credential config: it is not shown.
		return f"BoundTool({self.handle!r}, allowed={self.allowed})"

	# the record (`openmolt_core.hooks.ToolSpec`) -----------------------------------------

	@property
	def labels(self) -> frozenset[str]:
		"""What it does with data: the agent's policy's reading, else what the tool declares.

		A tool that declares nothing, and that no policy has labelled, is ``untrusted`` and
		``outbound`` (fail closed).
		"""
		found = self._labels
		if found is None:
			declared = declared_labels(self)
			found = self._labels = UNKNOWN if declared is None else declared
		return found

	@labels.setter
	def labels(self, value: frozenset[str]) -> None:
		found = frozenset(value)
		if not found <= LABELS:  # a misspelt label must not pass for "none"
			check_labels(found, f"tool {self.handle!r}: labels")
		self._labels = self._described = found

	@property
	def described_labels(self) -> frozenset[str] | None:
		"""The labels a capability's ``describe_tools`` set on this record (None: none did).

		The safety capability, which labels every tool last, starts from them rather than from
		what the tool declares, so a capability that labels tools is heard.
		"""
		return self._described

	def _seen(self) -> tuple[str, Any, Any]:
		"""Its description and schemas as the model reads them (`shown`), made once."""
		found = self._shown
		if found is None:
			tool = self.tool
			found = self._shown = (
				shown(tool.description),
				shown_schema(tool.input_schema),
				shown_schema(tool.output_schema),
			)
		return found

	@property
	def input_schema(self) -> dict[str, Any]:
		"""The JSON Schema of its input (its descriptions as the model reads them: `shown`)."""
		schema: dict[str, Any] = self._seen()[1] or {"type": "object"}
		return schema

	@property
	def listed_input_schema(self) -> dict[str, Any]:
		"""The tool's own input schema as the model reads it (`shown`): empty as given."""
		schema: dict[str, Any] = self._seen()[1]
		return schema

	@property
	def output_schema(self) -> dict[str, Any] | None:
		"""The JSON Schema of its result, or None when it names none (as the model reads it)."""
		schema: dict[str, Any] | None = self._seen()[2] or None
		return schema

	@property
	def scopes(self) -> tuple[str, ...]:
		"""The scopes a call needs (its integration's; none for most function tools)."""
		return tuple(getattr(self.tool, "scopes", None) or ())

	@property
	def secrets(self) -> frozenset[str]:
		"""The names of the credential keys it was bound with that hold secrets (never values)."""
		return secret_names(self.context.config)

	@property
	def in_doubt(self) -> InDoubt:
		"""What a call found started but unfinished after a crash does (`openmolt_core.capabilities.indoubt`).

		The tool's own policy, else `in_doubt_default`, else ``ask`` for an ``outbound`` tool
		and ``retry`` (with its idempotency key) for others; never laxer than `in_doubt_at_least`.
		"""
		own = self.declared_in_doubt or self.in_doubt_default
		if own is None:
			own = "ask" if "outbound" in (declared_labels(self) or ()) else "retry"
		floor = self.in_doubt_at_least
		return own if floor == "retry" else strictest((own, floor))

	@property
	def declared_in_doubt(self) -> InDoubt | None:
		"""The tool's own in-doubt policy; None when it says none.

		Its ``in_doubt`` (``inDoubt``) attribute, else, for a declarative tool, what its engine
		says of its calls (its ``in_doubt_for``: `openmolt_core.integrations.model.HttpTool.in_doubt_for`).
		"""
		tool = self.tool
		declared = getattr(tool, "in_doubt", None)
		if declared is None:
			declared = getattr(tool, "inDoubt", None)
		if declared is not None:
			return check_in_doubt(declared, f"tool {self.handle!r}") or "retry"
		by_kind = getattr(tool, "in_doubt_for", None)
		if by_kind is not None:  # a declarative tool (HTTP): its engine knows what repeats safely
			found: InDoubt = by_kind(self.integration)
			return found
		return None

	@property
	def key_lifetime(self) -> float | None:
		"""How long the service keeps the idempotency key that makes this tool's calls ``retry``.

		A declarative tool's integration's ``idempotency_key_lifetime`` when its calls carry a key
		and it declares no policy; None otherwise. A call in doubt for longer is not repeated.
		"""
		tool = self.tool
		if (
			getattr(tool, "in_doubt", None) is not None
			or getattr(tool, "inDoubt", None) is not None
		):
			return None
		by_kind = getattr(tool, "key_lifetime_for", None)  # a declarative (HTTP) tool's answer
		return by_kind(self.integration) if by_kind is not None else None

	@property
	def description(self) -> str:
		"""What it does, for the model: control and invisible characters taken out (`shown`)."""
		return self._seen()[0]

	@property
	def integration_name(self) -> str:
		"""The display name of its integration (``Gmail``); the handle's prefix when it has none."""
		spec = self.integration
		return spec.name if spec is not None else self.handle.partition(".")[0]

	@property
	def integration_description(self) -> str:
		"""One line on what its integration does (empty when it has none, or says nothing)."""
		spec = self.integration
		return shown(spec.description) if spec is not None else ""

	@property
	def is_function(self) -> bool:
		"""Whether the tool runs Python code rather than an HTTP request."""
		return callable(getattr(self.tool, "execute", None))

	def validator(self) -> JsonSchemaValidator:
		"""The input validator, compiled on first use."""
		if self._validator is None:
			# A declarative HTTP tool refuses an input no template reads (`checked_input_schema`).
			checked = getattr(self.tool, "checked_input_schema", None)
			schema = checked() if callable(checked) else self.tool.input_schema
			self._validator = JsonSchemaValidator(schema or {"type": "object"})
		return self._validator

	def describe(self) -> dict[str, Any]:
		"""The tool as listed for the model."""
		if self._description is None:
			description, input_schema, output_schema = self._seen()
			desc: dict[str, Any] = {
				"tool": self.handle,
				"description": description,
				"inputSchema": input_schema,
			}
			if output_schema:
				desc["outputSchema"] = output_schema
			if self.approval is not None:
				desc["approval"] = True
			self._description = desc
		return self._description

	async def execute(
		self,
		input: dict[str, Any],
		*,
		memory: Mapping[str, str] | None = None,
		run: CallingRun | None = None,
	) -> Any:
		"""Run the tool in its context (HTTP tools go through the engine).

		Args:
			input: The validated input.
			memory: The calling run's memory, shown to the tool as ``context.memory``.
			run: The calling run, shown to the tool as ``context.run``.
		"""
		context = self.context
		if self.account is not None:  # the run's end user's credential, for this call only
			context = await self.account.context(context, run.user if run is not None else None)
		if memory is not None or run is not None:
			context = for_call(context, context.memory if memory is None else memory, run)
		tool = self.tool
		executor = _executor_for(tool)  # a class lookup: a runtime Protocol check costs more
		if executor is not None:  # a declarative tool (HTTP): its engine runs it
			return await executor(self, input, context)
		# A Tool whose execute is a plain def runs in a worker thread, under the run's budgets.
		return await call(cast("Tool", tool).execute, input, context)


def for_call(
	context: ToolContext, memory: Mapping[str, str], run: CallingRun | None
) -> ToolContext:
	"""A copy of ``context`` with one call's memory, run and files (`CallFiles`), faster than ``replace``.

	Args:
		context: The binding's context.
		memory: The calling run's memory.
		run: The calling run.
	"""
	files = context.files
	if files is not None and run is not None:
		files = CallFiles(files, context.redact, run)
	if type(context) is not ToolContext:  # a subclass may have fields of its own
		return replace(context, memory=memory, run=run, files=files)
	c = context
	return ToolContext(
		c.agent,
		c.integration,
		c.config,
		memory,
		c.http,
		c.auth,
		c.redact,
		files,
		c.extras,
		run,
		c.retry,
		c.config_from_user,
	)


class CallFiles:
	"""The file store as one tool call sees it (``context.files`` in a run): the kernel's.

	Every byte a tool keeps goes through `save`: screened with the call's secrets too
	(`openmolt_core.files.screen`) and kept with the call that kept it (``{"run", "call",
	"user"}``). A file a run for one end user kept is that user's: a run for anyone else finds
	no such file; one kept outside a run is read by all.

	Args:
		files: The agent's view of the store.
		secrets: The calling tool's secrets (its context's ``redact``).
		run: The calling run.
	"""

	__slots__ = ("_files", "_run", "_secrets")

	def __init__(self, files: FileAccess, secrets: frozenset[str], run: CallingRun) -> None:
		self._files = files
		self._secrets = secrets
		self._run = run

	@property
	def kept_by(self) -> dict[str, Any]:
		"""The call, as written beside each file it keeps (``{"run", "call", "user"}``)."""
		run = self._run
		return {"run": run.run_id, "call": run.call, "user": run.user}

	async def save(
		self, data: bytes, *, media_type: str = "application/octet-stream", name: str = ""
	) -> dict[str, Any]:
		"""Save bytes, screened (see the class): `openmolt_core.files.FileAccess.save`.

		Returns:
			``{"file": "openmolt-file:<id>", "mediaType", "size", "name"}``; for a file not
			kept, ``{"mediaType", "size", "name", "withheld": <why>}``.
		"""
		from openmolt_core.files import save_screened

		return await save_screened(
			self._files,
			data,
			media_type=media_type,
			name=name,
			secrets=self._secrets,
			origin=self.kept_by,
		)

	def _check(self, reference: str) -> None:
		"""Refuse a stored file another end user's run kept, as if it were unknown."""
		origin_of = getattr(self._files, "origin", None)
		if origin_of is None or not isinstance(reference, str):
			return
		from openmolt_core.files import FILE_PREFIX

		if not reference.startswith(FILE_PREFIX):
			return
		origin = origin_of(reference)
		if origin is not None and origin.get("user") != self._run.user:
			from openmolt_core.errors import ToolError

			raise ToolError(f"unknown file reference {reference[:80]!r}")

	async def open(self, reference: str, *, max_bytes: int | None = None) -> StoredFile:
		"""Resolve a file reference to bytes: `openmolt_core.files.FileAccess.open`.

		Raises:
			ToolError: The reference is malformed, unknown (or another user's), too large or
				refused.
		"""
		import anyio.to_thread

		await anyio.to_thread.run_sync(self._check, reference)
		return await self._files.open(reference, max_bytes=max_bytes)

	resolve = open  # the store's other name for `open`

	def read(self, reference: str, *, max_bytes: int | None = None) -> StoredFile:
		"""Resolve a file reference, blocking: `openmolt_core.files.FileAccess.read`.

		Raises:
			ToolError: The reference is malformed, unknown (or another user's), too large or
				refused.
		"""
		self._check(reference)
		return self._files.read(reference, max_bytes=max_bytes)

	def describe(self, reference: str) -> dict[str, Any]:
		"""Describe a file reference, blocking: `openmolt_core.files.FileAccess.describe`.

		Raises:
			ToolError: The reference is malformed, unknown (or another user's) or refused.
		"""
		self._check(reference)
		return self._files.describe(reference)

	async def info(self, reference: str) -> dict[str, Any]:
		"""Describe a file reference: `openmolt_core.files.FileAccess.info`.

		Raises:
			ToolError: The reference is malformed, unknown (or another user's) or refused.
		"""
		import anyio.to_thread

		return await anyio.to_thread.run_sync(self.describe, reference)

	def path_of(self, reference: str) -> Any:
		"""The local path of a stored file (`openmolt_core.filestore.FileStore.path_of`).

		Raises:
			ToolError: The reference is malformed or unknown (or another user's).
			AttributeError: The store keeps no local files.
		"""
		self._check(reference)
		return self._files.path_of(reference)  # type: ignore[attr-defined]  # the store's, when it has one

	def __repr__(self) -> str:
		return f"CallFiles({self._files!r})"


LOCAL = "local"
"""The handle prefix of tools given outside an integration (``local.<handle>``): no integration
may take it (`openmolt_core.plugins`)."""


def bind_tools(
	tools: Sequence[ToolDefinition],
	*,
	agent: str,
	http: Callable[[], httpx.AsyncClient] | None = None,
	files: FileAccess | None = None,
	prefix: str = LOCAL,
) -> list[BoundTool]:
	"""Bind tools given outside an integration: ``create_agent(tools=[...])``'s, a capability's.

	Args:
		tools: The tools (the assembly makes tools of functions and agents first:
			`openmolt_core.functiontools.as_tools`).
		agent: The agent's name.
		http: Getter for the shared HTTP client.
		files: The instance's file store.
		prefix: The handle prefix the model sees (``local.<handle>``).
	"""
	context = ToolContext(agent=agent, integration=prefix, http=http, files=files)
	return [BoundTool(f"{prefix}.{tool.handle}", tool, context, True, ()) for tool in tools]


def describe_tools(
	tools: Sequence[BoundTool], *, schemas_for: Callable[[str], bool] | None = None
) -> str:
	"""The visible tools as deterministic JSON, for the first message.

	Args:
		tools: The agent's tools.
		schemas_for: Whether a tool's ``inputSchema`` is listed (default: every tool's). When the
			provider constrains replies to the reply schema, that schema already holds each
			strictly fitted tool's input schema: listing it again would double its bytes.
	"""
	out = []
	for t in tools:
		if not t.allowed:
			continue
		item = t.describe()
		if schemas_for is not None and not schemas_for(t.handle):
			item = {k: v for k, v in item.items() if k != "inputSchema"}
		out.append(item)
	return json.dumps(out, ensure_ascii=False, separators=(",", ":"))
