"""Check an agent's integration credentials before it runs: missing and misspelled config keys.

An integration's credential templates name the config they read (``{{ config.apiKey }}``). Without
this check a missing key shows up only when the model first calls a tool (``needs config
['apiKey']``), after a paid model call, and a mistyped ``apikey`` is ignored silently. Here:

- `misspelled_keys`: a config key that no template of the integration reads, but that is close to
  one that is read (``apikey`` → ``apiKey``); `create_agent` refuses it.
- `missing_credentials`: what each bound integration's credential needs and its config lacks;
  a run refuses to start without it (`check_credentials`, asked by the credential check
  capability, `openmolt_core.capabilities.credentials`), and the ``openmolt`` command says where
  each key can come from.

The required keys follow what the credential code itself demands when it signs a request
(`openmolt_core.integrations.credentials`), so a check that passes here does not fail there.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from openmolt_core.errors import ConfigurationError

if TYPE_CHECKING:
	from openmolt_core._binding import BoundTool
	from openmolt_core.integrations.model import Credential, Integration

__all__ = [
	"MissingCredential",
	"check_credentials",
	"config_keys",
	"missing_credentials",
	"missing_tool_keys",
	"misspelled_keys",
	"setup_required_keys",
	"tool_keys",
	"tool_url_keys",
	"usable_credential",
]

_REF = re.compile(r"""config(?:\.([A-Za-z_$][\w$]*)|\[\s*["']([^"']+)["']\s*\])""")


# Keys the credential code reads by name when a credential field has no template.
# (the oauth2 ones in both spellings: `openmolt_core.integrations.credentials.OAuth2Config`).
def _oauth2_keys() -> tuple[str, ...]:
	from openmolt_core.integrations.credentials import OAUTH2_CONFIG_KEYS

	return tuple(k for pair in OAUTH2_CONFIG_KEYS.items() for k in pair)


_DEFAULT_KEYS: dict[str, tuple[str, ...]] = {"basic": ("username", "password")}


def _refs(text: str | None) -> list[str]:
	return [a or b for a, b in _REF.findall(text or "")]


def _unset(config: Mapping[str, Any], key: str) -> bool:
	from openmolt_core._envvars import blank

	return blank(config.get(key))  # "  " too: the credential code strips what it signs with


@dataclass(frozen=True, slots=True)
class MissingCredential:
	"""Config one integration's credential needs and does not have.

	Args:
		integration: The integration id.
		credential: The credential type (``bearer``, ``oauth2``...).
		keys: The config keys that are missing, all needed.
		alternatives: Keys any one of which would do instead (an OAuth2 ``refreshToken`` in
			place of an ``accessToken``, Twilio's ``accountSid`` in place of ``apiKeySid``).
		ready: The integration's other credential types whose keys the config holds (X's
			``bearer`` when ``OPENMOLT_X_BEARER_TOKEN`` is set): choosing one would do.
		more: Further fields that each need one of their keys, the first named with its
			alternatives after it (Twilio's password, ``apiKeySecret`` or ``authToken``, after its
			user): every missing field is named at once.
	"""

	integration: str
	credential: str
	keys: tuple[str, ...]
	alternatives: tuple[str, ...] = ()
	ready: tuple[str, ...] = ()
	more: tuple[tuple[str, ...], ...] = ()

	def spelled(self, spell: Callable[[str], str]) -> str:
		"""The missing keys, each spelled by ``spell`` (a variable's name, ``repr``).

		``'apiKeySid' (or 'accountSid') and 'apiKeySecret' (or 'authToken')``: all needed, each
		alternative in place of the key before it.

		Args:
			spell: How to write one key.
		"""
		names = " and ".join(spell(k) for k in self.keys)
		other = " or ".join(spell(k) for k in self.alternatives)
		text = f"{names} (or {other})" if other else names
		for first, *others in self.more:
			text += f" and {spell(first)}"
			if others:
				text += f" (or {' or '.join(spell(k) for k in others)})"
		return text

	@property
	def named(self) -> tuple[str, ...]:
		"""Every key the message names: the needed ones and their alternatives."""
		return (*self.keys, *self.alternatives, *(k for group in self.more for k in group))

	def describe(self) -> str:
		"""``weather needs config 'apiKey' (bearer credential)``."""
		text = (
			f"{self.integration} needs config {self.spelled(repr)} for its {self.credential} "
			"credential"
		)
		for kind in self.ready[:1]:
			text += (
				f" (the config holds what its {kind} credential needs: choose it with "
				f"'credential': {{'type': {kind!r}}} in the integration's entry)"
			)
		return text


def _renders_empty(template: str | None, config: Mapping[str, Any], default_key: str) -> bool:
	if template is None:
		return _unset(config, default_key)
	from openmolt_core.integrations.templating import MISSING, render_string

	try:
		value = render_string(template, {"config": config, "input": {}})
	except Exception:
		return True
	return value is MISSING or value is None or (isinstance(value, str) and not value.strip())


def _field_keys(template: str | None, default_key: str) -> list[str]:
	return _refs(template) if template is not None else [default_key]


def setup_required_keys(spec: Integration) -> list[str]:
	"""Config keys without which the API setup's base URL is malformed (a Shopify ``shop``).

	Keys read under ``{% if %}`` or through a ``default`` filter are optional; so are those of
	the setup's headers and query parameters, which are left out of a request when they render
	empty (Stripe's ``Stripe-Account``). A header a service always needs belongs to the
	credential, whose header keys are all required.

	Args:
		spec: The integration.
	"""
	template = spec.api_setup.base_url
	if "{%" in template:
		return []
	return [
		name
		for name in dict.fromkeys(_refs(template))
		if not re.search(r"config\." + re.escape(name) + r"\s*\|\s*default", template)
	]


def _missing_for(
	iid: str, credential: Credential, config: Mapping[str, Any], spec: Integration | None = None
) -> MissingCredential | None:
	from openmolt_core.integrations.model import (
		AuthCredential,
		BasicCredential,
		BearerCredential,
		CustomCredential,
		OAuth2Credential,
	)

	kind = credential.type
	# The base URL's keys (a shop domain), whatever the credential.
	setup = tuple(k for k in setup_required_keys(spec) if _unset(config, k)) if spec else ()
	if isinstance(credential, (BearerCredential, CustomCredential)):
		from openmolt_core.integrations.credentials import either_keys

		# As the credential code demands when it signs: every key its templates name.
		queries = credential.query_params if isinstance(credential, CustomCredential) else {}
		templates = (*credential.headers.values(), *queries.values())
		keys = dict.fromkeys(k for t in templates if not either_keys(t) for k in _refs(t))
		# A ``a | default: b`` field needs one of its keys: the first is named, the rest
		# as its alternatives (after the keys that are all needed).
		unmet = [
			e for t in templates if (e := either_keys(t)) and all(_unset(config, k) for k in e)
		]
		first_unmet = unmet[0] if unmet else []
		wanted = (*(k for k in keys if _unset(config, k)), *setup, *(e[0] for e in unmet))
		missing = tuple(dict.fromkeys(wanted))
		return MissingCredential(iid, kind, missing, tuple(first_unmet[1:])) if missing else None
	if isinstance(credential, OAuth2Credential):
		from openmolt_core.integrations.credentials import oauth2_config

		config = oauth2_config(config)
		# Its own headers' keys other than the token (Etsy's x-api-key), as the credential
		# code demands when it signs.
		headers = dict.fromkeys(k for t in credential.headers.values() for k in _refs(t))
		own = [k for k in headers if k not in ("accessToken", "access_token")]
		missing = tuple(dict.fromkeys((*(k for k in own if _unset(config, k)), *setup)))
		if not _unset(config, "accessToken"):
			return MissingCredential(iid, kind, missing) if missing else None
		if not _renders_empty(credential.refresh_token, config, "refreshToken"):
			# The token is got by a refresh, which names the client (RFC 6749 section 2.3; every
			# service's token endpoint refuses a refresh without it, a public client's too).
			if _renders_empty(credential.client_id, config, "clientId"):
				client = _field_keys(credential.client_id, "clientId")
				missing = tuple(dict.fromkeys((*missing, *client)))
			return MissingCredential(iid, kind, missing) if missing else None
		refresh = _field_keys(credential.refresh_token, "refreshToken")
		return MissingCredential(iid, kind, (*missing, "accessToken"), tuple(refresh))
	fields: list[tuple[str | None, str]] = []
	if isinstance(credential, BasicCredential):
		fields = [(credential.username, "username")]
		if credential.password is not None and _refs(credential.password):
			# A password template that names keys (Twilio's secret or auth token) needs them.
			fields.append((credential.password, "password"))
	elif isinstance(credential, AuthCredential):
		# A type an integration registers: every parameter it does not call optional.
		fields = [
			(template, name)
			for name, template in credential.params.items()
			if name not in credential.optional_params
		]
	missing_fields = [(t, k) for t, k in fields if _renders_empty(t, config, k)]
	if not missing_fields:
		return MissingCredential(iid, kind, setup) if setup else None
	# A field that may come from either of two keys (``a | default: b``) needs only one: the
	# first such field is named with its alternatives, each further one in ``more``.
	choices = [f for f in missing_fields if len(_field_keys(*f)) > 1]
	if choices:
		first, *others = _field_keys(*choices[0])
		plain = [k for f in missing_fields if f not in choices for k in _field_keys(*f)]
		more = tuple(tuple(_field_keys(*f)) for f in choices[1:])
		named = tuple(dict.fromkeys((first, *plain, *setup)))
		return MissingCredential(iid, kind, named, tuple(others), more=more)
	needed = dict.fromkeys(k for t, d in missing_fields for k in _field_keys(t, d))
	return MissingCredential(iid, kind, tuple(dict.fromkeys((*needed, *setup))))


def missing_credentials(tools: Iterable[BoundTool]) -> list[MissingCredential]:
	"""What the credentials of an agent's bound integrations lack, one entry per integration.

	Args:
		tools: The agent's bound tools (integrations without HTTP tools or credential need none).
	"""
	out: list[MissingCredential] = []
	seen: set[int] = set()
	for tool in tools:
		context = tool.context
		credential = getattr(context.auth, "credential", None)
		if tool.account is not None:  # per end user: checked per call (openmolt_core.accounts)
			continue
		if credential is None or id(context) in seen:
			continue
		seen.add(id(context))
		spec = cast("Integration | None", tool.integration)
		config = context.config or {}
		problem = _missing_for(context.integration, credential, config, spec)
		if problem is not None:
			ready = _ready_instead(context.integration, credential, config, spec)
			out.append(replace(problem, ready=ready) if ready else problem)
	return out


def _ready_instead(
	iid: str, credential: Credential, config: Mapping[str, Any], spec: Integration | None
) -> tuple[str, ...]:
	"""The integration's other credential types that the config satisfies, with a key of theirs."""
	out = []
	for other in spec.credential_setup if spec is not None else ():
		if other.type == credential.type:
			continue
		read = _refs(json.dumps(other.model_dump(mode="json"), default=str))
		given = any(not _unset(config, k) for k in read)
		if given and _missing_for(iid, other, config, spec) is None:
			out.append(other.type)
	return tuple(out)


def usable_credential(iid: str, spec: Integration, config: Mapping[str, Any]) -> Credential | None:
	"""The credential an entry naming no type uses: the first, or the one other type that is ready.

	An integration with several credential types (X: a user's OAuth 2.0 tokens first, an app's
	bearer token second) is used with its first when the entry names none. When the config (the
	environment included) lacks what that one needs and holds everything one other type needs,
	that type is used: a bearer token in ``OPENMOLT_X_BEARER_TOKEN`` is enough, without
	``"credential": {"type": "bearer"}`` in the agent file. The first stays when any of its own
	keys is given (it was meant), and with two such types, or none: the check before the run
	then says what it lacks, and what is ready instead.

	Args:
		iid: The integration's id.
		spec: The integration.
		config: The entry's config, the environment's keys included.
	"""
	first = spec.credential(None)
	if first is None or len(spec.credential_setup) < 2:
		return first
	if _missing_for(iid, first, config, spec) is None:
		return first
	read = _refs(json.dumps(first.model_dump(mode="json"), default=str))
	if first.type == "oauth2":
		read += list(_oauth2_keys())
	if any(not _unset(config, k) for k in read):
		return first  # some of its keys are given: it was meant (the check says what it lacks)
	ready = _ready_instead(iid, first, config, spec)
	return spec.credential(ready[0]) if len(ready) == 1 else first


def check_credentials(tools: Iterable[BoundTool], *, agent: str) -> None:
	"""Refuse to start a run whose integrations lack their credentials.

	Args:
		tools: The agent's bound tools.
		agent: The agent's name, for the message.

	Raises:
		ConfigurationError: Names each integration, the missing keys and where to put them.
	"""
	tools = list(tools)
	problems = missing_credentials(tools)
	if not problems:
		return
	from openmolt_core._envvars import blank_variables, env_var

	lines = [f"agent {agent!r}: " + "; ".join(p.describe() for p in problems)]
	variables = []
	specs = {t.context.integration: t.integration for t in tools if t.integration is not None}
	for problem in problems:
		spelled = problem.spelled(partial(env_var, problem.integration))
		empty = blank_variables(env_var(problem.integration, k) for k in problem.named)
		variables.append(spelled + empty)
		stray = _stray_variables(
			problem.integration, cast("Any", specs.get(problem.integration)), specs
		)
		if stray:
			lines.append(
				f"{', '.join(stray)} {'is' if len(stray) == 1 else 'are'} set, but "
				f"{problem.integration} reads no variable of that name (it reads "
				f"{spelled}): a typo?"
			)
	lines.append(
		f"set {'; '.join(variables)} in the environment, or give them in "
		"OpenMolt(integrations={id: {...}}) or in the agent's "
		"integrations=[{'integration': id, 'credential': {'config': {...}}}]"
	)
	raise ConfigurationError("\n".join(lines))


def _stray_variables(
	integration: str, spec: Integration | None, others: Iterable[str] = ()
) -> list[str]:
	"""``OPENMOLT_<ID>_*`` variables set in the environment that the integration never reads.

	Each key of each of its credential types (`config_keys`) has its variable (`env_var`); a
	variable of its prefix that is none of them (``OPENMOLT_SLACK_API_KEY``) was meant for one.
	A variable of another owner whose prefix is longer (``OPENMOLT_SLACK_ADMIN_API_KEY``, a
	``slackAdmin`` integration's) is that one's, not a misspelling (the command line's rule,
	`openmolt_core.cli._early.near_variable`).

	Args:
		integration: The integration's id.
		spec: Its definition (None: nothing is named).
		others: More integration ids known here (the agent's); the installed ones are added.
	"""
	from openmolt_core._envvars import agent_secret_variable, env_var, installed_owners

	if spec is None:
		return []
	prefix = env_var(integration, "")  # OPENMOLT_SLACK_
	read = {env_var(integration, key) for key in config_keys(spec)}
	found = [
		v
		for v in os.environ
		if v.startswith(prefix)
		and v not in read
		and os.environ[v].strip()
		and not agent_secret_variable(v)  # OPENMOLT_SLACK_BOT_WEBHOOK_SECRET: an agent's
	]
	if not found:
		return []
	owned = {env_var(o, "") for o in [*others, *installed_owners()]} - {prefix}
	longer = [p for p in owned if p.startswith(prefix)]  # OPENMOLT_SLACK_ADMIN_
	return sorted(v for v in found if not any(v.startswith(p) for p in longer))


_PLAIN_CONFIG = re.compile(r"\{\{-?\s*config\.([A-Za-z_$][\w$]*)\s*-?\}\}")
"""``{{ config.phoneNumberId }}`` alone: no default, so an empty one breaks the URL."""


def tool_url_keys(tool: Any) -> list[str]:
	"""Config keys an HTTP tool's URL cannot do without (WhatsApp's ``phoneNumberId``).

	A key its endpoint or base URL reads plainly (``/{{ config.phoneNumberId }}/messages``); not
	one read under ``{% if %}`` or with a ``default`` (Instagram's ``input.ig_user_id | default:
	config.igUserId``), which may stay unset.

	Args:
		tool: A tool of the integration (others than `HttpTool` read none).
	"""
	found: list[str] = []
	for template in (getattr(tool, "endpoint", None), getattr(tool, "base_url", None)):
		if isinstance(template, str) and "{%" not in template:
			found += _PLAIN_CONFIG.findall(template)
	return list(dict.fromkeys(found))


def tool_keys(spec: Integration) -> dict[str, list[str]]:
	"""Every config key the integration's tools read themselves, with the tools that read it.

	What the credential and API setup read is not here (`config_keys` has all of them).

	Args:
		spec: The integration.
	"""
	out: dict[str, list[str]] = {}
	for tool in spec.tools:
		dump = getattr(tool, "model_dump", None)
		if not callable(dump):
			continue
		text = json.dumps(dump(mode="json"), default=str)
		for key in dict.fromkeys(_refs(text)):
			out.setdefault(key, []).append(str(getattr(tool, "handle", "?")))
	return out


def missing_tool_keys(tools: Iterable[BoundTool]) -> list[tuple[str, str, list[str]]]:
	"""``(integration, key, tools)`` for each config key some tools' URLs need and lack.

	Not a reason to refuse a run (the agent may never call those tools), but said before it: a
	WhatsApp agent without ``phoneNumberId`` cannot send a message.

	Args:
		tools: The agent's bound tools.
	"""
	found: dict[tuple[str, str], list[str]] = {}
	for tool in tools:
		if tool.account is not None:  # per end user: their config comes with each call
			continue
		if not tool.allowed:  # outside the granted scopes: never called
			continue
		config = tool.context.config or {}
		for key in tool_url_keys(tool.tool):
			if _unset(config, key):
				found.setdefault((tool.context.integration, key), []).append(tool.handle)
	return [(iid, key, handles) for (iid, key), handles in found.items()]


def config_keys(spec: Integration) -> set[str]:
	"""Every config key an integration reads: its templates' ``config.*`` and its credentials'."""
	text = json.dumps(spec.model_dump(mode="json", exclude={"tools"}), default=str)
	for tool in spec.tools:
		dump = getattr(tool, "model_dump", None)
		if callable(dump):
			text += json.dumps(dump(mode="json"), default=str)
	keys = set(_refs(text))
	for credential in spec.credential_setup:
		keys.update(_DEFAULT_KEYS.get(credential.type, ()))
		if credential.type == "oauth2":
			keys.update(_oauth2_keys())
	return keys


def _one_swap(a: str, b: str) -> bool:
	"""Whether ``a`` is ``b`` with two neighbouring letters swapped."""
	if len(a) != len(b):
		return False
	diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
	if len(diff) != 2 or diff[1] != diff[0] + 1:
		return False
	i, j = diff
	return a[i] == b[j] and a[j] == b[i]


def misspelled_keys(spec: Integration, config: Mapping[str, Any]) -> list[tuple[str, str]]:
	"""Config keys the integration never reads that look like one it does read.

	A key the integration does not know but that resembles none of its keys is left alone: an
	``on_token_refresh`` callback or a tool of the user's own may read it.

	Args:
		spec: The integration.
		config: The config given for it.

	Returns:
		``(given, probably meant)`` pairs.
	"""
	known = config_keys(spec)
	lowered = {k.lower().replace("_", ""): k for k in known}
	out = []
	for key in config:
		if not isinstance(key, str) or key in known:
			continue
		norm = key.lower().replace("_", "").replace("-", "")
		if norm in lowered:
			out.append((key, lowered[norm]))
			continue
		swapped = [k for n, k in lowered.items() if len(n) >= 4 and _one_swap(norm, n)]
		if swapped:  # two letters swapped (tokne for token): difflib rates it below the cutoff
			out.append((key, swapped[0]))
			continue
		import difflib  # only for a key that is misspelt: a run that spells its keys never needs it

		close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.85)
		if close:
			out.append((key, close[0]))
	return out
