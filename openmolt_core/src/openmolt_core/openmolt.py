"""`OpenMolt`: the instance that holds configuration, plugins, integrations and agents."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from openmolt_core.errors import ConfigurationError

if TYPE_CHECKING:
	from types import TracebackType

	import httpx
	from anyio.abc import TaskGroup
	from pydantic import BaseModel

	from openmolt_core._binding import BoundTool
	from openmolt_core._chain import ModelSlot
	from openmolt_core.accounts import Accounts
	from openmolt_core.agent import Agent, HumanInputHandler, Limits, MemoryConfig
	from openmolt_core.approvals import ApprovalHandler, Approvals
	from openmolt_core.capabilities import Observers
	from openmolt_core.capabilities.sources import SourceBinding
	from openmolt_core.conversation import RunConversation, Session
	from openmolt_core.credstore import CredentialStore
	from openmolt_core.durability import DurabilityBackend, DurabilityConfig, PendingRun
	from openmolt_core.files import FileStore, LocalFile
	from openmolt_core.guardrails import Guardrail
	from openmolt_core.hooks import Capability, CapabilityEntry, Hooks
	from openmolt_core.integrations._client import PooledTransport
	from openmolt_core.integrations.binding import IntegrationBinding
	from openmolt_core.integrations.model import Integration
	from openmolt_core.llm import CompactionConfig, LLMProvider, ModelConfig
	from openmolt_core.observe import RunObserver
	from openmolt_core.options import AgentConfig, AgentMemory, IntegrationEntry
	from openmolt_core.plugins import Plugins
	from openmolt_core.policy import ApprovalPolicy
	from openmolt_core.result import RunResult
	from openmolt_core.retry import RetryPolicy
	from openmolt_core.runstore import RunStore
	from openmolt_core.schedule import Clock
	from openmolt_core.scheduler import Schedule, Scheduler
	from openmolt_core.secrets import SecretSet
	from openmolt_core.skills import Skill
	from openmolt_core.subagents import AgentTool
	from openmolt_core.taint import TaintPolicy
	from openmolt_core.tools import Tool
	from openmolt_core.toolsearch import ToolLoading, ToolSearch

# Heavy modules (pydantic models, the loop, pluggy, croniter) load on first use, not at import:
# `from openmolt import OpenMolt` stays cheap, and a program pays only for what it uses.

__all__ = ["OpenMolt"]

log: logging.Logger = logging.getLogger("openmolt")


class OpenMolt:
	"""The entry point: configure providers and integrations once, then create agents.

	Args:
		llm_providers: Settings per provider name, e.g. ``{"openai": {"api_key": "..."}}``. Keys
			default to ``OPENMOLT_OPENAI_API_KEY``, ``OPENMOLT_ANTHROPIC_API_KEY`` and
			``OPENMOLT_GOOGLE_API_KEY``.
		integrations: Config per integration id (API keys and the like), shared by all agents;
			an agent's own credential config wins.
		max_steps: Default step budget of each agent.
		max_cost: Default cost budget of each agent's runs, in USD (None: none); see
			`create_agent`.
		verbose: Log each step and tool call of this instance's agents to stderr (other instances
			stay quiet; an agent's ``config={"verbose": ...}`` overrides it).
		plugins: Plugin modules or objects to use besides (or instead of) installed ones.
		entry_points: Whether to find installed plugins through entry points.
		http_client: An ``httpx.AsyncClient`` to use for every request (tests pass a mock one).
		files_dir: Where the file store keeps binary tool results (downloads, generated images);
			default: a temporary directory made on first use and removed by `aclose`.
		schedule_store: A SQLite file keeping the schedules' run history across restarts (so
			missed runs are noticed); without it the history is kept in memory.
		clock: The scheduler's clock (tests pass `openmolt_core.testing.FakeClock`).
		requires_approval: Approval rules for every agent of this instance, such as
			``["stripe:writes", "github:writes"]`` (see `openmolt_core.policy`); an agent's
			own rules add to them.
		approvals: Signs and checks approval decisions and keeps the ledger of decided calls
			(`openmolt_core.approvals.Approvals`; default: a random key, in memory).
		run_store: A SQLite file recording every run of this instance with its events (see
			`openmolt_core.runstore`; ``openmolt ui`` shows them).
		observers: Objects that hear every run (`openmolt_core.observe.RunObserver`): telemetry,
			the run viewer. More can be appended to ``om.observers`` later.
		durability: Make runs durable (``pip install "openmolt[dbos]"``): a SQLite file path,
			a ``postgresql://`` URL, or a dict with ``url`` and options (see
			docs/guides/durable.md). Runs then survive a crash, parked questions are answered
			from any process (`answer`), and schedules fire once across all workers. Without it
			(the default) everything runs in this process and nothing is installed.
		guardrails: Guardrails for every agent of this instance (`openmolt_core.guardrails`);
			an agent's own run after them.
		taint_policy: The default taint policy of this instance's agents
			(`openmolt_core.taint.TaintPolicy`, its fields as a dict, or ``"approve"``,
			``"refuse"``, ``"allow"``); an agent's own replaces it.
		retry: How HTTP calls that may succeed later are retried, by the integrations' tools
			and the built-in model providers alike: a `openmolt_core.retry.RetryPolicy` or a
			dict of its fields (``{"attempts": 6, "max_wait": 20}``); default: 4 attempts,
			waits of at most 30 s, 60 s in all. A provider's ``max_retries`` setting still
			sets its own number of attempts.
		credential_store: Where integration credentials from ``openmolt auth`` are kept
			(`openmolt_core.credstore`): a `CredentialStore`, a path to an encrypted file, or
			False for none. Default: the encrypted file ``openmolt auth`` writes, when it
			exists. Its values fill what the config and the environment leave out, join
			`secrets`, and refreshed tokens are saved back to it.
		capabilities: Behaviour attached to the runs of every agent of this instance
			(`openmolt_core.hooks.Capability` objects, or the names of capabilities plugins
			register, or ``{"name": ..., "options": {...}}``); they run before an agent's own.
		accounts: End users' accounts (`openmolt_core.accounts`): ``{"redirect_uri": ...,
			"key": ...}``, the redirect the services send users back to (``openmolt serve``
			answers at ``/auth/callback``) and the key that signs consent states (shared by
			processes that share runs). Default: ``OPENMOLT_AUTH_REDIRECT_URI`` and
			``OPENMOLT_AUTH_KEY``.
	"""

	def __init__(
		self,
		llm_providers: Mapping[str, Mapping[str, Any]] | None = None,
		integrations: Mapping[str, Mapping[str, Any]] | None = None,
		*,
		max_steps: int = 10,
		max_cost: float | None = None,
		verbose: bool = False,
		plugins: Sequence[object] = (),
		entry_points: bool = True,
		http_client: httpx.AsyncClient | None = None,
		files_dir: str | Path | None = None,
		schedule_store: str | Path | None = None,
		clock: Clock | None = None,
		requires_approval: bool | str | Sequence[str] | None = None,
		approvals: Approvals | None = None,
		run_store: str | Path | None = None,
		observers: Sequence[RunObserver] = (),
		durability: DurabilityConfig | None = None,
		guardrails: Sequence[Guardrail] = (),
		taint_policy: TaintPolicy | Mapping[str, Any] | str | bool | None = None,
		retry: RetryPolicy | Mapping[str, Any] | None = None,
		credential_store: CredentialStore | str | Path | bool | None = None,
		capabilities: Sequence[CapabilityEntry] = (),
		accounts: Mapping[str, Any] | None = None,
	) -> None:
		if max_steps < 1:
			raise ConfigurationError(f"max_steps must be at least 1, got {max_steps}")
		self.llm_providers: dict[str, dict[str, Any]] = {
			k: dict(v) for k, v in (llm_providers or {}).items()
		}
		self.integration_configs: dict[str, dict[str, Any]] = {
			k: dict(v) for k, v in (integrations or {}).items()
		}
		from openmolt_core.secrets import SecretSet

		self.secrets: SecretSet = SecretSet()
		"""Every secret this instance knows (`openmolt_core.secrets`): provider keys, integration
		credentials, MCP and bot secrets. Every agent's redactor, the run store, the events, the
		viewer, telemetry and the logging filter read it; add what else must never show."""
		self.secrets.add_once(self._configured_secrets)  # read at first use: creating stays cheap
		self.secrets.add_source(self._provider_secrets)
		self.max_steps = max_steps
		if max_cost is not None:
			_check_budget("max_cost", max_cost, "max_cost", "OpenMolt")
		self.max_cost: float | None = max_cost
		self.verbose = verbose
		self._retry: RetryPolicy | None = None  # None: the default, read at first use
		if retry is not None:  # checked now: a wrong option fails here
			from openmolt_core.retry import retry_policy

			self._retry = retry_policy(retry)
		self._plugin_options = (tuple(plugins), entry_points)
		self._plugins: Plugins | None = None
		self._http = http_client
		self._own_http = http_client is None
		self._transport: PooledTransport | None = None  # the pool of the client made here
		self._files_dir = files_dir
		self._files: FileStore | None = None
		self._auths: dict[tuple[str, str, str], Any] = {}
		# The default store is a file lookup: made at first use (`credential_store`), not here.
		self._default_credential_store = credential_store is None
		self._credential_store: CredentialStore | None = None
		if credential_store is not None:
			from openmolt_core.credstore import store_of

			self._credential_store = store_of(credential_store)
		self.secrets.add_once(self._stored_secrets)
		self._accounts_options = dict(accounts or {})
		self._accounts: Accounts | None = None
		self._store_option = credential_store
		self._tool_sources: dict[int, Any] = {}  # tool sources (MCP servers) agents use; see aclose
		self._providers: dict[str, LLMProvider] = {}
		self._prepared: set[tuple[Any, ...]] = set()
		self._models: dict[str, tuple[str, str, Any]] = {}
		self._prepare_lock: Any = None
		self._scheduler_options = (clock, schedule_store)
		self._scheduler: Scheduler | None = None
		self._task_group: TaskGroup | None = None
		self._approval_rules = requires_approval
		self._approvals = approvals
		self.observers: list[RunObserver] = list(observers)
		"""What hears every run (`openmolt_core.observe`); empty by default."""
		self.run_store: RunStore | None = None
		"""The run store given as ``run_store``, if any (it is also one of the observers)."""
		if run_store is not None:
			from openmolt_core.runstore import RunStore

			self.run_store = RunStore(run_store)
			self.observers.append(self.run_store)
		self._durability_config = durability
		self._durability: DurabilityBackend | None = None
		self._guardrails = _guardrails(guardrails, "OpenMolt")
		self._capabilities: tuple[CapabilityEntry, ...] = _capability_entries(
			capabilities, "OpenMolt"
		)
		# The compaction capabilities of this instance's agents, one per setting (shared).
		self._compactions: dict[tuple[Any, Any], Capability] = {}
		self._default_compaction: Capability | None = None  # compaction=True's, once known
		# The offload capabilities of this instance's agents, one per store and thresholds.
		self._offloads: dict[tuple[Any, ...], Capability] = {}
		self._observed: Observers | None = None
		# The capabilities of an agent with no option that adds any (observers, compaction).
		self._plain_caps: tuple[Capability, ...] | None = None
		self._plain_taint: TaintPolicy | None = None  # the instance's policy, when it has no rules
		self._hooks: dict[tuple[int | None, ...], tuple[tuple[Any, ...], Hooks]] = {}
		self._taint_policy = taint_policy
		if verbose:
			from openmolt_core import _verbose

			_verbose.enable()

	@staticmethod
	def of(agent: Agent) -> OpenMolt:
		"""The instance that owns an agent: ``agent.om``, typed as this class.

		The kernel types ``agent.om`` by what it needs of it (`openmolt_core.agent.Instance`);
		code that uses more of the instance (its run store, observers, ``result``...) reads it
		here. Nothing is checked at run time: an agent made by ``create_agent`` belongs to an
		``OpenMolt``, and a stand-in (a test's) is returned as it is.

		Args:
			agent: An agent created by ``create_agent``.
		"""
		return cast("OpenMolt", agent.om)

	@property
	def plugins(self) -> Plugins:
		"""The plugins of this instance (loaded lazily, each on first use)."""
		if self._plugins is None:
			from openmolt_core.plugins import Plugins

			plugins, entry_points = self._plugin_options
			self._plugins = Plugins(plugins, entry_points=entry_points)
		return self._plugins

	@property
	def scheduler(self) -> Scheduler:
		"""The scheduler that keeps this instance's schedules."""
		if self._scheduler is None:
			from openmolt_core.scheduler import instance_scheduler

			clock, store = self._scheduler_options
			self._scheduler = instance_scheduler(self, self.durability, clock=clock, store=store)
			if self._task_group is not None:  # inside `async with om:`: serve from now on
				self._scheduler.expect_serving()
				self._task_group.start_soon(self._serve_late, self._scheduler)
		return self._scheduler

	async def _serve_late(self, scheduler: Scheduler) -> None:
		if self._task_group is not None:  # not if the block ended before this task started
			await scheduler.serve()

	@property
	def credential_store(self) -> CredentialStore | None:
		"""The credential store integrations read after their config and the environment.

		The default one (the file ``openmolt auth`` writes, when it exists) is looked up here, at
		first use: creating an instance touches no file.
		"""
		if self._default_credential_store:
			self._default_credential_store = False
			from openmolt_core.credstore import store_of

			self._credential_store = store_of(None)
		return self._credential_store

	@credential_store.setter
	def credential_store(self, store: CredentialStore | None) -> None:
		self._default_credential_store = False
		self._credential_store = store

	@property
	def retry(self) -> RetryPolicy:
		"""The retry policy of every HTTP call of this instance (tools and providers)."""
		if self._retry is None:
			from openmolt_core.retry import DEFAULT_RETRY

			self._retry = DEFAULT_RETRY
		return self._retry

	@retry.setter
	def retry(self, policy: RetryPolicy) -> None:
		self._retry = policy

	@property
	def approvals(self) -> Approvals:
		"""What signs and checks this instance's approval decisions (made on first use)."""
		if self._approvals is None:
			from openmolt_core.approvals import Approvals

			self._approvals = Approvals()
		return self._approvals

	@property
	def accounts(self) -> Accounts:
		"""End users' accounts: consent URLs and the callback that completes them (`openmolt_core.accounts`)."""
		if self._accounts is None:
			from openmolt_core.accounts import Accounts, check_options

			self._accounts = Accounts(
				spec_of=self.plugins.integration,
				configs=self.integration_configs,
				store=self._users_store,
				http=self.http,
				secrets=self.secrets,
				**check_options(self._accounts_options),
			)
		return self._accounts

	def _users_store(self) -> CredentialStore | None:
		# End users connect at run time: the default file is made then, unless turned off.
		if self.credential_store is None and self._store_option is None:
			from openmolt_core.credstore import EncryptedFileStore

			self.credential_store = EncryptedFileStore()
		return self.credential_store

	# sessions -----------------------------------------------------------------------------

	def conversation(self, agent: Agent, session: Session) -> RunConversation:
		"""A run's part in ``session``: what the loop opens and closes (``run(session=...)``).

		The agent asks for one per run with a session; the default reads and appends the
		session's items as `openmolt_core.sessions` describes (`SessionRun`).

		Args:
			agent: The agent whose run it is.
			session: The conversation's store.
		"""
		from openmolt_core.sessions import SessionRun

		return SessionRun(agent, session)

	# durability ---------------------------------------------------------------------------

	@property
	def durability(self) -> DurabilityBackend | None:
		"""The durability backend (``openmolt-dbos``), or None when runs are not durable."""
		if self._durability is None and self._durability_config is not None:
			from openmolt_core._durable import load_backend

			self._durability = load_backend(self, self._durability_config)
		return self._durability

	def use_durability(self, durability: DurabilityConfig) -> None:
		"""Make this instance's runs durable after it was made (``openmolt worker`` does this).

		Call it before the first run or schedule; agents created earlier must then be
		registered with ``om.durability.register(agent)`` (the worker does both).

		Args:
			durability: As for the constructor's ``durability``.

		Raises:
			ConfigurationError: Runs or schedules of this instance have already started.
		"""
		if self._durability is not None or self._scheduler is not None:
			raise ConfigurationError(
				"use_durability: this instance already runs; give durability=... to OpenMolt()"
			)
		self._durability_config = durability

	def _durable(self, what: str) -> DurabilityBackend:
		from openmolt_core._durable import required

		return required(self.durability, what)

	async def answer(self, run_id: str, text: str, *, step: int | None = None) -> None:
		"""Answer the question a durable run is parked on; the run goes on wherever it lives.

		Works from any process that shares the durable store, with or without a worker
		running: the run picks the answer up when a worker (or this process) runs it.

		Args:
			run_id: The run's id (``result.state.run_id``, `pending`, ``openmolt runs``).
			text: The answer.
			step: The step of the question this answers (`PendingRun.step`, as `pending` shows
				it): an answer for a question that is no longer the pending one is refused
				instead of answering the run's next question. None: the question pending now.

		Raises:
			ConfigurationError: Durability is off, or the run waits for no answer.
			AlreadyAnsweredError: Another answer to the question won (also when ``step`` names
				a question the run has moved past).
		"""
		backend = self._durable("om.answer")
		if step is None:
			await backend.answer(run_id, text)
		else:
			await backend.answer(run_id, text, step=step)

	async def pending(self, *, agent: str | None = None) -> list[PendingRun]:
		"""The durable runs parked on a question, oldest first.

		Args:
			agent: Only this agent's runs.

		Raises:
			ConfigurationError: Durability is off.
		"""
		return await self._durable("om.pending").pending(agent=agent)

	async def result(self, run_id: str, *, wait: bool = True) -> RunResult | None:
		"""The result of a durable run, from any process.

		Args:
			run_id: The run's id.
			wait: Wait until the run ends (or parks on a question); otherwise None while it runs.

		Raises:
			RunError: The run ended on an error (with its state, to resume from).
			ConfigurationError: Durability is off, or no run has that id.
		"""
		return await self._durable("om.result").result(run_id, wait=wait)

	# HTTP ---------------------------------------------------------------------------------

	def http(self) -> httpx.AsyncClient:
		"""The shared HTTP client, created on first use."""
		if self._http is None:
			from openmolt_core.integrations._client import PooledTransport, new_client

			self._transport = PooledTransport()
			self._http = new_client(self._transport)
		return self._http

	def _model_http(self) -> httpx.AsyncClient:
		"""The client a provider sends model requests with; tests may forbid real ones.

		With ``openmolt_core.testing.ALLOW_MODEL_REQUESTS`` off (the pytest plugin's default), an
		instance that would send through its own client (to a real server) refuses; one given an
		``http_client=`` (a mock) sends as usual.
		"""
		testing = sys.modules.get("openmolt_core.testing")
		if testing is not None and self._own_http and not testing.ALLOW_MODEL_REQUESTS:
			raise testing.ModelRequestsDisallowedError(
				"a real model request in a test: pass OpenMolt(http_client=...) a mock client "
				"(the mock_http fixture), use a ScriptedModel, or mark the test "
				"@pytest.mark.allow_model_requests"
			)
		return self.http()

	@property
	def files(self) -> FileStore:
		"""The file store (binary results, file references); no directory is made until a save."""
		if self._files is None:
			from openmolt_core.files import FileStore

			where = self._files_dir
			if where is None and self._durability_config is not None:
				backend = self.durability  # a durable run's files outlive the process
				where = backend.files_dir if backend is not None else None
			self._files = FileStore(where, file_system=self._file_system_path)
		return self._files

	def _file_system_path(self, path: str) -> LocalFile:
		from openmolt_core.integrations.filesystem import sandbox_of

		return sandbox_of(self.plugins.integration("fileSystem")).file(path)

	async def aclose(self) -> None:
		"""Stop tool sources (MCP servers), close the HTTP client if OpenMolt made it, remove temp files.

		Warns with `openmolt_core.scheduler.ScheduleWarning` when schedules were added but the
		instance never served them.
		"""
		if self._scheduler is not None:
			from openmolt_core.scheduler import warn_unserved

			warn_unserved(self._scheduler)
		if self._tool_sources:
			from openmolt_core.capabilities.sources import close_sources

			await close_sources(self._tool_sources.values())
		if self._files is not None:
			self._files.close()
		if self._durability is not None:
			await self._durability.aclose()
		if self._own_http and self._http is not None:
			import anyio

			# Forget the client first and close it shielded: a cancelled close (an `async with
			# om:` ended by cancellation) must not leave a closed client behind for later use.
			client, self._http = self._http, None
			self._prepared.clear()
			with anyio.CancelScope(shield=True):
				await client.aclose()

	async def __aenter__(self) -> OpenMolt:
		"""Open a task group and start the schedules in it; they stop when the block ends.

		The scheduler (and its imports) is made only when an agent has a schedule, here or later
		inside the block: a program that only runs agents does not pay for it.
		"""
		import anyio

		if self._task_group is not None:
			raise RuntimeError("this OpenMolt instance is already entered")
		tg = anyio.create_task_group()
		await tg.__aenter__()
		self._task_group = tg
		try:
			if self.durability is not None:
				await self.durability.start()  # recover this process's unfinished runs
			if self._scheduler is not None:
				await tg.start(self._scheduler.serve)
		except BaseException as exc:
			self._task_group = None
			await tg.__aexit__(type(exc), exc, exc.__traceback__)
			raise
		return self

	async def __aexit__(
		self,
		exc_type: type[BaseException] | None,
		exc: BaseException | None,
		tb: TracebackType | None,
	) -> bool | None:
		"""Stop the schedules (cancelling runs in flight), then close the HTTP client.

		An exception from the block comes out as itself, not wrapped in an ``ExceptionGroup``:
		``except ValueError`` around ``async with om:`` catches a ``ValueError`` from inside.
		"""
		tg, self._task_group = self._task_group, None
		try:
			if tg is not None:
				if self._scheduler is not None:
					self._scheduler.stop(cancel_running=True)
				try:
					return await tg.__aexit__(exc_type, exc, tb)
				except BaseExceptionGroup as group:
					single = _single(group)
					if single is None:
						raise
					raise single from single.__cause__
			return None
		finally:
			await self.aclose()

	# schedules ----------------------------------------------------------------------------

	@property
	def schedules(self) -> list[Schedule]:
		"""Every schedule of every agent of this instance."""
		if self._scheduler is None:  # none was added: the scheduler is made by the first
			return []
		return self.scheduler.schedules

	async def start(self, task_group: TaskGroup) -> None:
		"""Run the schedules in the caller's task group until `stop` (for embedding apps).

		Args:
			task_group: The application's task group; the scheduler runs as one of its tasks.
		"""
		await task_group.start(self.scheduler.serve)

	async def stop(self, *, cancel_running: bool = False) -> None:
		"""Stop the schedules started with `start` or `run_schedules`, and wait until they are.

		Args:
			cancel_running: Cancel runs in flight instead of letting them finish.
		"""
		self.scheduler.stop(cancel_running=cancel_running)
		await self.scheduler.wait_closed()

	async def run_schedules(self) -> None:
		"""Run the schedules in the current task until `stop` is called (the CLI uses this)."""
		await self.scheduler.serve()

	async def prepare(self, *, provider: str | None = None, http_tools: bool = False) -> None:
		"""Load what a first run needs in a worker thread, so the event loop never blocks on it.

		The first run of a process imports the provider, the HTTP stack and (for HTTP tools) the
		template engine: hundreds of milliseconds that would stall every other task of the event
		loop. `Agent.run` calls this once per provider; later calls cost a dictionary lookup.
		(The CA bundle is read at the first TLS handshake: one C call that holds the GIL for
		tens of milliseconds, in a thread or not; that one pause per process remains, and a
		process that only speaks plain HTTP never pays it.)

		Args:
			provider: The provider name the run will use, if any.
			http_tools: Whether the run has HTTP tools.
		"""
		loop = _current_loop()
		key = (provider, http_tools, id(loop))
		if key in self._prepared:
			return
		import anyio

		if self._prepare_lock is None:
			self._prepare_lock = anyio.Lock()
		async with self._prepare_lock:
			if key in self._prepared:
				return
			await anyio.to_thread.run_sync(self._prepare_sync, provider, http_tools, loop)
			self._prepared.add(key)

	def _prepare_sync(self, provider: str | None, http_tools: bool, loop: Any) -> None:
		if provider is not None:
			self.provider(provider)
		self.http()
		if self._transport is not None:  # a client passed in is the caller's to warm up
			self._transport.prepare(loop)
		if http_tools:
			import openmolt_core.integrations.http  # noqa: F401  # the engine and its template library

	# integrations and providers -----------------------------------------------------------

	def register_integration(self, id: str, integration: Integration | Mapping[str, Any]) -> None:
		"""Make an integration available to agents under ``id`` (the spec's ``registerIntegration``).

		Args:
			id: The id agents use in ``integrations=[...]`` and tool handles (``id.tool``).
			integration: An `Integration` or the spec's dict (camelCase keys accepted).

		Raises:
			ConfigurationError: The definition is invalid; the message names the field.
		"""
		spec = self.plugins.add_integration(integration, id=id)
		held = getattr(spec.source, "secrets", None)  # an MCP server's env, headers, ${VAR}s
		if held:
			self.secrets.add(*held)

	def provider(self, name: str) -> LLMProvider:
		"""The provider instance for a name (``openai``), created on first use.

		Raises:
			PluginError: No plugin provides it.
		"""
		provider = self._providers.get(name)
		if provider is None:
			plugin, settings = self._instance(name)
			provider = self.plugins.build_provider(
				plugin, settings, self._model_http, name=name, retry=self.retry
			)
			self._providers[name] = provider
			import os

			from openmolt_core._envvars import env_var  # not .integrations: no template engine

			self.secrets.add(os.environ.get(env_var(name)), os.environ.get(env_var(plugin)))
		return provider

	def _stored_secrets(self) -> set[str]:
		"""Every secret value in the credential store, bound or not; nothing if it cannot be read."""
		if self._default_credential_store:  # the default file: looked for before loading a store
			from openmolt_core.secrets import default_credentials_path

			if not default_credentials_path().exists():
				return set()
		store = self.credential_store
		found: set[str] = set()
		if store is None:
			return found
		from openmolt_core._binding import secret_values

		try:
			for integration, user in store.entries():
				found |= secret_values(store.load(integration, user) or {})
		except Exception:  # no key, another key: agents that need the store say so by name
			log.debug("the credential store could not be read for the secret set")
		return found

	def _configured_secrets(self) -> set[str]:
		"""The keys of ``llm_providers`` and ``integrations``, and secret-named environment variables."""
		from openmolt_core._binding import secret_values
		from openmolt_core.secrets import environment_secrets, settings_secrets

		found = environment_secrets()
		for settings in self.llm_providers.values():
			found |= settings_secrets(settings)
		for config in self.integration_configs.values():
			found |= secret_values(config)
		return found

	def _provider_secrets(self) -> set[str]:
		"""The keys the providers made so far hold (a key read from the environment later)."""
		out: set[str] = set()
		for provider in list(self._providers.values()):
			held = getattr(provider, "secrets", None)
			if callable(held):
				out.update(held())
		return out

	def _instance(self, name: str) -> tuple[str, dict[str, Any]]:
		"""The plugin behind a provider name and its settings (``provider`` names the plugin).

		``llm_providers={"ollama": {"provider": "openai", "base_url": ...}}`` makes ``ollama`` an
		instance of the ``openai`` plugin; without ``provider`` the name is the plugin's own.
		"""
		settings = dict(self.llm_providers.get(name, {}))
		plugin = settings.pop("provider", None) or name
		if not isinstance(plugin, str):
			raise ConfigurationError(
				f"llm_providers[{name!r}]['provider'] must be a provider name such as 'openai'"
			)
		return plugin, settings

	# agents -------------------------------------------------------------------------------

	def create_agent(
		self,
		*,
		name: str,
		model: str | LLMProvider | Sequence[str | LLMProvider],
		instructions: str | None = None,
		instructions_path: str | Path | None = None,
		model_config: ModelConfig | Mapping[str, Any] | None = None,
		config: AgentConfig | Mapping[str, Any] | None = None,
		integrations: Sequence[str | IntegrationEntry | Mapping[str, Any]] = (),
		tools: Sequence[Tool | Agent | Callable[..., Any]] = (),
		memory: AgentMemory | MemoryConfig | None = None,
		on_human_input_request: HumanInputHandler | bool | None = None,
		requires_approval: bool | str | Sequence[str] | ApprovalPolicy | None = None,
		on_approval_request: ApprovalHandler | None = None,
		guardrails: Sequence[Guardrail] = (),
		taint_policy: TaintPolicy | Mapping[str, Any] | str | bool | None = None,
		output_schema: type[BaseModel] | dict[str, Any] | None = None,
		max_steps: int | None = None,
		max_tokens: int | None = None,
		timeout: float | None = None,
		max_cost: float | None = None,
		compaction: CompactionConfig | Mapping[str, Any] | bool = True,
		skills: Sequence[str | Path | Skill | Mapping[str, Any]] = (),
		fallback_models: Sequence[str | LLMProvider] = (),
		tool_loading: ToolLoading | ToolSearch = "all",
		capabilities: Sequence[CapabilityEntry] = (),
	) -> Agent:
		"""Create an agent. Creating one never touches the network.

		Args:
			name: The agent's name.
			model: ``"provider:model"`` (``"openai:gpt-5-mini"``), or a provider object; or a
				list of them, tried in order when one fails for good (`openmolt_core.fallback`).
			instructions: What the agent must do.
			instructions_path: A file to read the instructions from instead.
			model_config: Standard model settings: thinking, search, temperature, max_output_tokens,
				top_p, stop, provider_options.
			config: Overrides of this instance's settings for this agent, as the spec's
				``config`` ("adjust the constructor's config"): an
				`openmolt_core.options.AgentConfig` or a dict of its fields, in camelCase or
				snake_case (``max_steps``, ``max_tokens``, ``timeout``, ``verbose``, the caps of
				`openmolt_core.agent.Limits`, and ``max_result_chars_per_tool``: thresholds by
				tool handle or pattern, see `openmolt_core.offload`). Explicit keyword arguments
				win.
			integrations: Integration ids, or `openmolt_core.options.IntegrationEntry` objects
				or dicts ``{"integration", "credential": {"type", "config",
				"on_token_refresh"}, "scopes"}``.
			tools: Extra tools, visible as ``local.<handle>``: `Tool` objects, other agents
				(`openmolt_core.subagents`), or plain (sync or async) functions, whose input
				schema comes from their signature (see `openmolt_core.tools.tool`).
			memory: An `openmolt_core.options.AgentMemory` or a dict ``{"long_term": {"data",
				"on_update"}, "short_term": {...}}`` (camelCase accepted).
			on_human_input_request: Answers the agent's questions (sync or async, takes the
				question, returns the answer); None or False disables ``requestHumanInput``.
			requires_approval: Which tool calls wait for a decision: True (all), a rule or a
				list of rules (``"stripe:writes"``, ``"local.send_email"``...; see
				`openmolt_core.policy`), added to the instance's.
			on_approval_request: Decides those calls (sync or async; takes an
				`openmolt_core.approvals.ApprovalRequest`, returns ``request.approve()`` or
				``request.deny(reason)``); without it a call that needs a decision parks the run
				with status ``approval_required``.
			guardrails: Checks around the input, tool calls, their results and the output
				(`openmolt_core.guardrails`), after the instance's.
			taint_policy: What a run that read untrusted content may still send out, and which
				tools count as private, untrusted or outbound (`openmolt_core.taint`): a
				`openmolt_core.taint.TaintPolicy`, its fields as a dict, or ``"approve"`` (the
				default), ``"refuse"``, ``"allow"``; replaces the instance's.
			output_schema: A pydantic model class or JSON Schema the final output must match.
			max_steps: The most model calls a run makes (default: the instance's); the last one
				is told it is the last.
			max_tokens: Tokens over the run (input + output) after which no model call starts.
			timeout: Seconds the whole run may take (model calls, tools, waits, a person's answer).
			max_cost: USD a run may spend on model calls, sub-agents' included (default: the
				instance's): no call starts once it is spent, and a call expected to cross it
				is told it is the last. Every model of the agent (fallbacks and sub-agents too)
				must have a known price.
			compaction: How long runs summarise their older steps (`openmolt_core.compaction`):
				True (the default settings), False (never), a `CompactionConfig`, or its fields
				as a dict (``{"threshold_tokens": 50000, "keep_steps": 6, "model":
				"openai:gpt-5-nano"}``).
			skills: Skill folders (a folder with a ``SKILL.md``, or a folder of them), names of
				skills plugins provide (``"pdf-forms"``, else a folder of that name), or `Skill`
				objects (`openmolt_core.skills`); the model loads them on demand with the
				``skills.load`` tool.
			fallback_models: Models to try, in order, after ``model`` (same as giving a list).
			tool_loading: ``"all"`` lists every tool in the first message; ``"search"`` shows a
				catalog and built-in tools to search and load tools; ``"auto"`` searches when the
				agent has more than 30 tools; a `openmolt_core.toolsearch.ToolSearch` sets the
				searcher (embeddings), pinned tools and limits.
			capabilities: Behaviour attached to the agent's runs (`openmolt_core.hooks`):
				`Capability` objects, names of capabilities plugins register, or ``{"name":
				..., "options": {...}}``; they run after the instance's, in list order.

		Raises:
			ConfigurationError: An option is wrong; the message names it and the fix.
			PluginError: The provider, an integration or a capability is not installed.
		"""
		from openmolt_core._binding import bind_tools
		from openmolt_core.agent import Agent, Limits
		from openmolt_core.llm import DEFAULT_MODEL_CONFIG

		if not name:
			raise ConfigurationError("create_agent: 'name' must not be empty")
		if instructions is not None and instructions_path is not None:
			raise ConfigurationError(
				"create_agent: give 'instructions' or 'instructions_path', not both"
			)
		if instructions_path is not None:
			try:
				instructions = Path(instructions_path).read_text(encoding="utf-8")
			except OSError as exc:
				raise ConfigurationError(
					f"create_agent: instructions_path {str(instructions_path)!r} cannot be read: {exc.strerror}"
				) from exc
		mc = DEFAULT_MODEL_CONFIG if model_config is None else _model_config(model_config)
		if isinstance(model, str) and not fallback_models:  # the common case: one model
			models: list[str | LLMProvider] = [model]
			chain: list[ModelSlot] = []
		else:
			models, chain = self._model_chain(model, fallback_models)
		provider_name, model_name, provider_factory = self._resolve_model(models[0])
		search = None if tool_loading == "all" else _tool_search(tool_loading)
		bound: list[BoundTool] = []
		bindings = _parse_bindings(integrations) if integrations else []
		if memory is not None:
			from openmolt_core.options import AgentMemory, parse_options

			memory = parse_options(AgentMemory, memory, "create_agent: memory")
		files = self.files.for_agent(
			allow_file_system=bool(bindings)
			and any(
				b.integration == "fileSystem" and (b.scopes is None or "read" in b.scopes)
				for b in bindings
			)
		)
		sources = self._bind_integrations(name, bindings, bound, files) if bindings else []
		if tools:
			bound.extend(bind_tools(tools, agent=name, http=self.http, files=files))
		caps = self._agent_capabilities(
			name,
			models[0],
			bindings,
			bound,
			capabilities=capabilities,
			skills=skills,
			compaction=compaction,
			files=files,
			sources=sources,
		)
		handles = [t.handle for t in bound]
		if len(set(handles)) != len(handles):
			duplicates = {h for h in handles if handles.count(h) > 1}
			raise ConfigurationError(
				f"create_agent: tool handle(s) {sorted(duplicates)} given twice"
			)
		if isinstance(output_schema, dict):
			from openmolt_core._support.metaschema import check_schema

			if problems := check_schema(output_schema):
				raise ConfigurationError(
					"create_agent: output_schema is not a valid JSON Schema: "
					+ "; ".join(f"output_schema: {p}" for p in problems)
				)
		elif output_schema is not None:
			from pydantic import BaseModel

			if not (isinstance(output_schema, type) and issubclass(output_schema, BaseModel)):
				raise ConfigurationError(
					"create_agent: output_schema must be a pydantic model class or a JSON Schema dict"
				)
		for option, value in (
			("max_steps", max_steps),
			("max_tokens", max_tokens),
			("timeout", timeout),
			("max_cost", max_cost),
		):
			if value is not None:
				_check_budget(option, value, option)
		limits: Limits | None = None
		if config:  # explicit keywords win over its settings
			settings = _agent_config(config)
			if max_steps is None:
				max_steps = settings.max_steps
			if max_tokens is None:
				max_tokens = settings.max_tokens
			if timeout is None:
				timeout = settings.timeout
			if max_cost is None:
				max_cost = settings.max_cost
			if settings.verbose:
				from openmolt_core import _verbose

				_verbose.enable()
			caps_given = settings.limits()
			limits = Limits(**caps_given) if caps_given else None
		if max_cost is None:
			max_cost = self.max_cost
		handler = on_human_input_request if callable(on_human_input_request) else None
		if on_human_input_request is True:
			raise ConfigurationError(
				"create_agent: on_human_input_request must be a function that answers, or False"
			)
		caps.append(self._offload_capability(files, limits))
		_register_secrets(self.secrets, [t.context for t in bound], sources)
		known = lambda: _known_tools(bound, sources)  # noqa: E731  # for rules, when given
		policy = _approval_policy(self._approval_rules, requires_approval, known)
		taint = self._plain_taint if taint_policy is None else None
		if taint is None:
			taint = _taint_policy(self._taint_policy, taint_policy, known)
			if taint_policy is None and not (taint.untrusted or taint.private or taint.outbound):
				self._plain_taint = taint  # checked against no tool: the same for every agent
		guards = self._guardrails + _guardrails(guardrails, "create_agent")
		own: list[Capability] = []  # this agent's, after the shared (then its safety)
		if policy:  # first: it marks the tools the rules select before the others see them
			from openmolt_core.capabilities.approvals import ApprovalRules

			own.append(ApprovalRules(policy))
		if search is not None:  # after offload: it says why readResult is hidden first
			from openmolt_core.capabilities.safety import Safety
			from openmolt_core.capabilities.toolsearch import ToolCatalog

			own.append(ToolCatalog(search, own=[*(type(c).name for c in caps), Safety.name]))
		agent = Agent(
			self,
			name=name,
			provider_name=provider_name,
			provider=provider_factory,
			model=model_name,
			model_config=mc,
			instructions=instructions or "",
			tools=bound,
			output_schema=output_schema,
			memory=memory,
			on_human_input_request=handler,
			config=_config_dict(config) if config else None,
			max_steps=max_steps if max_steps is not None else self.max_steps,
			max_tokens=max_tokens,
			timeout=timeout,
			max_cost=max_cost,
			limits=limits,
			on_approval_request=on_approval_request,
			fallback=chain,
			files=files,
			capabilities=self._resolved(caps, own, guards, taint),
		)
		if tools and agent.sub_agents:  # agents given as tools must not reach this one again
			from openmolt_core.subagents import check_cycles

			check_cycles(agent)
		if max_cost is not None:  # an unknown price would count as zero: refused now
			_check_prices(agent)
		if self._durability_config is not None:
			self._durable("create_agent").register(agent)  # runs recover by agent name
		return agent

	def agent_tool(
		self,
		agent: Agent,
		*,
		name: str | None = None,
		description: str | None = None,
		input_schema: dict[str, Any] | None = None,
	) -> AgentTool:
		"""An agent as a tool for another agent: what ``agent.as_tool(...)`` returns.

		Args:
			agent: The agent each call runs (nested in the calling run).
			name: The tool's handle (default: the agent's name as an identifier).
			description: What it does, for the calling model (default: from the instructions).
			input_schema: The tool's input (default: ``{"task": str}``, given as the input).
		"""
		from openmolt_core.subagents import TASK_SCHEMA, AgentTool

		return AgentTool(agent, name or "", description or "", dict(input_schema or TASK_SCHEMA))

	def _bind_integrations(
		self, name: str, bindings: Sequence[Any], bound: list[BoundTool], files: FileStore
	) -> list[SourceBinding]:
		"""Bind an agent's integrations into ``bound``; return the run-time sources (MCP servers).

		Integrations bound with ``account: "user"`` get the end user's account per call.
		"""
		from openmolt_core.integrations.binding import bind_integration

		sources: list[SourceBinding] = []
		for binding in bindings:
			spec = self.plugins.integration(binding.integration)
			binding.integration = spec.id or binding.integration  # "google-drive" → "googleDrive"
			if spec.source is not None:  # its tools are listed at run time (an MCP server)
				sources.append(_bind_source(self, spec, binding, name, files))
				continue
			_refuse_misspelled(spec, binding, self.integration_configs)
			added = len(bound)
			bound.extend(
				bind_integration(
					spec,
					binding,
					agent=name,
					instance_config=self.integration_configs.get(binding.integration, {}),
					http=self.http,
					files=files,
					auth_cache=self._auths,
					retry=self.retry,
					store=self.credential_store,
				)
			)
			if binding.account == "user":  # each run's end user's credential, per call
				account = self.accounts.for_binding(
					spec, binding.integration, binding.credential_type, binding.scopes
				)
				for tool in bound[added:]:
					tool.account = account
		return sources

	def _agent_capabilities(
		self,
		name: str,
		model: str | LLMProvider,
		bindings: Sequence[Any],
		bound: list[BoundTool],
		*,
		capabilities: Sequence[CapabilityEntry],
		skills: Sequence[str | Path | Skill | Mapping[str, Any]],
		compaction: CompactionConfig | Mapping[str, Any] | bool,
		files: FileStore,
		sources: Sequence[SourceBinding] = (),
	) -> list[Capability]:
		"""An agent's capabilities, in hook order, and their tools bound into ``bound``.

		The run observers first (outermost), then the instance's, then the agent's: the sugar of
		the keyword options (skills, end users' accounts, the integrations whose tools are listed
		at run time) before the ones given, compaction last.

		Returns:
			The capabilities (the instance's observers and compaction are shared objects).
		"""
		plain = compaction is True and not (
			bindings or sources or capabilities or skills or self._capabilities
		)
		if plain and self._plain_caps is not None:  # the common agent: found at once
			return list(self._plain_caps)
		observed = self._observed
		if observed is None:  # the run store, viewer, telemetry: one for the instance's agents
			from openmolt_core.capabilities import Observers

			observed = self._observed = Observers(lambda: self.observers)
		own: list[Capability] = []
		if any(b.account == "user" for b in bindings):  # calls wait for their user's account
			from openmolt_core.capabilities.accounts import EndUserAccounts

			own.append(EndUserAccounts())
		if sources:  # tools listed at the start of each run (MCP servers)
			from openmolt_core.capabilities.sources import Sources

			own.append(Sources(sources))
		agent_skills = self._skills(skills)
		if agent_skills:
			from openmolt_core.capabilities.skills import Skills

			own.insert(0, Skills(agent_skills))
		entries = self._capabilities
		if capabilities:
			entries = (*entries, *_capability_entries(capabilities, "create_agent"))
		given = self._capabilities_of(entries) if entries else []
		instance = given[: len(self._capabilities)]
		caps: list[Capability] = [observed, *instance, *own, *given[len(instance) :]]
		if bindings:  # outermost: a run missing a credential never starts (nor is observed)
			from openmolt_core.capabilities.credentials import CREDENTIAL_CHECK

			caps.insert(0, CREDENTIAL_CHECK)
		compacting = self._compactor_capability(compaction)
		if compacting is not None:
			caps.append(compacting)
		from openmolt_core.hooks import AgentInfo, builds

		_check_capability_names(caps, bindings)
		if plain and not any(builds(cap, "tools") for cap in caps):
			self._plain_caps = tuple(caps)
		for cap in caps:
			if not builds(cap, "tools"):
				continue
			callable_now = tuple(t.handle for t in bound if t.allowed)
			extra = cap.tools(AgentInfo(name, callable_now, _model_id(model)))
			if extra:
				from openmolt_core._binding import bind_tools

				bound.extend(
					bind_tools(
						list(extra), agent=name, http=self.http, files=files, prefix=cap.name
					)
				)
		return caps

	def _resolved(
		self,
		caps: Sequence[Capability],
		own: Sequence[Capability],
		guardrails: tuple[Guardrail, ...],
		policy: TaintPolicy,
	) -> Hooks:
		"""The hooks of these capabilities, then the agent's own (approvals, tool search), then safety.

		Agents with the same capabilities share their resolved hooks (they are fixed); with the
		same safety settings too, and no capability of their own, the safety is shared as well
		and so are the whole hooks. An agent with capabilities of its own (they know its tools),
		or whose capabilities list tools at run time, has them and a safety of its own (it
		remembers whether it warned of the trifecta) added to the shared ones. The shared hooks
		end with the approvals gate (`ApprovalGate`).
		"""
		key = (*map(id, caps), None, id(policy), *map(id, guardrails))  # None: not an id
		found = self._hooks.get(key) if not own else None
		if found is not None:  # it holds the objects of its key: their ids are still theirs
			return found[1]
		from openmolt_core.capabilities import ApprovalGate
		from openmolt_core.capabilities.safety import Safety
		from openmolt_core.hooks import Hooks

		base_key = tuple(map(id, caps))
		found = self._hooks.get(base_key)
		if found is None:
			base = Hooks((*caps, ApprovalGate()))  # every agent: its safety may hand it a call
			if len(self._hooks) < 64:  # the common sets (observers, compaction, skills...)
				self._hooks[base_key] = (tuple(caps), base)
		else:
			base = found[1]
		if own or base.list_tools:
			for cap in own:
				base = base.adding(cap)
			return base.adding(Safety(guardrails, policy))
		hooks = base.adding(Safety(guardrails, policy, shared=True))
		if len(self._hooks) < 64:
			self._hooks[key] = ((*caps, policy, *guardrails), hooks)
		return hooks

	def _offload_capability(self, files: FileStore, limits: Limits | None) -> Capability:
		"""The offload of large results; agents with the same store and thresholds share one."""
		per_tool: Mapping[str, int] = {}
		limit: int | None = None
		key: tuple[Any, ...] = (id(files), None)  # the common case: the default thresholds
		if limits is not None:
			per_tool, limit = limits.max_result_chars_per_tool, limits.max_result_chars
			key = (id(files), limit, *sorted(per_tool.items()))
		shared = self._offloads.get(key)
		if shared is None:
			from openmolt_core.agent import Limits
			from openmolt_core.capabilities import Offload, OffloadResults

			limit = limit if limit is not None else Limits().max_result_chars
			offload = Offload(files, limit=limit, per_tool=per_tool)
			shared = self._offloads[key] = OffloadResults(offload)
		return shared

	def _compactor_capability(
		self, option: CompactionConfig | Mapping[str, Any] | bool
	) -> Capability | None:
		"""The compaction capability (None: none); agents with the same settings share one.

		It keeps nothing of an agent; the default's (``compaction=True``) is found at once.
		"""
		if option is True and self._default_compaction is not None:
			return self._default_compaction
		config, compactor = self._compaction(option)
		if config is None:
			return None
		from openmolt_core.capabilities import Compaction

		key = (config, compactor)
		shared = self._compactions.get(key)
		if shared is None:
			shared = self._compactions[key] = Compaction(config, compactor)
		if option is True:
			self._default_compaction = shared
		return shared

	def _capabilities_of(self, entries: Sequence[CapabilityEntry]) -> list[Capability]:
		"""One agent's capabilities: objects as given, names built by their plugin's factory."""
		from openmolt_core.hooks import Capability

		out: list[Capability] = []
		for entry in entries:
			if isinstance(entry, Capability):
				out.append(entry)
				continue
			name, options = (entry, {}) if isinstance(entry, str) else _capability_spec(entry)
			factory = self.plugins.capability(name)
			try:
				built = factory(**options)
			except Exception as exc:
				raise ConfigurationError(
					f"capabilities: {name!r} could not be built with options {sorted(options)}: "
					f"{type(exc).__name__}: {exc}"
				) from exc
			if not isinstance(built, Capability):
				raise ConfigurationError(
					f"capabilities: the factory of {name!r} returned {type(built).__name__}, "
					"not a Capability; report it to the plugin's authors"
				)
			out.append(built)
		return out

	def _skills(self, entries: Sequence[str | Path | Skill | Mapping[str, Any]]) -> list[Skill]:
		if not entries:
			return []
		if isinstance(entries, str | Path):
			entries = [entries]
		from openmolt_core.skills import load_skills

		return load_skills(entries, plugins=self.plugins.skills, known=self.plugins.skill_names)

	def _compaction(
		self, option: CompactionConfig | Mapping[str, Any] | bool
	) -> tuple[CompactionConfig | None, Callable[[], tuple[LLMProvider, str]] | None]:
		from openmolt_core.llm import DEFAULT_COMPACTION, CompactionConfig

		if option is False or option is None:
			return None, None
		if option is True:
			config = DEFAULT_COMPACTION
		elif isinstance(option, CompactionConfig):
			config = option
		elif isinstance(option, Mapping):
			from openmolt_core.options import snake_keys

			fields = CompactionConfig.__dataclass_fields__
			given = snake_keys(option)
			unknown = sorted(k for k, name in zip(option, given, strict=True) if name not in fields)
			if unknown:
				raise ConfigurationError(
					f"create_agent: compaction: unknown key(s) {unknown}; allowed: "
					f"{', '.join(fields)}"
				)
			try:
				config = CompactionConfig(**given)
			except TypeError as exc:
				raise ConfigurationError(f"create_agent: compaction: {exc}") from exc
		else:
			raise ConfigurationError(
				"create_agent: compaction must be True, False, a CompactionConfig or a dict"
			)
		if config.model is None:
			return config, None
		_, name, factory = self._resolve_model(config.model)
		return config, lambda: (factory(), name)

	def _model_chain(
		self, model: Sequence[str | LLMProvider] | str | LLMProvider, fallback: Sequence[Any]
	) -> tuple[list[str | LLMProvider], list[ModelSlot]]:
		"""An agent's models in order, and the slots of those after the first (its fallbacks).

		Raises:
			ConfigurationError: No model, one listed twice, or one that cannot be resolved.
		"""
		from openmolt_core._chain import ModelSlot, model_list, slot_id

		models = model_list(model, fallback)
		chain = [
			ModelSlot(slot_id(p, m, f() if not p else None), p, m, f)
			for p, m, f in (self._resolve_model(other) for other in models[1:])
		]
		return models, chain

	def _resolve_model(self, model: str | LLMProvider) -> tuple[str, str, Any]:
		if not isinstance(model, str):
			if not hasattr(model, "generate"):
				raise ConfigurationError(
					"create_agent: model must be 'provider:model' (e.g. 'openai:gpt-5-mini') or a provider object"
				)
			# A provider object (a test double, a custom class) is no plugin: no name to load.
			name = getattr(model, "name", "custom")
			return "", getattr(model, "model", name), lambda: model
		known = self._models.get(model)
		if known is not None:
			return known
		provider_name, sep, model_name = model.partition(":")
		if not sep or not provider_name or not model_name:
			raise ConfigurationError(
				f"create_agent: model {model!r} must read 'provider:model', e.g. 'openai:gpt-5-mini', "
				"'anthropic:claude-sonnet-4-5' or 'google:gemini-2.5-pro'"
			)
		self.plugins.provider(self._instance(provider_name)[0])  # fail early when it is missing
		resolved = (provider_name, model_name, lambda: self.provider(provider_name))
		self._models[model] = resolved
		return resolved

	# built-in integrations ----------------------------------------------------------------

	@staticmethod
	def FileSystemIntegration(
		paths: str | Path | Sequence[str | Path], **options: Any
	) -> Integration:  # the spec's name
		"""A local file-system integration confined to the given directories.

		Not available by default: register it with
		``om.register_integration("fileSystem", OpenMolt.FileSystemIntegration("./data"))``.

		Args:
			paths: One directory or several; every path the agent uses must stay inside them.
			**options: See `openmolt_core.integrations.filesystem.file_system_integration`.
		"""
		from openmolt_core.integrations.filesystem import file_system_integration

		return file_system_integration(paths, **options)

	@staticmethod
	def HttpRequestIntegration(**options: Any) -> Integration:  # the spec's naming
		"""The generic ``httpRequest`` integration, configured (it is available by default).

		Register it to change its options, e.g. to let agents reach some internal hosts:
		``om.register_integration("httpRequest",
		OpenMolt.HttpRequestIntegration(allow_internal_hosts=["wiki.corp.example"]))``.

		Args:
			**options: See `openmolt_core.integrations.http_request.http_request_integration`.
		"""
		from openmolt_core.integrations.http_request import http_request_integration

		return http_request_integration(**options)

	def __repr__(self) -> str:
		return f"OpenMolt(providers={sorted(self.llm_providers)}, max_steps={self.max_steps})"


_LIMIT_KEYS = ("max_reply_chars", "max_result_chars", "max_memory_chars", "max_answer_chars")


def _parse_bindings(entries: Sequence[Any]) -> list[IntegrationBinding]:
	"""Read ``create_agent(integrations=[...])`` (`openmolt_core.integrations.binding`)."""
	from openmolt_core.integrations.binding import parse_binding

	return [parse_binding(entry) for entry in entries]


def _refuse_misspelled(spec: Integration, binding: Any, instance: Mapping[str, Any]) -> None:
	from openmolt_core.integrations.preflight import misspelled_keys

	iid = binding.integration
	config = {**instance.get(iid, {}), **binding.config}
	wrong = misspelled_keys(spec, config)
	if wrong:
		hints = "; ".join(
			f"config key {given!r} is not read by {iid}: did you mean {meant!r}?"
			for given, meant in wrong
		)
		raise ConfigurationError(f"create_agent: integrations[{iid}]: {hints}")


def _model_config(value: ModelConfig | Mapping[str, Any]) -> ModelConfig:
	"""Read ``create_agent(model_config=...)``: a `ModelConfig` or a dict of its fields.

	Raises:
		ConfigurationError: The value is not valid; the message names the problem.
	"""
	from openmolt_core.llm import ModelConfig

	try:
		return value if isinstance(value, ModelConfig) else ModelConfig.model_validate(value)
	except Exception as exc:
		raise ConfigurationError(f"create_agent: model_config: {exc}") from exc


def _config_dict(config: AgentConfig | Mapping[str, Any]) -> Mapping[str, Any]:
	"""``create_agent(config=...)`` as given, as a dict (the keys set, for the agent's record)."""
	from openmolt_core.options import AgentConfig

	return config.model_dump(exclude_unset=True) if isinstance(config, AgentConfig) else config


def _agent_config(config: AgentConfig | Mapping[str, Any]) -> AgentConfig:
	"""Read ``create_agent(config=...)`` (`openmolt_core.options.AgentConfig`).

	Raises:
		ConfigurationError: An unknown key or a wrong value; the message names it and the fix.
	"""
	from openmolt_core.options import AgentConfig, parse_options

	return parse_options(AgentConfig, config, "create_agent: config")


_Known = dict[str, tuple[list[str], list[str] | None]]
"""For each integration an agent uses, its scopes and tool names (None: known at run time)."""


def _known_tools(bound: Sequence[BoundTool], sources: Sequence[Any]) -> _Known:
	"""For each integration an agent uses, its scopes and tool names (None: known at run time)."""
	known: _Known = {}
	for t in bound:
		iid, _, name = t.handle.partition(".")
		scopes = list(t.integration.scopes) if t.integration is not None else []
		entry = known.setdefault(iid, (scopes, []))
		if t.integration is None:  # local tools: the scopes they name
			entry[0].extend(s for s in t.tool.scopes if s not in entry[0])
		if entry[1] is not None:
			entry[1].append(name)
	for source in sources:
		known[source.id] = (list(source.integration.scopes), None)
	return known


def _approval_policy(instance: Any, own: Any, known: Callable[[], _Known]) -> ApprovalPolicy | None:
	"""The agent's approval policy: the instance's rules, then its own, checked against its tools.

	``known`` gives the agent's tools (`_known_tools`), worked out only when there are rules.

	Raises:
		ConfigurationError: A rule is malformed or names a scope or tool that does not exist.
	"""
	if not instance and not own:
		return None
	from openmolt_core.policy import ApprovalPolicy

	defaults = ApprovalPolicy.of(instance, where="OpenMolt: requires_approval")
	mine = ApprovalPolicy.of(own, where="create_agent: requires_approval")
	tools = known()
	defaults.check(tools, where="OpenMolt: requires_approval", strict=False)
	mine.check(tools, where="create_agent: requires_approval", strict=True)
	return (defaults + mine) or None


def _tool_search(option: Any) -> ToolSearch | None:
	"""Read ``create_agent(tool_loading=...)``.

	Raises:
		ConfigurationError: The value is not ``all``, ``search``, ``auto`` or a ToolSearch.
	"""
	if isinstance(option, str) and option == "all":  # the default: the module is not loaded
		return None
	from openmolt_core.toolsearch import AUTO_SEARCH_ABOVE, ToolSearch

	if isinstance(option, ToolSearch):
		return option
	if option == "search":
		return ToolSearch()
	if option == "auto":
		return ToolSearch(above=AUTO_SEARCH_ABOVE)
	raise ConfigurationError(
		f"create_agent: tool_loading must be 'all', 'search', 'auto' or a ToolSearch, got {option!r}"
	)


def _taint_policy(instance: Any, own: Any, known: Callable[[], _Known]) -> TaintPolicy:
	"""The agent's taint policy (its own, else the instance's), its rules checked against its tools.

	``known`` gives the agent's tools (`_known_tools`), worked out only when there are rules.

	Raises:
		ConfigurationError: The policy is malformed, or a rule names a scope or tool that does not
			exist.
	"""
	from openmolt_core.taint import TaintPolicy

	mine = own is not None
	where = "create_agent: taint_policy" if mine else "OpenMolt: taint_policy"
	policy = TaintPolicy.of(own if mine else instance, where=where)
	tools: _Known | None = None
	for label in ("untrusted", "private", "outbound"):
		if rules := getattr(policy, label):
			from openmolt_core.policy import ApprovalPolicy

			stripped = tuple(r.lstrip("!") for r in rules)
			tools = known() if tools is None else tools
			ApprovalPolicy(stripped).check(tools, where=f"{where}: {label}", strict=mine)
	return policy


def _guardrails(value: Any, where: str) -> tuple[Guardrail, ...]:
	"""Read a ``guardrails`` option: a list of `openmolt_core.guardrails.Guardrail`.

	Raises:
		ConfigurationError: An entry is not a guardrail (a bare function has no stage).
	"""
	if not value:
		return ()
	from openmolt_core.guardrails import Guardrail

	items = [value] if isinstance(value, Guardrail) else list(value)
	for index, item in enumerate(items):
		if not isinstance(item, Guardrail):
			raise ConfigurationError(
				f"{where}: guardrails[{index}] is a {type(item).__name__}, not a Guardrail; make "
				"one with @guardrail('input' | 'tool_call' | 'tool_result' | 'output') or "
				"Guardrail(check, on=...), or use a built-in (openmolt_core.guardrails)"
			)
	return tuple(items)


def _register_secrets(known: Any, contexts: Sequence[Any], sources: Sequence[Any]) -> None:
	"""Put an agent's credential values (and its auths' refreshed tokens) into ``om.secrets``."""
	seen: set[int] = set()
	for context in [*contexts, *(s.context for s in sources)]:
		if id(context) in seen:
			continue
		seen.add(id(context))
		if context.redact:
			known.add(*context.redact)
		learned = getattr(context.auth, "secrets", None)  # OAuth2 tokens obtained by a refresh
		if callable(learned):
			known.add_source(learned)


def _bind_source(
	om: OpenMolt, spec: Integration, binding: Any, agent: str, files: Any
) -> SourceBinding:
	from openmolt_core.capabilities.sources import bind_source

	om._tool_sources[id(spec.source)] = spec.source
	config = om.integration_configs.get(binding.integration, {})
	return bind_source(
		spec, binding, agent=agent, instance_config=config, http=om.http, files=files
	)


def _check_prices(agent: Agent) -> None:
	"""Refuse ``max_cost`` when a model of the agent or of its sub-agents has no known price."""
	from openmolt_core._cost import OtherModel, check_prices

	seen: set[int] = set()
	todo = [agent]
	while todo:
		one = todo.pop()
		if id(one) in seen:
			continue
		seen.add(id(one))
		where = "create_agent: max_cost" + ("" if one is agent else f" (sub-agent {one.name!r})")
		check_prices(one.name, one._models.slots, where)
		if one.compaction is not None and one.compactor is not None:  # summaries cost too
			provider, model = one.compactor()
			check_prices(one.name, [OtherModel(provider, model)], f"{where} (compaction model)")
		todo.extend(one.sub_agents)


def _capability_entries(entries: Any, where: str) -> tuple[CapabilityEntry, ...]:
	"""Check the shape of a ``capabilities`` option (names are resolved per agent)."""
	from openmolt_core.hooks import Capability

	if isinstance(entries, str | Capability | Mapping):
		entries = [entries]
	if not isinstance(entries, Sequence):
		raise ConfigurationError(
			f"{where}: capabilities must be a list of Capability objects, names or "
			f"{{'name': ..., 'options': {{...}}}}, got {type(entries).__name__}"
		)
	for index, entry in enumerate(entries):
		if isinstance(entry, Mapping):
			_capability_spec(entry, f"{where}: capabilities[{index}]")
		elif not isinstance(entry, str | Capability):
			raise ConfigurationError(
				f"{where}: capabilities[{index}] is a {type(entry).__name__}; give a Capability "
				"(a subclass of openmolt.Capability), the name of one a plugin registers, or "
				"{'name': ..., 'options': {...}}"
			)
	return tuple(entries)


def _capability_spec(
	entry: Mapping[str, Any], where: str = "capabilities"
) -> tuple[str, dict[str, Any]]:
	name = entry.get("name")
	options = entry.get("options") or {}
	unknown = set(entry) - {"name", "options"}
	if not isinstance(name, str) or not name or unknown or not isinstance(options, Mapping):
		raise ConfigurationError(
			f"{where}: expected {{'name': <a registered capability>, 'options': {{...}}}}"
			+ (f"; unknown key(s) {sorted(unknown)}" if unknown else "")
		)
	return name, dict(options)


def _check_capability_names(caps: Sequence[Capability], bindings: Sequence[Any]) -> None:
	"""A capability's name prefixes its tools' handles: it may not be an integration's id."""
	taken = {"local", "openmolt", *(b.integration for b in bindings)}
	for cap in caps:
		if cap.name in taken:
			raise ConfigurationError(
				f"capabilities: {type(cap).__name__} is named {cap.name!r}, which is also an "
				"integration of this agent (its tools' handles start with it); rename the "
				"capability"
			)


def _model_id(model: Any) -> str:
	return model if isinstance(model, str) else type(model).__name__


def _check_budget(name: str, value: Any, label: str, where: str = "create_agent") -> None:
	"""Refuse a budget that is not a number of the right kind (``max_steps="ten"``).

	Raises:
		ConfigurationError: Names the option and what it must be.
	"""
	if name == "verbose":
		if not isinstance(value, bool):
			raise ConfigurationError(f"create_agent: {label} must be True or False, got {value!r}")
		return
	if name in ("max_steps", "max_tokens", *_LIMIT_KEYS):
		if not isinstance(value, int) or isinstance(value, bool) or value < 1:
			raise ConfigurationError(
				f"create_agent: {label} must be a whole number >= 1, got {value!r}"
			)
	elif name == "timeout":
		if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
			raise ConfigurationError(f"create_agent: {label} must be seconds > 0, got {value!r}")
	elif name == "max_cost":
		if (
			not isinstance(value, int | float)
			or isinstance(value, bool)
			or not value > 0
			or value == float("inf")
		):
			raise ConfigurationError(
				f"{where}: {label} must be US dollars > 0 (max_cost=0.50), got {value!r}"
			)


def _single(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
	"""The one exception inside (nested) groups, or None when there are several."""
	inner: BaseException = group
	while isinstance(inner, BaseExceptionGroup):
		if len(inner.exceptions) != 1:
			return None
		inner = inner.exceptions[0]
	return inner


def _current_loop() -> Any:
	"""The running asyncio loop, or None under another event loop (trio)."""
	import asyncio

	try:
		return asyncio.get_running_loop()
	except RuntimeError:
		return None


_RUNTIME: tuple[Any, Any, Any] | None = None


def _runtime() -> tuple[Any, Any, Any]:
	"""The modules ``create_agent`` needs, imported on the first call only (cheap afterwards)."""
	global _RUNTIME
	if _RUNTIME is None:
		from openmolt_core import _binding, agent, llm

		_RUNTIME = (_binding, agent, llm)
	return _RUNTIME
