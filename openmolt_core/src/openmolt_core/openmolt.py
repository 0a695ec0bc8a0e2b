"""`OpenMolt`: the instance that holds configuration, plugins, integrations and agents."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from openmolt_core.errors import ConfigurationError

if TYPE_CHECKING:
	from types import TracebackType

	import httpx
	from anyio.abc import TaskGroup
	from pydantic import BaseModel

	from openmolt_core._durable import DurabilityBackend, DurabilityConfig, PendingRun
	from openmolt_core.accounts import Accounts
	from openmolt_core.agent import Agent, HumanInputHandler, MemoryConfig
	from openmolt_core.agentconfig import AgentConfig, IntegrationEntry
	from openmolt_core.approvals import ApprovalHandler, Approvals
	from openmolt_core.assembly import Shared
	from openmolt_core.capabilities.sessions import RunConversation
	from openmolt_core.conversation import Session
	from openmolt_core.credstore import CredentialStore
	from openmolt_core.filestore import FileStore
	from openmolt_core.guardrails import Guardrail
	from openmolt_core.hooks import Capability, CapabilityEntry
	from openmolt_core.integrations._client import PooledTransport
	from openmolt_core.integrations.model import Integration
	from openmolt_core.llm import CompactionConfig, LLMProvider, ModelConfig
	from openmolt_core.observe import RunObserver
	from openmolt_core.options import AgentMemory
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

_MAKING = threading.RLock()
"""Held while an instance's file store is made on first use."""


def _settings(option: str, value: object, example: str) -> dict[str, dict[str, Any]]:
	"""``llm_providers`` or ``integrations``: settings by name, each a dict (copied), or `ConfigurationError`."""
	if value is None:
		return {}
	if not isinstance(value, Mapping):
		raise ConfigurationError(
			f"OpenMolt: {option} must be a dict of settings by name, e.g. {example}; got "
			f"{type(value).__name__}"
		)
	out: dict[str, dict[str, Any]] = {}
	for name, settings in value.items():
		if not isinstance(settings, Mapping):
			raise ConfigurationError(
				f"OpenMolt: {option}[{name!r}] must be a dict of settings, e.g. {example}; got "
				f"{type(settings).__name__}"
			)
		out[name] = dict(settings)
	return out


class OpenMolt:
	"""The entry point: configure providers and integrations once, then create agents.

	Args:
		llm_providers: Settings per provider name, e.g. ``{"openai": {"api_key": "..."}}``; keys
			default to ``OPENMOLT_OPENAI_API_KEY`` and the like (docs/guides/providers.md).
		integrations: Config per integration id (API keys and the like), shared by all agents;
			an agent's own credential config wins.
		max_steps: Default step budget of each agent.
		max_cost: Default cost budget of each agent's runs, in USD (None: none; `create_agent`).
		verbose: Log each step and tool call of this instance's agents to stderr.
		plugins: Plugin modules or objects to use besides (or instead of) installed ones.
		entry_points: Whether to find installed plugins through entry points.
		http_client: An ``httpx.AsyncClient`` for every request (tests pass a mock one); shared,
			it keeps no cookie a response sets from then on.
		files_dir: Where the file store keeps binary tool results (default: a temporary
			directory, removed by `aclose`).
		schedule_store: A SQLite file keeping the schedules' run history across restarts
			(default: in memory; docs/guides/schedules.md).
		clock: The scheduler's clock (tests pass `openmolt_core.testing.FakeClock`).
		requires_approval: Approval rules for every agent, such as ``["stripe:writes"]``, added
			to an agent's own (docs/guides/approvals.md).
		approvals: Signs and checks approval decisions (`openmolt_core.approvals.Approvals`;
			default: a random key, in memory).
		run_store: A SQLite file recording every run with its events (``openmolt ui`` shows them).
		observers: Objects that hear every run (`openmolt_core.observe.RunObserver`); more can be
			appended to ``om.observers``.
		durability: Make runs durable (``pip install "openmolt[dbos]"``): a SQLite path, a
			``postgresql://`` URL, or a dict with ``url`` and options (docs/guides/durable.md).
		guardrails: Guardrails for every agent, run before its own (docs/guides/guardrails.md).
		taint_policy: The agents' default taint policy (`openmolt_core.taint.TaintPolicy`, a dict
			of its fields, or ``"approve"``, ``"refuse"``, ``"allow"``); an agent's own replaces it.
		retry: How tools and providers retry HTTP calls: a `openmolt_core.retry.RetryPolicy` or
			a dict of its fields (docs/guides/retries.md).
		credential_store: Where integration credentials are kept: a `CredentialStore`, a file's
			path or False (default: ``openmolt auth``'s file, if any; docs/guides/accounts.md).
		capabilities: Behaviour attached to every agent's runs, before the agent's own: `Capability`
			objects, names plugins register, or ``{"name", "options"}`` (docs/guides/capabilities.md).
		accounts: End users' accounts: ``{"redirect_uri": ..., "key": ...}`` (default:
			``OPENMOLT_AUTH_REDIRECT_URI`` and ``OPENMOLT_AUTH_KEY``; docs/guides/accounts.md).
		secrets: More values that must never show; they join `secrets` (a mapping gives its
			values, not its names).
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
		secrets: Iterable[str] | Mapping[str, str] = (),
	) -> None:
		if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1:
			raise ConfigurationError(
				f"OpenMolt: max_steps must be a whole number >= 1, got {max_steps!r}"
			)
		self.llm_providers: dict[str, dict[str, Any]] = _settings(
			"llm_providers", llm_providers, "{'openai': {'api_key': ...}}"
		)
		self.integration_configs: dict[str, dict[str, Any]] = _settings(
			"integrations", integrations, "{'slack': {'token': ...}}"
		)
		for option, path in (
			("files_dir", files_dir),
			("schedule_store", schedule_store),
			("run_store", run_store),
		):
			if path is not None:
				from openmolt_core._support.paths import path_problem

				problem = path_problem(path)
				if problem is not None:
					raise ConfigurationError(f"OpenMolt: {option} must be a path {problem}")
		if http_client is not None:
			httpx_module = sys.modules.get("httpx")  # a client exists only once httpx is imported
			if httpx_module is None or not isinstance(http_client, httpx_module.AsyncClient):
				raise ConfigurationError(
					"OpenMolt: http_client must be an httpx.AsyncClient (not a sync httpx.Client), "
					f"got {type(http_client).__name__}"
				)
			from openmolt_core.integrations._client import keep_no_cookies

			keep_no_cookies(http_client)  # shared by every user: one's cookie is never another's
		from openmolt_core._support.secretset import SecretSet, registered_keys

		self.secrets: SecretSet = SecretSet()
		"""Every secret this instance knows (`openmolt_core.secrets`); add what else must never show."""
		self.secrets.add_once(self._found_secrets)  # read at first use: creating stays cheap
		if secrets:
			if isinstance(secrets, str):
				secrets = [secrets]
			elif isinstance(secrets, Mapping):  # names to values: the values are the secrets
				secrets = secrets.values()
			self.secrets.add(*secrets)
		self.secrets.add_source(registered_keys)  # the keys given in code (`register_key`)
		self.max_steps = max_steps
		if max_cost is not None:
			from openmolt_core.assembly import check_cost

			check_cost(max_cost, "OpenMolt")
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
		# The instance's options for its agents, read here (`openmolt_core.assembly`).
		self._guardrails: tuple[Guardrail, ...] = ()
		self._capabilities: tuple[CapabilityEntry, ...] = ()
		if guardrails or capabilities:
			from openmolt_core.assembly import parse_capabilities, parse_guardrails

			self._guardrails = parse_guardrails(guardrails, "OpenMolt")
			self._capabilities = parse_capabilities(capabilities, "OpenMolt")
		self._taint_policy = taint_policy
		self._shared: Shared | None = None  # what its agents share, made with the first one
		if verbose:
			from openmolt_core import _verbose

			_verbose.enable()

	@staticmethod
	def of(agent: Agent) -> OpenMolt:
		"""The instance that owns an agent: ``agent.om``, typed as this class (not checked).

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
			from openmolt_core.assembly import make_scheduler

			self._scheduler = make_scheduler(self)
		return self._scheduler

	@property
	def credential_store(self) -> CredentialStore | None:
		"""The credential store integrations read after their config and the environment.

		The default one is looked up at first use; one set later counts as given to the constructor.
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
		self._store_option = False if store is None else store  # one meaning: none
		self.secrets.add_once(self._stored_secrets)  # its secrets join the set at its next use

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
			from openmolt_core.accounts import instance_accounts

			options = self._accounts_options
			self._accounts = instance_accounts(self, options, lambda: self._store_option)
		return self._accounts

	# sessions -----------------------------------------------------------------------------

	def conversation(self, agent: Agent, session: Session) -> RunConversation:
		"""A run's part in ``session`` (``run(session=...)``), for the sessions capability.

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
		"""Make this instance's runs durable after it was made, before its first run or schedule.

		Agents created earlier must then be registered with ``om.durability.register(agent)``.

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
		self.secrets.add_once(self._found_secrets)  # the durability URL's password

	def _durable(self, what: str) -> DurabilityBackend:
		from openmolt_core._durable import required

		return required(self.durability, what)

	async def answer(self, run_id: str, text: str, *, step: int | None = None) -> None:
		"""Answer the question a durable run is parked on, from any process sharing its store.

		Args:
			run_id: The run's id (``result.state.run_id``, `pending`, ``openmolt runs``).
			text: The answer.
			step: The step of the question this answers (`PendingRun.step`): refused when that
				question no longer waits. None: the question pending now.

		Raises:
			ConfigurationError: Durability is off, or the run waits for no answer.
			AlreadyAnsweredError: Another answer to the question won, or ``step`` has passed.
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

	async def cancel(self, run_id: str) -> str:
		"""Cancel an unfinished durable run from any process (docs/guides/durable.md).

		It takes no further step once this returns; a later answer, resume or result is refused.

		Args:
			run_id: The run's id (``result.state.run_id``, `pending`, ``openmolt runs``).

		Returns:
			The engine's id for the run.

		Raises:
			ConfigurationError: Durability is off, no run has that id, or it has ended.
		"""
		return await self._durable("om.cancel").cancel(run_id)

	async def result(self, run_id: str, *, wait: bool = True) -> RunResult | None:
		"""The result of a durable run, from any process.

		Args:
			run_id: The run's id.
			wait: Wait until the run ends or parks on an approval or an account (a run parked
				on a question is waited for); else at once: None while it runs.

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

	@property
	def files(self) -> FileStore:
		"""The file store (binary results, file references); no directory is made until a save."""
		if self._files is None:
			from openmolt_core.assembly import file_store

			with _MAKING:  # one store, also when a sync tool's worker thread asks first
				if self._files is None:
					self._files = file_store(self)
		return self._files

	async def aclose(self) -> None:
		"""Stop tool sources (MCP servers), close the HTTP client if OpenMolt made it, remove temp files."""
		from openmolt_core.assembly import close

		await close(self)

	async def __aenter__(self) -> OpenMolt:
		"""Open a task group and start the schedules in it (made with the first); they stop when the block ends."""
		from openmolt_core.assembly import enter

		await enter(self)
		return self

	async def __aexit__(
		self,
		exc_type: type[BaseException] | None,
		exc: BaseException | None,
		tb: TracebackType | None,
	) -> bool | None:
		"""Stop the schedules (cancelling runs in flight), then close; the block's exception comes out as itself."""
		from openmolt_core.assembly import leave

		return await leave(self, exc_type, exc, tb)

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

		Args:
			provider: The provider name the run will use, if any.
			http_tools: Whether the run has HTTP tools.
		"""
		from openmolt_core.assembly import prepare

		await prepare(self, provider, http_tools)

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
			from openmolt_core.assembly import make_provider

			provider = make_provider(self, name)
		return provider

	def _found_secrets(self) -> set[str]:
		"""The secrets its settings and the environment hold (`assembly.instance_secrets`)."""
		from openmolt_core.assembly import instance_secrets

		return instance_secrets(self)

	def _stored_secrets(self) -> set[str]:
		"""The secrets its credential store holds (`assembly.stored_secrets`)."""
		from openmolt_core.assembly import stored_secrets

		return stored_secrets(self)

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
		"""Create an agent (docs/guides/agents.md). Creating one never touches the network.

		Args:
			name: The agent's name.
			model: ``"provider:model"`` (``"openai:gpt-5-mini"``), or a provider object; or a
				list of them, tried in order when one fails for good (docs/guides/fallback.md).
			instructions: What the agent must do.
			instructions_path: A UTF-8 file to read the instructions from instead (at most 4 MiB).
			model_config: Standard model settings: thinking, search, temperature, max_output_tokens,
				top_p, stop, provider_options.
			config: Overrides of this instance's settings for this agent: an `AgentConfig` or a dict
				of its fields (docs/guides/budgets.md); explicit keyword arguments win.
			integrations: Integration ids, or `openmolt_core.agentconfig.IntegrationEntry` objects
				or dicts of their fields.
			tools: Extra tools, visible as ``local.<handle>``: `Tool` objects, other agents, or
				plain (sync or async) functions (docs/guides/tools.md).
			memory: An `openmolt_core.options.AgentMemory` or a dict of its fields (each end
				user's own; docs/guides/agents.md#memory).
			on_human_input_request: Answers the agent's questions (sync or async, takes the
				question, returns the answer); None or False disables ``requestHumanInput``.
			requires_approval: Which tool calls wait for a decision: True (all), a rule or a
				list of rules, added to the instance's (docs/guides/approvals.md).
			on_approval_request: Decides those calls (sync or async; ``request.approve()`` or
				``request.deny(reason)``); without it such a call parks the run.
			guardrails: Checks around the input, tool calls, their results and the output, after
				the instance's (docs/guides/guardrails.md).
			taint_policy: What a run that read untrusted content may still send out, as for the
				constructor's; replaces the instance's (docs/guides/safety.md).
			output_schema: A pydantic model class or JSON Schema the final output must match.
			max_steps: The most model calls a run makes (default: the instance's).
			max_tokens: Tokens over the run (input + output) after which no model call starts.
			timeout: Seconds the whole run may take (model calls, tools, waits, a person's answer).
			max_cost: USD a run may spend on model calls, sub-agents' included (default: the
				instance's); every model must have a known price (docs/guides/budgets.md).
			compaction: How long runs summarise older steps: True (the defaults), False, a
				`CompactionConfig` or a dict of its fields (docs/guides/long-runs.md).
			skills: Skill folders, names of skills plugins provide, or `Skill` objects, loaded
				by the model on demand (docs/guides/skills.md).
			fallback_models: Models to try, in order, after ``model`` (same as giving a list).
			tool_loading: ``"all"`` lists every tool; ``"search"`` lets the model search them;
				``"auto"`` searches past 30; or a `ToolSearch` (docs/guides/many-tools.md).
			capabilities: Behaviour attached to the agent's runs, after the instance's: as for
				the constructor's ``capabilities`` (docs/guides/capabilities.md).

		Raises:
			ConfigurationError: An option is wrong; the message names it and the fix.
			PluginError: The provider, an integration or a capability is not installed.
		"""
		import openmolt_core.assembly as assembly  # no `from` import: it runs `_handle_fromlist`

		options = assembly.parse_options(
			name=name,
			model=model,
			instructions=instructions,
			instructions_path=instructions_path,
			model_config=model_config,
			config=config,
			integrations=integrations,
			tools=tools,
			memory=memory,
			on_human_input_request=on_human_input_request,
			requires_approval=requires_approval,
			on_approval_request=on_approval_request,
			guardrails=guardrails,
			taint_policy=taint_policy,
			output_schema=output_schema,
			max_steps=max_steps,
			max_tokens=max_tokens,
			timeout=timeout,
			max_cost=max_cost,
			compaction=compaction,
			skills=skills,
			fallback_models=fallback_models,
			tool_loading=tool_loading,
			capabilities=capabilities,
		)
		return assembly.build_agent(self, options)

	def durable_capabilities(self) -> tuple[Capability, ...]:
		"""What a durable run attaches (`openmolt_core.agent.Instance.durable_capabilities`)."""
		from openmolt_core.capabilities.indoubt import InDoubtCalls

		return (InDoubtCalls(),)

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
		from openmolt_core.subagents import AgentTool

		return AgentTool.of(agent, name, description, input_schema)

	# built-in integrations ----------------------------------------------------------------

	@staticmethod
	def FileSystemIntegration(
		paths: str | Path | Sequence[str | Path], **options: Any
	) -> Integration:  # the spec's name
		"""A local file-system integration confined to the given directories (register it to use it).

		Args:
			paths: One directory or several; every path the agent uses must stay inside them.
			**options: See `openmolt_core.integrations.filesystem.file_system_integration`.
		"""
		from openmolt_core.integrations.filesystem import file_system_integration

		return file_system_integration(paths, **options)

	@staticmethod
	def HttpRequestIntegration(**options: Any) -> Integration:  # the spec's naming
		"""The generic ``httpRequest`` integration (available by default), to register with other options.

		Args:
			**options: See `openmolt_core.integrations.http_request.http_request_integration`.
		"""
		from openmolt_core.integrations.http_request import http_request_integration

		return http_request_integration(**options)

	def __repr__(self) -> str:
		return f"OpenMolt(providers={sorted(self.llm_providers)}, max_steps={self.max_steps})"
