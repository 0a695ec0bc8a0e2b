"""Bind an agent's integrations: pick the credential, grant scopes, and build its tools.

`OpenMolt.create_agent` reads each entry of ``integrations=[...]`` (`parse_binding`) and binds it
(`bind_integration`): the credential config (code, the environment, the credential store), the
shared auth, and which tools the granted scopes allow. The kernel gets plain
`openmolt_core._binding.BoundTool` records; it runs their declarative HTTP tools through the
executor this module registers for `HttpTool` (`openmolt_core._binding.register_executor`), so it
never imports the engine.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from openmolt_core._binding import BoundTool, register_executor, secret_values
from openmolt_core.agentconfig import IntegrationEntry
from openmolt_core.errors import ConfigurationError
from openmolt_core.integrations.model import HttpTool
from openmolt_core.integrations.templating import holds_markup
from openmolt_core.options import parse_options
from openmolt_core.tools import ToolContext

if TYPE_CHECKING:
	import httpx

	from openmolt_core.credstore import CredentialStore
	from openmolt_core.files import FileAccess
	from openmolt_core.integrations.model import Integration
	from openmolt_core.retry import RetryPolicy

__all__ = [
	"IntegrationBinding",
	"bind_integration",
	"check_scopes",
	"parse_binding",
	"written_secrets",
]


@dataclass(slots=True)
class IntegrationBinding:
	"""An agent's use of one integration, as given to ``create_agent(integrations=[...])``.

	Args:
		integration: The integration id.
		credential_type: The credential type to use (None: the integration's first, or the one
			other type the config alone can use: `openmolt_core.integrations.preflight.usable_credential`).
		config: The credential config (API keys, OAuth tokens...), merged over the instance's.
		scopes: The granted scopes; None means all.
		on_token_refresh: Called with the new config after an OAuth2 refresh.
		account: ``operator`` (one account for every run) or ``user`` (each run's end user's
			credential, from the store: `openmolt_core.accounts`).
	"""

	integration: str
	credential_type: str | None = None
	config: dict[str, Any] = field(default_factory=dict, repr=False)  # secrets
	scopes: list[str] | None = None
	on_token_refresh: Callable[[dict[str, Any]], Any] | None = None
	account: str = "operator"


def parse_binding(value: str | IntegrationEntry | Mapping[str, Any]) -> IntegrationBinding:
	"""Read one entry of ``create_agent(integrations=[...])``: an id, or an `IntegrationEntry`.

	Args:
		value: The id, an `openmolt_core.agentconfig.IntegrationEntry`, or a dict of its fields.

	Raises:
		ConfigurationError: The entry is malformed; the message names the field.
	"""
	if isinstance(value, str):
		return IntegrationBinding(integration=value)
	if not isinstance(value, (Mapping, IntegrationEntry)):
		raise ConfigurationError(
			f"integrations: each entry must be an id or a dict with 'integration', got {value!r}"
		)
	name = value.get("integration") if isinstance(value, Mapping) else value.integration
	where = f"integrations[{name}]" if isinstance(name, str) else "integrations"
	entry = parse_options(IntegrationEntry, value, f"create_agent: {where}")
	cred = entry.credential
	return IntegrationBinding(
		integration=entry.integration,
		credential_type=cred.type if cred else None,
		config=dict(cred.config) if cred else {},
		scopes=None if entry.scopes in (None, "all") else list(entry.scopes),
		on_token_refresh=cred.on_token_refresh if cred else None,
		account=entry.account,
	)


def _stored_config(
	store: CredentialStore | None, iid: str, config: Mapping[str, Any]
) -> dict[str, Any]:
	"""The operator's stored keys for ``iid`` that ``config`` (code, file, environment) lacks."""
	if store is None:
		return {}
	from openmolt_core._envvars import blank

	stored = store.load(iid) or {}
	have = {k.replace("_", "").lower() for k, v in config.items() if not blank(v)}
	return {k: v for k, v in stored.items() if k.replace("_", "").lower() not in have}


def check_scopes(binding: IntegrationBinding, spec: Integration) -> None:
	"""Refuse a binding that grants scopes its integration does not define.

	Args:
		binding: The agent's entry for the integration.
		spec: The integration.

	Raises:
		ConfigurationError: An unknown scope, named with the ones the integration defines.
	"""
	if binding.scopes is None:
		return
	unknown = [s for s in binding.scopes if s not in spec.scopes]
	if unknown:
		iid = binding.integration
		raise ConfigurationError(
			f"integrations[{iid}].scopes: unknown scope(s) {unknown}; "
			f"{iid} defines: {', '.join(sorted(spec.scopes)) or '(none)'}"
		)


def bind_integration(
	spec: Integration,
	binding: IntegrationBinding,
	*,
	agent: str,
	instance_config: Mapping[str, Any],
	http: Callable[[], httpx.AsyncClient],
	files: FileAccess | None = None,
	auth_cache: dict[tuple[str, str, str], httpx.Auth] | None = None,
	retry: RetryPolicy | None = None,
	store: CredentialStore | None = None,
) -> list[BoundTool]:
	"""Bind one integration for an agent: credential, auth, and which tools the scopes allow.

	Args:
		spec: The integration.
		binding: The agent's entry for it.
		agent: The agent's name.
		instance_config: Config from ``OpenMolt(integrations={id: {...}})``; the agent's wins,
			and a key neither gives is read from ``OPENMOLT_<ID>_<KEY>`` in the environment
			(`openmolt_core.integrations.connect.env_var`).
		http: Getter for the shared HTTP client.
		files: The agent's view of the instance's file store (binary responses, file references).
		auth_cache: The instance's auths by (integration id, credential type, config): agents with
			the same credential share one auth, so one OAuth2 refresh serves them all (each
			agent's ``on_token_refresh`` is still called).
		retry: The instance's retry policy for the HTTP tools.
		store: The instance's credential store (`openmolt_core.credstore`): the operator's
			stored config fills what the config and the environment leave out, and an OAuth2
			refresh of stored tokens is saved back to it.

	Raises:
		ConfigurationError: Unknown scope or credential type.
	"""
	iid = binding.integration
	check_scopes(binding, spec)
	from openmolt_core.integrations.connect import over, with_environment

	# The agent's entry wins over the instance, one key whatever its spelling or name.
	given = over(spec, iid, instance_config, binding.config)
	# OPENMOLT_<ID>_<KEY> fills what neither gives (env_var names them): code wins in Python.
	config = with_environment(spec, iid, given)
	stored = _stored_config(store if spec.credential_setup else None, iid, config)
	if stored:  # a blank key of the config (None, "") is filled by the store, not kept
		filled = {k.replace("_", "").lower() for k in stored}
		config = {k: v for k, v in config.items() if k.replace("_", "").lower() not in filled}
	config = {**stored, **config}
	if binding.credential_type is None:  # the first type, or the one the config alone can use
		from openmolt_core.integrations.preflight import usable_credential

		credential = usable_credential(iid, spec, config)
	else:
		credential = spec.credential(binding.credential_type)
	if binding.credential_type and credential is None:
		types = [c.type for c in spec.credential_setup]
		raise ConfigurationError(
			f"integrations[{iid}].credential.type {binding.credential_type!r} is not accepted by "
			f"{iid}; use one of: {', '.join(types) or '(none: it needs no credential)'}"
		)
	auth = None
	if credential is not None:  # Python tools too: the check before a run reads its credential
		from openmolt_core.integrations.credentials import OAuth2Auth, make_auth

		key = (iid, credential.type, json.dumps(config, sort_keys=True, default=repr))
		auth = None if auth_cache is None else auth_cache.get(key)
		if auth is None:
			auth = make_auth(
				spec, credential, config, on_token_refresh=binding.on_token_refresh, http=http
			)
			if store is not None and stored and isinstance(auth, OAuth2Auth):
				auth.use_store(store, iid, keys=frozenset(stored))
			if auth_cache is not None and auth is not None:
				auth_cache[key] = auth
		elif isinstance(auth, OAuth2Auth):
			auth.add_refresh_listener(binding.on_token_refresh)
	context = ToolContext(
		agent=agent,
		integration=iid,
		config=config,
		http=http,
		auth=auth,
		redact=frozenset(secret_values(config)) | written_secrets(spec),
		files=files,
		retry=retry,
	)
	granted = None if binding.scopes is None else set(binding.scopes)
	out = []
	for tool in spec.tools:
		missing = [] if granted is None else [s for s in tool.scopes if s not in granted]
		out.append(
			BoundTool(
				handle=f"{iid}.{tool.handle}",
				tool=tool,
				context=context,
				allowed=not missing,
				missing_scopes=missing,
				integration=spec,
			)
		)
	return out


def written_secrets(spec: Integration) -> frozenset[str]:
	"""The keys written into an integration's own `ApiSetup`, not templated from its config.

	An imported OpenAPI document's server URL with ``?api_key=...`` as the ``base_url``, a header
	or a query parameter given as a literal: every call sends them, a service may echo them and
	the HTTP stack logs the URL, so they are masked with the config's secrets. The base URL's
	secrets (`url_secrets`), a literal header's (`header_secrets`: its value and parts, not for
	``Accept`` and the like) and a literal query parameter's named like a secret; a text with
	Liquid markup (``{{ config.token }}``) is a template, not a key.

	Args:
		spec: The integration.
	"""
	from openmolt_core._support.masking import header_secrets, secret_name, url_secrets

	setup = spec.api_setup
	if setup is None:
		return frozenset()
	found = url_secrets(setup.base_url)
	for name, header in setup.headers.items():
		if not holds_markup(header):
			found |= header_secrets(name, header)
	for name, value in setup.query_params.items():
		if isinstance(value, str) and secret_name(name):
			found.add(value)
	return frozenset(v for v in found if v.strip() and not holds_markup(v))


async def _execute_http(bound: BoundTool, input: dict[str, Any], context: ToolContext) -> Any:
	"""Run one call of a bound `HttpTool` through the engine (the executor registered for it)."""
	from openmolt_core.integrations.http import execute_http_tool

	if bound.integration is None:
		raise ConfigurationError(f"{bound.handle}: an HTTP tool needs its integration")
	spec = cast("Integration", bound.integration)
	return await execute_http_tool(cast("HttpTool", bound.tool), spec, input, context)


register_executor(HttpTool, _execute_http)
