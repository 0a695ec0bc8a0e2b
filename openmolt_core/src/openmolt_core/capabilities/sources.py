"""Tools listed at run time: the `ToolSource` an integration can carry, and the capability.

Most integrations list their tools as data. Some only learn them from a running service: an MCP
server answers ``tools/list`` once it is started, and may change its list later. Such an
integration carries a `ToolSource` (``Integration(name=..., source=...)``; ``openmolt_mcp``
makes them) and no ``tools``. The kernel never names a source: this capability lists them
(`openmolt_core.sources`, the contract's old home, re-exports `ToolSource`, `source_gates` and
`trusts_descriptions`).

The source is asked for its tools at the start of each run of an agent that uses the integration,
before the first message is built; the first call starts the service. The agent binds the tools it
gets (``<integration>.<tool>`` handles, scopes granted as for any other tool) and keeps them until a
later run receives a different list: the tools never change in the middle of a run, so the prompt
prefix stays the same for a run's whole life (a resumed or recovered run binds the tools its state
records it began with: `openmolt_core.capabilities._listed`). `OpenMolt.aclose` closes every
source its agents used.

``create_agent`` makes one
`SourceBinding` per such integration of the agent (the scope checks of any binding, and the tool
context) and gives them to one `Sources` capability. Its `Sources.list_tools` hook lists every
source at the start of each run, before the first turn is built, and binds the tools again only
when a list changed (a source returns the same sequence while its list holds). `close_sources`
stops the sources when the OpenMolt instance closes.

`Sources` also binds what every capability lists (``create_agent`` adds a `Sources(())` for an
agent whose other capability overrides `list_tools`): `Sources.refresh_tools` asks each
`list_tools` hook before each run, resume and durable execution, and gives the agent a new tool
set when a list changed; `Sources.keep_tools` binds the tools a run began with, recorded in its
state (`openmolt_core.capabilities._listed`), or stops the run.

The images a source's tool returns (an MCP ``image`` content block, which ``openmolt_mcp`` saves to
the file store: ``{"type": "image", "file": "openmolt-file:...", "mediaType": "image/png"}``)
are shown to the model with the results of their step: `Sources.tool_done` notes them (the
newest `Limits.max_tool_images <openmolt_core._execute.Limits>` of a step, in the run's state so
a parked or replayed run keeps them), and `Sources.before_model` attaches them to the results
turn before the next model call. An image is attached only when the very call whose result
names it kept it in the store (the store writes the run and call that kept each file beside it:
`openmolt_core._binding.CallFiles`): a reference is text a service writes, and a server that
echoes one the model gave it, or one of another run or end user, must not have that file
shown; what cannot be told (a store that records no origin, a note from before) is not shown.
It is attached when its bytes are one of the four formats every built-in API reads (PNG, JPEG,
GIF, WebP) and at most `MAX_IMAGE_BYTES`; the model keeps the file reference for the others.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import anyio

from openmolt_core._binding import BoundTool, secret_values
from openmolt_core.capabilities import _listed
from openmolt_core.errors import ConfigurationError, IntegrationError, OpenMoltError
from openmolt_core.hooks import Capability, Run, ToolBinder
from openmolt_core.secrets import Redactor
from openmolt_core.taint import trusts_descriptions
from openmolt_core.tools import Tool, ToolContext

if TYPE_CHECKING:
	import httpx

	from openmolt_core._execute import RunContext
	from openmolt_core.commands import CallTool
	from openmolt_core.files import FileAccess
	from openmolt_core.integrations.binding import IntegrationBinding
	from openmolt_core.integrations.model import Integration
	from openmolt_core.result import RunState

__all__ = [
	"MAX_IMAGE_BYTES",
	"SourceBinding",
	"Sources",
	"ToolSource",
	"bind_source",
	"close_sources",
	"source_gates",
	"trusts_descriptions",
]


@runtime_checkable
class ToolSource(Protocol):
	"""Where an integration's tools come from when they are only known at run time.

	A source caches what it lists: `list_tools` returns the *same* sequence object for as long as
	the list has not changed (that identity is how agents know they can keep their tools), and a
	new one after a change (an MCP server's ``notifications/tools/list_changed``).

	What it lists (names, descriptions, schemas) is text from outside that the model reads: a
	run of an agent that may call one of its tools is tainted from its first model call
	(`openmolt_core.taint`), unless the source has a ``trust_descriptions`` attribute that is
	True, which it sets only when its user said to (an MCP server's ``trust_descriptions``
	option). Without the attribute, the listing is not trusted.
	"""

	secrets: frozenset[str]
	"""Values the source holds that must never be shown (tokens in its environment or headers)."""

	async def list_tools(self) -> Sequence[Tool]:
		"""The tools available now (the first call may start the service).

		Each tool's ``scopes`` must be scopes its integration defines.

		Raises:
			IntegrationError: The service could not be started or did not list its tools.
		"""
		...

	async def aclose(self) -> None:
		"""Stop the service and release what the source holds; a later use may start it again."""
		...


# A source may also have ``gates``, a mapping of the settings that decide what its tools' calls
# may do (JSON: in-doubt policies, labels, scopes), read by `source_gates`.
# A source may also have ``named(id: str) -> None``: ``register_integration`` calls it with the
# id its integration is registered under when that differs from the one it was made with, so the
# source's messages and logs name the integration as the agents know it.


def source_gates(source: ToolSource) -> Mapping[str, Any]:
	"""The settings of a source that decide what its tools' calls may do, as JSON.

	Read from its optional ``gates`` attribute (an MCP server's ``inDoubt``, ``labels``,
	``scopes`` and ``trustDescriptions``), with whether it is trusted (`trusts_descriptions`).
	Its tools are listed only at run time, so an agent's definition cannot read their in-doubt
	policies and labels from its tools: a durable engine reads them here, and keeps a run for a
	worker whose sources say the same (a laxer ``inDoubt`` would make a call in doubt again).
	(`openmolt_core.sources` re-exports it, its old home.)

	Args:
		source: The tool source.
	"""
	gates = getattr(source, "gates", None)
	found = dict(gates) if isinstance(gates, Mapping) else {}
	return {**found, "trusted": trusts_descriptions(source)}


log: logging.Logger = logging.getLogger("openmolt")

MAX_IMAGE_BYTES = 5 * 2**20 * 3 // 4
"""The largest image shown to the model, in bytes: Anthropic's limit per image, the smallest of
the APIs' (OpenAI takes 50 MB a request, Gemini 20 MB inline), which the API measures in the
image's base64 text (5 MB of it: 3.75 MB of image). A larger image went into the results turn,
and every later request of the run carried it and was refused."""

_FORMATS = (
	(b"\x89PNG\r\n\x1a\n", "image/png"),
	(b"\xff\xd8\xff", "image/jpeg"),
	(b"GIF87a", "image/gif"),
	(b"GIF89a", "image/gif"),
)
"""Image formats by their first bytes (WebP: ``RIFF....WEBP``, checked apart)."""


@dataclass(slots=True)
class SourceBinding:
	"""One agent's use of an integration whose tools come from a `ToolSource`.

	Args:
		integration: The integration (with its id set).
		source: Its tool source.
		binding: The agent's entry for it (granted scopes).
		context: The context its tools run in (config, secrets, file store).
	"""

	integration: Integration
	source: ToolSource
	binding: IntegrationBinding
	context: ToolContext

	@property
	def id(self) -> str:
		"""The integration id, the prefix of its tools' handles."""
		return self.binding.integration

	def bind(self, tools: Sequence[Tool]) -> list[BoundTool]:
		"""Bind listed tools: full handles, and the scopes this agent was granted.

		Raises:
			IntegrationError: A tool needs a scope the integration does not define.
		"""
		spec = self.integration
		granted = None if self.binding.scopes is None else set(self.binding.scopes)
		out = []
		for tool in tools:
			unknown = [s for s in tool.scopes if s not in spec.scopes]
			if unknown:
				raise IntegrationError(
					f"the source listed tool {tool.handle!r} with scope(s) {unknown} that the "
					f"integration does not define (known: {sorted(spec.scopes)})",
					integration=self.id,
				)
			missing = [] if granted is None else [s for s in tool.scopes if s not in granted]
			out.append(
				BoundTool(
					handle=f"{self.id}.{tool.handle}",
					tool=tool,
					context=self.context,
					allowed=not missing,
					missing_scopes=missing,
					integration=spec,
				)
			)
		return out


def bind_source(
	spec: Integration,
	binding: IntegrationBinding,
	*,
	agent: str,
	instance_config: Mapping[str, Any],
	http: Callable[[], httpx.AsyncClient],
	files: FileAccess | None = None,
) -> SourceBinding:
	"""Check an agent's entry for a source integration and make its tool context.

	Args:
		spec: The integration; ``spec.source`` is set.
		binding: The agent's entry for it.
		agent: The agent's name.
		instance_config: Config from ``OpenMolt(integrations={id: {...}})``; the agent's wins.
		http: Getter for the shared HTTP client.
		files: The agent's view of the file store (images and resources the tools return).

	Raises:
		ConfigurationError: A granted scope is unknown to the integration.
	"""
	iid = binding.integration
	source = spec.source
	if source is None:  # pragma: no cover - create_agent only calls this for sources
		raise ConfigurationError(f"integrations[{iid}] lists its tools; it has no source")
	from openmolt_core.integrations.binding import check_scopes

	check_scopes(binding, spec)
	config = {**instance_config, **binding.config}
	context = ToolContext(
		agent=agent,
		integration=iid,
		config=config,
		http=http,
		redact=frozenset(secret_values(config)) | frozenset(source.secrets),
		files=files,
	)
	return SourceBinding(integration=spec, source=source, binding=binding, context=context)


class Sources(Capability):
	"""List the tools of an agent's source integrations at the start of each run, and bind them.

	Args:
		bindings: One `SourceBinding` per source integration, in the agent's order.
	"""

	__slots__ = (
		"_bindings",
		"_bound",
		"_latest",
		"_listed",
		"_others",
		"_prefixes",
		"_record",
		"_untrusted",
	)

	name = "tool-sources"
	# The tools it lists are in the fingerprint (schemas, handles) once listed.
	in_fingerprint: ClassVar[bool] = False

	def __init__(self, bindings: Sequence[SourceBinding]) -> None:
		self._bindings = tuple(bindings)
		self._listed: list[Sequence[Tool]] | None = None
		self._bound: Sequence[BoundTool] = ()
		self._prefixes = tuple(f"{b.id}." for b in self._bindings)
		# What is unknown at a security seam is unsafe: a source that does not say its listing
		# is trusted (`trusts_descriptions`) lists words the model reads as untrusted content.
		self._untrusted = tuple(b.id for b in self._bindings if not trusts_descriptions(b.source))
		# The agent's other tools (its own, before the first listing), the lists of every
		# listing capability bound with them and their record (`_listed`: what a run keeps of
		# them; None until the first listing), and the latest lists with their record: what a
		# new run binds (a resumed run that began with fewer binds fewer: `keep_tools`).
		self._others: dict[str, BoundTool] | None = None
		self._record: dict[str, str] | None = None
		self._latest: tuple[Sequence[Sequence[BoundTool]], dict[str, str]] | None = None

	@property
	def bindings(self) -> tuple[SourceBinding, ...]:
		"""The source integrations, in the agent's order."""
		return self._bindings

	def active_hooks(self) -> frozenset[str]:
		"""Its hooks; ``on_run_start`` only when a source's listing is not trusted.

		With no source (what the assembly adds for another capability's `list_tools`), only
		what binds the tools the capabilities list.
		"""
		hooks = {"refresh_tools", "keep_tools"}
		if self._bindings:
			hooks.update(("list_tools", "tool_done", "before_model"))
		if self._untrusted:
			hooks.add("on_run_start")
		return frozenset(hooks)

	async def on_run_start(self, run: Run) -> None:
		"""Taint a run whose model reads tools an untrusted source listed, from its first call.

		A tool's name, description and schemas are words the model reads before any call: a
		server that lists them at run time can put instructions in them (tool poisoning), and
		change them at any listing. Each such source whose tools the agent may call adds a
		record (``{"call": "tools:<integration>", "tool": "the tool list of <integration>"}``)
		to ``state.taint``, as untrusted input does (`openmolt_core.taint.untrusted_input`), so
		the taint policy gates the run's outbound calls from its first step. A source says its
		listing is trusted with ``trust_descriptions = True`` (`trusts_descriptions`).
		"""
		taint = run.state.taint
		for iid in self._untrusted:
			key = f"tools:{iid}"
			if any(t.get("call") == key for t in taint):
				continue  # resumed, or replayed: already recorded
			prefix = f"{iid}."
			tools: Mapping[str, BoundTool] = run.tools  # type: ignore[assignment]  # the loop's records
			if not any(t.allowed and h.startswith(prefix) for h, t in tools.items()):
				continue  # none of its tools is the agent's to call: the model reads none
			from openmolt_core.capabilities.safety import taint as record
			from openmolt_core.taint import LISTING

			ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
			await record(ctx, key, f"{LISTING}{iid}")

	async def list_tools(self) -> Sequence[BoundTool]:
		"""List every source's tools (at once); bind them again if a list changed.

		Returns:
			The bound tools: the same sequence as last time when no list changed.

		Raises:
			IntegrationError: A source could not list its tools (the message is redacted).
		"""
		lists: list[Sequence[Tool]] = [()] * len(self._bindings)
		failed: list[OpenMoltError] = []

		async def one(index: int, binding: SourceBinding, scope: anyio.CancelScope) -> None:
			try:
				lists[index] = await _list(binding)
			except OpenMoltError as exc:  # raised as itself below, not in an ExceptionGroup
				failed.append(exc)
				scope.cancel()  # the run cannot start: the other sources need not finish

		if len(self._bindings) == 1:
			lists[0] = await _list(self._bindings[0])
		else:
			async with anyio.create_task_group() as tg:
				for index, binding in enumerate(self._bindings):
					tg.start_soon(one, index, binding, tg.cancel_scope)
		if failed:
			raise failed[0]
		previous = self._listed
		if previous is not None and all(a is b for a, b in zip(lists, previous, strict=True)):
			return self._bound
		bound: list[BoundTool] = []
		for binding, listed in zip(self._bindings, lists, strict=True):
			bound.extend(binding.bind(listed))
		self._listed, self._bound = lists, bound
		return bound

	async def refresh_tools(self, binder: ToolBinder) -> None:
		"""List every capability's tools (`Capability.list_tools`); bind them again when changed.

		A source that never answers (a hung server, a third-party capability) is bounded by the
		run's timeout too: a run never waits longer than it allows for its tools.

		Raises:
			IntegrationError: A list could not be made in time, or a source failed (masked).
		"""
		if self._others is None:  # the agent's own tools, before anything listed was bound
			self._others = dict(binder.own_tools())
		before = self._latest[0] if self._latest is not None else ()
		try:
			with anyio.fail_after(binder.timeout):
				lists = await binder.listed()
		except TimeoutError:
			by = ", ".join(binder.sources())
			raise IntegrationError(
				f"agent {binder.name!r}'s tools were not listed within its run timeout "
				f"({binder.timeout:g} s); check that its tool sources (MCP servers) answer, or "
				"give the agent a longer timeout",
				integration=by,
			) from None
		except OpenMoltError as exc:  # reaches the caller (and a durable store) as it is: masked
			redact = binder.redact
			exc.args = tuple(redact(a) if isinstance(a, str) else a for a in exc.args)
			raise
		if len(lists) == len(before) and all(a is b for a, b in zip(lists, before, strict=True)):
			return
		self._bind(binder, lists)
		self._latest = (lists, self._record or {})

	def keep_tools(self, binder: ToolBinder, state: RunState, new: bool) -> None:
		"""Bind the listed tools a run began with (`openmolt_core.capabilities._listed`), or stop it.

		Runs of one agent may go on at once, each from its own record: the tools are bound from
		the latest listing (never from what another run bound), just before the run's tool set
		is made. A new run binds the whole listing and records it in its state.

		Raises:
			RunError: A tool the run began with is gone or has changed (the state is kept).
		"""
		if self._latest is None:
			return
		lists, now = self._latest
		recorded = None if new else _listed.recorded(state)
		began = now if recorded is None else recorded  # none recorded: a new or older run
		if began != now:
			lists, gone, changed = _listed.kept(began, lists, now)
			if gone or changed:
				raise binder.failed(state, binder.redact(_listed.refusal(gone, changed)))
		if self._record != began:  # another run bound others (or fewer) meanwhile
			self._bind(binder, lists)
		if new:
			state.ext[_listed.KEY] = {"listed": dict(now)}

	def _bind(self, binder: ToolBinder, lists: Sequence[Sequence[BoundTool]]) -> None:
		"""Give the agent its own tools and ``lists`` (one per listing capability), then record them."""
		tools = dict(self._others or {})
		for by, listed in zip(binder.sources(), lists, strict=True):
			for bound in listed:
				if bound.handle in tools:
					raise ConfigurationError(
						f"create_agent: tool handle {bound.handle!r} given twice (capability "
						f"{by!r} lists a tool the agent already has)"
					)
				tools[bound.handle] = bound
		binder.rebind(tools)
		self._record = _listed.record(lists)  # as marked (labels)

	def tool_done(self, run: Run, call: CallTool, index: int, entry: Mapping[str, Any]) -> None:
		"""Note the images a source's tool returned, to show them with the step's results."""
		if not call.tool.startswith(self._prefixes) or "result" not in entry:
			return
		found = _images(entry["result"])
		if not found:
			return
		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		most = ctx.limits.max_tool_images
		if most <= 0:
			return
		from openmolt_core.durability import step_key

		# The call whose result names them: an image is shown only if this call kept it.
		key = step_key("tool", ctx.step, index, call.tool)
		kept: list[dict[str, Any]] = self.state(run).setdefault("images", [])
		kept.extend({**image, "call": key} for image in found)
		del kept[: max(len(kept) - most, 0)]  # the newest ones

	async def before_model(self, run: Run) -> None:
		"""Attach the images noted since the last model call to the results turn."""
		ext = run.state.ext.get(self.name)
		if not ext:
			return
		images = ext.pop("images", [])
		if not ext:
			del run.state.ext[self.name]
		last = run.state.messages[-1] if run.state.messages else None
		if last is None or last.role != "user" or not images:
			return
		files = next((b.context.files for b in self._bindings if b.context.files), None)
		if files is None:  # pragma: no cover - create_agent always gives the store
			return
		from openmolt_core.llm import Attachment

		origin_of = getattr(files, "origin", None)
		for image in images:
			ref = image["file"]
			kept_by = None if origin_of is None else await anyio.to_thread.run_sync(origin_of, ref)
			if not _kept_by(kept_by, run.state.run_id, image.get("call")):
				log.warning(
					"%s: %s is not shown to the model: the call whose result names it did not "
					"keep it (a reference a service echoed, or another run's file)",
					run.agent,
					ref,
				)
				continue
			try:
				stored = await files.open(ref, max_bytes=MAX_IMAGE_BYTES)
			except OpenMoltError as exc:  # too large, or gone from the store
				log.info("%s: the image %s is not shown to the model: %s", run.agent, ref, exc)
				continue
			media_type = _format(stored.data)
			if media_type is None:
				log.info("%s: %s is not a PNG, JPEG, GIF or WebP image: not shown", run.agent, ref)
				continue
			data = base64.b64encode(stored.data).decode("ascii")
			last.attachments.append(Attachment(media_type, data, image.get("name") or None))


def _images(result: Any) -> list[dict[str, Any]]:
	"""The images a tool's result holds: an image block, alone or among the result's blocks."""
	blocks: Any = result
	if isinstance(result, Mapping):
		blocks = result.get("content") if "structuredContent" in result else [result]
	if not isinstance(blocks, list):
		return []
	return [
		{"file": b["file"], "name": b.get("name") or ""}
		for b in blocks
		if isinstance(b, Mapping)
		and b.get("type") == "image"
		and isinstance(b.get("file"), str)
		and b["file"].startswith("openmolt-file:")
	]


def _kept_by(origin: Mapping[str, Any] | None, run_id: str, call: Any) -> bool:
	"""Whether a stored file was kept by this call of this run (fails closed on what is unknown)."""
	if origin is None or not isinstance(call, str):
		return False
	return origin.get("run") == run_id and origin.get("call") == call


def _format(data: bytes) -> str | None:
	"""The image format of some bytes, by their first bytes (None: not one of the four)."""
	if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
		return "image/webp"
	return next((kind for magic, kind in _FORMATS if data.startswith(magic)), None)


async def _list(binding: SourceBinding) -> Sequence[Tool]:
	try:
		return await binding.source.list_tools()
	except IntegrationError as exc:
		message = str(exc).removeprefix(f"{exc.integration}: ")
		raise IntegrationError(_redacted(binding, message), integration=binding.id) from None
	except OpenMoltError as exc:
		raise IntegrationError(_redacted(binding, str(exc)), integration=binding.id) from None
	except Exception as exc:
		message = f"its tools could not be listed: {type(exc).__name__}: {exc}"
		raise IntegrationError(_redacted(binding, message), integration=binding.id) from None


def _redacted(binding: SourceBinding, text: str) -> str:
	return Redactor(binding.context.redact)(text)


async def close_sources(sources: Iterable[ToolSource]) -> None:
	"""Close tool sources, shielded from cancellation so no service outlives its instance.

	A source that fails to close is logged and the others are still closed.
	"""
	import logging

	with anyio.CancelScope(shield=True):
		for source in list(sources):
			try:
				await source.aclose()
			except Exception:
				logging.getLogger("openmolt").exception("a tool source failed to close")
