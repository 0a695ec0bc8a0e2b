"""How to connect an integration: the config each credential type reads, and where it comes from.

One source for the ``openmolt tools ID`` command and the generated docs page of each
integration: `credential_needs` reads an `Integration`'s credential setup and API setup and lists,
per credential type, every config key its templates read, whether it is required and secret,
and where a value can come from:

- ``OpenMolt(integrations={id: {key: ...}})`` (the instance, shared by its agents);
- the agent's ``integrations=[{"integration": id, "credential": {"config": {key: ...}}}]``;
- in an agent file, ``integrations.<id>.<key>``;
- the environment: every key has a variable, ``OPENMOLT_<ID>_<KEY>`` (`env_var`:
  ``OPENMOLT_SLACK_TOKEN``, ``OPENMOLT_S3_SECRET_ACCESS_KEY``, ``OPENMOLT_GMAIL_REFRESH_TOKEN``).
  Python code reads it for a key its config does not give (`environment_config`); the ``openmolt``
  command reads the environment, then a ``.env`` file, then the agent file, then its key store.

The keys follow what the credential code needs when it signs (the same rules as
`openmolt_core.integrations.preflight`), so what the page lists is what a run checks before it
starts.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from openmolt_core._envvars import blank, env_var, key_of_variable
from openmolt_core._support.docs import docs_url

if TYPE_CHECKING:
	from openmolt_core.integrations.model import Credential, Integration

__all__ = [
	"ConfigKey",
	"CredentialNeeds",
	"alias_groups",
	"credential_needs",
	"env_var",
	"environment_config",
	"key_of_variable",
	"needs_as_json",
	"over",
	"with_environment",
]

_ENV_KEYS: dict[tuple[int, str], tuple[Integration, tuple[tuple[str, str], ...]]] = {}
"""Per integration object: the (config key, variable) pairs it reads (cached; specs are long-lived)."""


def _env_keys(spec: Integration, integration: str) -> tuple[tuple[str, str], ...]:
	cached = _ENV_KEYS.get((id(spec), integration))
	if cached is not None and cached[0] is spec:
		return cached[1]
	from openmolt_core.integrations.preflight import config_keys

	pairs: dict[str, str] = {}
	# camelCase first, so an OAuth2 key read in both spellings takes the camelCase one.
	for key in sorted(config_keys(spec), key=lambda k: ("_" in k, k)):
		pairs.setdefault(env_var(integration, key), key)
	out = tuple((key, var) for var, key in pairs.items())
	_ENV_KEYS[id(spec), integration] = (spec, out)
	return out


def _normal(key: str) -> str:
	return key.replace("_", "").replace("-", "").lower()


def alias_groups(spec: Integration, integration: str | None = None) -> list[tuple[str, ...]]:
	"""The config keys that are names of one secret, in groups (Slack's ``token``, ``botToken``).

	A credential field ``{{ config.token | default: config.botToken }}`` reads either: they are
	one key under two names, so the first source that gives either gives it, and a lower one's
	other name must not win over it (an environment's ``OPENMOLT_SLACK_BOT_TOKEN`` over a stale
	``token`` in the key store). Not a choice between two accounts' secrets, each with its own id
	(Twilio's ``apiKeySecret`` with ``apiKeySid``, ``authToken`` with ``accountSid``): there the
	id decides, and the secrets are no aliases.

	Args:
		spec: The integration.
		integration: Its id (default: ``spec.id``, else its name).
	"""
	groups: dict[str, list[str]] = {}
	for need in credential_needs(spec, integration):
		if any(k.instead_of and not k.secret for k in need.keys):
			continue  # another account's secret, chosen by its id (Twilio)
		for key in need.keys:
			if key.instead_of and key.secret:
				group = groups.setdefault(key.instead_of, [key.instead_of])
				if key.name not in group:
					group.append(key.name)
	return [tuple(g) for g in groups.values()]


def _aliases(spec: Integration, integration: str) -> dict[str, frozenset[str]]:
	"""Each key's other names (its `alias_groups` group, itself included), normalised."""
	out: dict[str, frozenset[str]] = {}
	for group in alias_groups(spec, integration):
		names = frozenset(_normal(k) for k in group)
		out.update({_normal(k): names for k in group})
	return out


def environment_config(
	spec: Integration,
	integration: str,
	given: Mapping[str, Any] = {},  # read only
	environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
	"""The config keys of an integration that the environment holds and ``given`` lacks.

	Every key the integration reads (`openmolt_core.integrations.preflight.config_keys`) is looked up as
	``OPENMOLT_<ID>_<KEY>`` (`env_var`); a key given in either spelling (``refreshToken`` or
	``refresh_token``), or under another name of the same secret (`alias_groups`: Slack's
	``botToken`` for ``token``), is not looked up, so code and agent files win over the
	environment in Python. A value that is `blank` (None, ``""``, spaces) is no value: the
	variable fills it, and an empty or blank variable gives nothing. A variable's surrounding
	whitespace is dropped.

	Args:
		spec: The integration.
		integration: Its id, as the agent names it.
		given: The config already given (instance and agent).
		environ: The environment (default: ``os.environ``).
	"""
	env = os.environ if environ is None else environ
	have = {_normal(k) for k, v in given.items() if not blank(v)}
	aliases = _aliases(spec, integration)
	out: dict[str, str] = {}
	for key, variable in _env_keys(spec, integration):
		value = env.get(variable)
		names = aliases.get(_normal(key), frozenset({_normal(key)}))
		if value is not None and not blank(value) and not names & have:
			out[key] = value.strip()
	return out


def over(
	spec: Integration, integration: str, lower: Mapping[str, Any], higher: Mapping[str, Any]
) -> dict[str, Any]:
	"""``higher`` over ``lower``, one key whatever its spelling or name (`alias_groups`).

	A key ``higher`` gives (not `blank`) replaces ``lower``'s value of it in either spelling
	(``refresh_token`` for ``refreshToken``) and under another name of the same secret (Slack's
	``token`` for ``botToken``); otherwise both would be kept, and the credential refused the
	two spellings, or signed with the lower one's name.

	Args:
		spec: The integration.
		integration: Its id.
		lower: The config given first (the instance's).
		higher: The config that wins (the agent's entry).
	"""
	aliases = _aliases(spec, integration)
	given = {_normal(k) for k, v in higher.items() if not blank(v)}
	taken = set().union(*(aliases.get(name, frozenset({name})) for name in given))
	kept = {k: v for k, v in lower.items() if _normal(k) not in taken}
	return {**kept, **higher}


def with_environment(
	spec: Integration,
	integration: str,
	given: Mapping[str, Any],
	environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
	"""``given`` with what the environment holds for the keys it lacks (`environment_config`).

	A key ``given`` holds blank (``{"token": None}``, ``""``) does not hide its variable: it is
	replaced, in each of its spellings, by the variable's value.

	Args:
		spec: The integration.
		integration: Its id, as the agent names it.
		given: The config given (instance and agent).
		environ: The environment (default: ``os.environ``).
	"""
	found = environment_config(spec, integration, given, environ)
	filled = {_normal(k) for k in found}
	kept = {k: v for k, v in given.items() if not (blank(v) and _normal(k) in filled)}
	return {**found, **kept}


@dataclass(frozen=True, slots=True)
class ConfigKey:
	"""One config key an integration reads.

	Args:
		name: The key, as the templates read it (``accessToken``).
		required: Whether a run needs it (False: optional, or one of alternatives).
		secret: Whether it is a secret (never shown, redacted everywhere).
		used_for: What reads it (``header Authorization``, ``base URL``, ``refresh``).
		env_var: The environment variable it is read from when no config gives it (`env_var`).
		instead_of: The key it may replace (Twilio's ``authToken`` for ``apiKeySecret``): one
			of the two is needed.
	"""

	name: str
	required: bool
	secret: bool
	used_for: str
	env_var: str | None = None
	instead_of: str | None = None

	def sources(self, integration: str) -> list[str]:
		"""Where a value for this key can be given, most specific last.

		Args:
			integration: The integration id.
		"""
		out = [
			f"OpenMolt(integrations={{{integration!r}: {{{self.name!r}: ...}}}})",
			f"create_agent(integrations=[{{'integration': {integration!r}, 'credential': "
			f"{{'config': {{{self.name!r}: ...}}}}}}])",
			f"agent file: integrations.{integration}.{self.name}",
		]
		if self.env_var:
			out.append(
				f"environment variable {self.env_var} (the openmolt command also reads a .env "
				"file and `openmolt keys set`)"
			)
		return out


@dataclass(frozen=True, slots=True)
class CredentialNeeds:
	"""What one credential type of an integration needs.

	Args:
		type: The credential type (``bearer``, ``oauth2``...).
		keys: The config keys it reads.
		oauth_scopes: The OAuth scopes to request when authorizing (oauth2).
		auth_url: Where a user authorizes (oauth2), as a template.
		token_url: Where tokens are refreshed (oauth2).
		default: Whether it is the integration's default credential (the first).
		notes: More to know (which keys may replace which).
	"""

	type: str
	keys: tuple[ConfigKey, ...]
	oauth_scopes: tuple[str, ...] = ()
	auth_url: str | None = None
	token_url: str | None = None
	default: bool = False
	notes: tuple[str, ...] = field(default=())


def _refs(template: str | None) -> list[str]:
	from openmolt_core.integrations.preflight import _refs as refs

	return list(dict.fromkeys(refs(template)))


def _secret(name: str) -> bool:
	"""Whether a config key names a secret: the one rule (`secret_name`), an id aside."""
	from openmolt_core._support.masking import secret_name

	return secret_name(name) and not name.lower().endswith("id")


class _Keys:
	def __init__(self, integration: str) -> None:
		self.integration = integration
		self.found: dict[str, ConfigKey] = {}

	def add(
		self,
		names: Iterable[str],
		used_for: str,
		*,
		required: bool = True,
		secret: bool | None = None,
		instead_of: str | None = None,
	) -> None:
		for name in names:
			if name in self.found:
				continue
			self.found[name] = ConfigKey(
				name=name,
				required=required,
				secret=_secret(name) if secret is None else secret,
				used_for=used_for if instead_of is None else f"{used_for}, instead of {instead_of}",
				env_var=env_var(self.integration, name),
				instead_of=instead_of,
			)


def _credential_keys(iid: str, cred: Credential) -> tuple[list[ConfigKey], list[str]]:
	from openmolt_core.integrations.credentials import either_keys
	from openmolt_core.integrations.model import (
		AuthCredential,
		BasicCredential,
		OAuth2Credential,
	)

	keys = _Keys(iid)
	notes: list[str] = []
	signed = [
		*((f"header {k}", v) for k, v in getattr(cred, "headers", {}).items()),
		*((f"query parameter {k}", v) for k, v in getattr(cred, "query_params", {}).items()),
	]
	for used_for, template in signed:
		either = either_keys(template)  # ``a | default: b``: a, or else b
		keys.add(either[:1] or _refs(template), used_for)
		for other in either[1:]:
			keys.add([other], used_for, required=False, instead_of=either[0])
	if isinstance(cred, OAuth2Credential):
		keys.add(
			["accessToken"], "the access token (refreshed when missing or expired)", required=False
		)
		keys.add(["expiryDate"], "when the access token expires", required=False, secret=False)
		fields = (
			("refresh_token", "refreshToken", "refresh"),
			("client_id", "clientId", "refresh and authorization"),
			("client_secret", "clientSecret", "refresh (none for a public client)"),
			("token_url", "tokenUrl", "refresh"),
			("auth_url", "authUrl", "authorization"),
		)
		for attr, default, used_for in fields:
			template = getattr(cred, attr)
			names = _refs(template) if template is not None else [default]
			keys.add(names, used_for, required=False)
		notes.append(
			"give accessToken, or refreshToken with clientId (and clientSecret for a "
			"confidential client): the token is refreshed when missing or expired"
		)
		notes.append("every key also works in snake_case (access_token, refresh_token...)")
	elif isinstance(cred, BasicCredential):
		for template, default, used_for, secret in (
			(cred.username, "username", "basic-auth user", None),
			(cred.password, "password", "basic-auth password", True),
		):
			# ``a | default: b``: a, or else b (as the pre-run check asks for them).
			first, *others = _refs(template) if template else [default]
			keys.add([first], used_for, secret=secret)
			for other in others:
				keys.add([other], used_for, required=False, secret=secret, instead_of=first)
	elif isinstance(cred, AuthCredential):
		for param, template in cred.params.items():
			keys.add(
				_refs(template),
				f"{cred.type} auth: {param.replace('_', ' ')}",  # "aws_sigv4 auth: access key id"
				required=param not in cred.optional_params,
				secret=param in cred.secret_params,
			)
	return list(keys.found.values()), notes


def _setup_keys(spec: Integration, iid: str, taken: set[str]) -> list[ConfigKey]:
	from openmolt_core.integrations.preflight import setup_required_keys

	setup = spec.api_setup
	keys = _Keys(iid)
	keys.found.update({name: ConfigKey(name, False, False, "") for name in taken})
	required = set(setup_required_keys(spec))  # as the pre-run check asks for them
	sources = [
		("base URL", setup.base_url),
		*((f"header {k}", v) for k, v in setup.headers.items()),
	]
	sources += [(f"query parameter {k}", str(v)) for k, v in setup.query_params.items()]
	for used_for, template in sources:
		for name in _refs(template):
			keys.add([name], used_for, required=name in required)
	return [k for name, k in keys.found.items() if name not in taken]


def _tool_keys(spec: Integration, iid: str, taken: set[str]) -> list[ConfigKey]:
	"""The keys the tools read themselves (WhatsApp's ``phoneNumberId``): optional, by tool."""
	from openmolt_core.integrations.preflight import tool_keys

	keys = _Keys(iid)
	for name, handles in sorted(tool_keys(spec).items()):
		if name in taken or "_" in name:
			continue
		shown = ", ".join(handles[:3]) + (
			f" and {len(handles) - 3} more" if len(handles) > 3 else ""
		)
		keys.add([name], f"read by tools {shown}", required=False)
	return list(keys.found.values())


def credential_needs(spec: Integration, integration: str | None = None) -> list[CredentialNeeds]:
	"""What each credential type of an integration needs, the default one first.

	Args:
		spec: The integration.
		integration: Its id (default: ``spec.id``, else its name).

	Returns:
		One entry per credential type; each lists the config keys of that type, then those the
		API setup reads (a shop domain, a region).
	"""
	from openmolt_core.integrations.model import OAuth2Credential
	from openmolt_core.integrations.preflight import setup_required_keys

	iid = integration or spec.id or spec.name
	url_keys = set(setup_required_keys(spec))
	out = []
	for index, cred in enumerate(spec.credential_setup):
		keys, notes = _credential_keys(iid, cred)
		keys += _setup_keys(spec, iid, {k.name for k in keys})
		keys += _tool_keys(spec, iid, {k.name for k in keys})
		# A base-URL key the credential also reads (Shopify's shop) is required all the same.
		keys = [replace(k, required=True) if k.name in url_keys else k for k in keys]
		oauth = cred if isinstance(cred, OAuth2Credential) else None
		if oauth is not None and oauth.auth_url:
			notes.append(
				f"`openmolt auth {iid}` signs in and keeps these keys encrypted in the credential "
				"store, which agents read after their config and the environment "
				f"({docs_url('guides/accounts.md')})"
			)
		out.append(
			CredentialNeeds(
				type=cred.type,
				keys=tuple(keys),
				oauth_scopes=tuple(oauth.scopes) if oauth else (),
				auth_url=oauth.auth_url if oauth else None,
				token_url=oauth.token_url if oauth else None,
				default=index == 0,
				notes=tuple(notes),
			)
		)
	return out


def needs_as_json(needs: list[CredentialNeeds], integration: str) -> list[dict[str, Any]]:
	"""The needs as JSON-ready dicts (``openmolt tools ID --json``).

	Args:
		needs: From `credential_needs`.
		integration: The integration id.
	"""
	return [
		{
			"type": need.type,
			"default": need.default,
			"keys": [
				{
					"name": key.name,
					"required": key.required,
					"secret": key.secret,
					"usedFor": key.used_for,
					"envVar": key.env_var,
					"insteadOf": key.instead_of,
					"sources": key.sources(integration),
				}
				for key in need.keys
			],
			"oauthScopes": list(need.oauth_scopes),
			"authUrl": need.auth_url,
			"tokenUrl": need.token_url,
			"notes": list(need.notes),
		}
		for need in needs
	]
