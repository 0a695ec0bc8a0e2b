"""The options of ``OpenMolt(...)``, checked and set on the new instance (`configure`).

The facade (`openmolt_core.openmolt.OpenMolt`) documents each option; this module reads them. It
is light on purpose: every ``OpenMolt()`` imports it, so what an option needs (the retry policy,
the credential store, the run store, the assembly's parsers) is imported only when it is given.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from openmolt_core.errors import ConfigurationError

if TYPE_CHECKING:
	import httpx

	from openmolt_core._durable import DurabilityConfig
	from openmolt_core._support.secretset import SecretSet
	from openmolt_core.accounts import Accounts
	from openmolt_core.approvals import Approvals
	from openmolt_core.assembly import Facade
	from openmolt_core.credstore import CredentialStore
	from openmolt_core.guardrails import Guardrail
	from openmolt_core.hooks import CapabilityEntry
	from openmolt_core.observe import RunObserver
	from openmolt_core.plugins import Plugins
	from openmolt_core.retry import RetryPolicy
	from openmolt_core.schedule import Clock
	from openmolt_core.taint import TaintPolicy

	class Configured(Facade, Protocol):
		"""The instance's state `configure` sets besides what the assembly reads (`Facade`)."""

		secrets: SecretSet
		verbose: bool
		_retry: RetryPolicy | None
		_plugin_options: tuple[tuple[object, ...], bool]
		_plugins: Plugins | None
		_accounts: Accounts | None
		_store_option: CredentialStore | str | Path | bool | None

		def _found_secrets(self) -> set[str]: ...

		def _stored_secrets(self) -> set[str]: ...


__all__ = ["configure"]


def _settings(option: str, value: object, example: str) -> dict[str, dict[str, Any]]:
	"""``llm_providers`` or ``integrations``: settings by name, each a dict (copied).

	Raises:
		ConfigurationError: It, or one name's settings, is not a dict; the message shows the form.
	"""
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


def configure(
	om: Configured,
	llm_providers: Mapping[str, Mapping[str, Any]] | None,
	integrations: Mapping[str, Mapping[str, Any]] | None,
	*,
	max_steps: int,
	max_cost: float | None,
	verbose: bool,
	plugins: Sequence[object],
	entry_points: bool,
	http_client: httpx.AsyncClient | None,
	files_dir: str | Path | None,
	schedule_store: str | Path | None,
	clock: Clock | None,
	requires_approval: bool | str | Sequence[str] | None,
	approvals: Approvals | None,
	run_store: str | Path | None,
	observers: Sequence[RunObserver],
	durability: DurabilityConfig | None,
	guardrails: Sequence[Guardrail],
	taint_policy: TaintPolicy | Mapping[str, Any] | str | bool | None,
	retry: RetryPolicy | Mapping[str, Any] | None,
	credential_store: CredentialStore | str | Path | bool | None,
	capabilities: Sequence[CapabilityEntry],
	accounts: Mapping[str, Any] | None,
	secrets: Iterable[str] | Mapping[str, str],
) -> None:
	"""Check ``OpenMolt(...)``'s options and set the instance's state from them.

	Args:
		om: The instance being made.
		llm_providers: As `openmolt_core.openmolt.OpenMolt` documents each option.
		integrations: The same.
		max_steps: The same.
		max_cost: The same.
		verbose: The same.
		plugins: The same.
		entry_points: The same.
		http_client: The same.
		files_dir: The same.
		schedule_store: The same.
		clock: The same.
		requires_approval: The same.
		approvals: The same.
		run_store: The same.
		observers: The same.
		durability: The same.
		guardrails: The same.
		taint_policy: The same.
		retry: The same.
		credential_store: The same.
		capabilities: The same.
		accounts: The same.
		secrets: The same.

	Raises:
		ConfigurationError: An option is wrong; the message names it.
	"""
	if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1:
		raise ConfigurationError(
			f"OpenMolt: max_steps must be a whole number >= 1, got {max_steps!r}"
		)
	om.llm_providers = _settings("llm_providers", llm_providers, "{'openai': {'api_key': ...}}")
	om.integration_configs = _settings("integrations", integrations, "{'slack': {'token': ...}}")
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

	om.secrets = SecretSet()
	om.secrets.add_once(om._found_secrets)  # read at first use: creating stays cheap
	if secrets:
		if isinstance(secrets, str):
			secrets = [secrets]
		elif isinstance(secrets, Mapping):  # names to values: the values are the secrets
			secrets = secrets.values()
		om.secrets.add(*secrets)
	om.secrets.add_source(registered_keys)  # the keys given in code (`register_key`)
	om.max_steps = max_steps
	if max_cost is not None:
		from openmolt_core.assembly import check_cost

		check_cost(max_cost, "OpenMolt")
	om.max_cost = max_cost
	om.verbose = verbose
	om._retry = None  # None: the default, read at first use
	if retry is not None:  # checked now: a wrong option fails here
		from openmolt_core.retry import retry_policy

		om._retry = retry_policy(retry)
	om._plugin_options = (tuple(plugins), entry_points)
	om._plugins = None
	om._http = http_client
	om._own_http = http_client is None
	om._transport = None  # the pool of the client made here
	om._files_dir = files_dir
	om._files = None
	# The default store is a file lookup: made at first use (`credential_store`), not here.
	om._default_credential_store = credential_store is None
	om._credential_store = None
	if credential_store is not None:
		from openmolt_core.credstore import store_of

		om._credential_store = store_of(credential_store)
	om.secrets.add_once(om._stored_secrets)
	om._accounts_options = dict(accounts or {})
	om._accounts = None
	om._store_option = credential_store
	om._tool_sources = {}  # tool sources (MCP servers) agents use; see aclose
	om._providers = {}
	om._prepared = set()
	om._prepare_lock = None
	om._scheduler_options = (clock, schedule_store)
	om._scheduler = None
	om._task_group = None
	om._approval_rules = requires_approval
	om._approvals = approvals
	om.observers = list(observers)
	om.run_store = None
	if run_store is not None:
		from openmolt_core.runstore import RunStore

		om.run_store = RunStore(run_store)
		om.observers.append(om.run_store)
	om._durability_config = durability
	om._durability = None
	om._guardrails = ()
	om._capabilities = ()
	if guardrails or capabilities:
		from openmolt_core.assembly import parse_capabilities, parse_guardrails

		om._guardrails = parse_guardrails(guardrails, "OpenMolt")
		om._capabilities = parse_capabilities(capabilities, "OpenMolt")
	om._taint_policy = taint_policy
	om._shared = None  # what its agents share, made with the first one
	if verbose:
		from openmolt_core import _verbose

		_verbose.enable()
