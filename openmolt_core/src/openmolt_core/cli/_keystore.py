"""The per-user key store behind ``openmolt keys``: variable names to values, in a 0600 file.

Like ``llm keys``: ``openmolt keys set slack`` asks for the value without echoing it and keeps it
under its variable name (``OPENMOLT_SLACK_TOKEN``), so the command reads it exactly as it reads the
environment. It is the user's default, read last: the environment, a ``.env`` file and the agent
file all win over it (an agent.py's own config too). The file is JSON,
``$OPENMOLT_KEYS_FILE`` or ``$XDG_CONFIG_HOME/openmolt/keys.json`` (``~/.config/openmolt/keys.json``),
created 0600 in a 0700 folder, and narrowed to those modes when it is read (a store copied in, or
made by an older version, with a wider mode). It is not encrypted: it is as safe as the user's
account.

Two processes may write it at once (two ``openmolt serve``, a run keeping a rotated token while
``openmolt keys set`` stores another key): each change is read, made and written under a lock
file beside it (``.keys.json.lock``), so neither loses the other's. A rotated refresh token is
kept through `RefreshTokens`, which holds a second lock per credential from reading the token to
saving the new one: one refresh at a time, on the newest token, across processes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openmolt_core.errors import ConfigurationError, OpenMoltError

if TYPE_CHECKING:
	from openmolt_core.openmolt import OpenMolt

__all__ = [
	"MAX_STORE_BYTES",
	"RefreshTokens",
	"know_kept_keys",
	"load",
	"path",
	"remove",
	"save",
	"where_set",
]


MAX_STORE_BYTES = 1 << 20
"""The largest key store read (a key is under a kilobyte): a larger file, or one that is not a
regular file (``OPENMOLT_KEYS_FILE`` naming a folder, a device or a pipe), is refused unread."""


def path() -> Path:
	"""Where the key store lives (``$OPENMOLT_KEYS_FILE``, else under the user's config folder)."""
	explicit = os.environ.get("OPENMOLT_KEYS_FILE")
	if explicit:
		return Path(explicit)
	base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
	return Path(base) / "openmolt" / "keys.json"


def load() -> dict[str, str]:
	"""The stored values by variable name (empty when there is no store).

	Raises:
		ConfigurationError: The file cannot be read (it is not a regular file, or larger than
			`MAX_STORE_BYTES`), or it is not a JSON object of strings.
	"""
	from openmolt_core._support.paths import read_text

	file = path()
	try:
		text = read_text(file, limit=MAX_STORE_BYTES)
	except FileNotFoundError:
		return {}
	except OSError as exc:
		raise ConfigurationError(f"{file}: cannot read the key store ({exc.strerror})") from None
	except UnicodeDecodeError as exc:
		from openmolt_core._support.textfile import not_utf8

		raise ConfigurationError(not_utf8(f"the key store {file}", exc)) from None
	_narrow(file)
	try:
		data = json.loads(text)
	except ValueError:
		data = None
	if not isinstance(data, dict) or not all(
		isinstance(k, str) and isinstance(v, str) for k, v in data.items()
	):
		raise ConfigurationError(
			f"{file}: the key store is not a JSON object of strings; fix or delete it"
		)
	return data


class _Kept:
	"""The owner of the keys `know_kept_keys` made known (one at a time: the last call's)."""


_KEPT: list[_Kept] = []


def know_kept_keys() -> None:
	"""Make the secrets the command's other key sources keep known to this process's masking.

	The command reads the ``.env`` file (``./.env``) and the key store (``openmolt keys set``)
	as it reads the environment, but only the environment's secrets are known to a process that
	builds no agent: ``openmolt logs``, ``openmolt sessions`` and the viewer mask what they show
	with the secrets known now (`openmolt_core._support.masking.mask_known`), and a record made
	before a key was kept (or by another program) holds it as it was. The values of the variables
	named like secrets in either (`environment_secrets`) are registered (`register_key`); a
	source that cannot be read is left out here (the commands that use it say why). A later call
	replaces what an earlier one made known.
	"""
	from openmolt_core._support.masking import environment_secrets
	from openmolt_core.cli._keys import default_dotenv, read_dotenv
	from openmolt_core.secrets import register_key

	found: set[str] = set()
	try:
		dotenv = default_dotenv(None)
		if dotenv is not None:
			found |= environment_secrets(read_dotenv(dotenv))
	except (ConfigurationError, OSError, ValueError):
		pass
	try:
		found |= environment_secrets(load())
	except (ConfigurationError, OSError, ValueError):
		pass
	owner = _Kept()
	if found:
		register_key(owner, *sorted(found))
	_KEPT[:] = [owner]  # the previous owner dies: its keys are forgotten


def _narrow(file: Path) -> None:
	"""Narrow a readable store to 0600 (and its own folder to 0700) if it is wider.

	A store made by an older version, or copied in, may be readable by others: its secrets are
	kept from them from the first time the command reads it, not only after the next write.
	"""
	import stat

	from openmolt_core._support.private import DIR_MODE, FILE_MODE

	try:
		if stat.S_IMODE(file.stat().st_mode) & 0o077:
			os.chmod(file, FILE_MODE)
		if not os.environ.get("OPENMOLT_KEYS_FILE"):  # the folder is OpenMolt's own
			if stat.S_IMODE(file.parent.stat().st_mode) & 0o077:
				os.chmod(file.parent, DIR_MODE)
	except OSError:
		pass  # not the user's file to change: it is read as it is


def _write(values: dict[str, str]) -> Path:
	from openmolt_core._support.private import FILE_MODE, private_dir

	file = path()
	private_dir(file.parent, own=not os.environ.get("OPENMOLT_KEYS_FILE"))
	# Written whole to a 0600 temporary beside it, then renamed: never a half-written store.
	temporary = file.with_name(f".{file.name}.{os.getpid()}.tmp")
	fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, FILE_MODE)
	try:
		os.fchmod(fd, FILE_MODE)  # whatever the umask
		with os.fdopen(fd, "w", encoding="utf-8") as out:
			json.dump(dict(sorted(values.items())), out, indent=2)
			out.write("\n")
	except BaseException:
		temporary.unlink(missing_ok=True)
		raise
	os.replace(temporary, file)
	return file


def _locked(name: str) -> contextlib.AbstractContextManager[None]:
	"""The lock file ``.<store>.<name>`` beside the store, held exclusively (`locked_file`)."""
	from openmolt_core._support.private import locked_file

	file = path()
	lock = file.with_name(f".{file.name}.{name}")
	return locked_file(lock, own_dir=not os.environ.get("OPENMOLT_KEYS_FILE"))


def _change(variables: Mapping[str, str | None]) -> bool:
	"""Set (a value) or forget (None) variables, read and written under the store's lock.

	Returns whether the store changed.
	"""
	with _locked("lock"):
		values = load()
		before = dict(values)
		for variable, value in variables.items():
			if value is None:
				values.pop(variable, None)
			else:
				values[variable] = value
		if values == before:
			return False
		_write(values)
		return True


def save(variable: str, value: str) -> Path:
	"""Store one value under its variable name; returns the store's file.

	Args:
		variable: ``OPENMOLT_SLACK_TOKEN``.
		value: The secret.
	"""
	_change({variable: value})
	return path()


def remove(variable: str) -> bool:
	"""Forget one value; returns whether it was stored.

	Args:
		variable: ``OPENMOLT_SLACK_TOKEN``.
	"""
	return _change({variable: None})


class RefreshTokens:
	"""An OAuth2 credential's tokens that the key store gave, as a credential store to refresh through.

	Given to `openmolt_core.integrations.credentials.OAuth2Auth.use_store`: before a refresh the
	auth takes this credential's lock (a lock file of its own, across processes), reads the
	store again and uses a refresh token another process saved meanwhile instead of the one it
	was loaded with (a single-use token, as X's, is refused once spent), then saves the new one
	before letting go. Only the keys the key store gave are read and written (``variables``):
	a token from the environment or the agent file stays where it is.

	Args:
		variables: The camelCase config key to its variable (``refreshToken`` to
			``OPENMOLT_X_REFRESH_TOKEN``).
	"""

	__slots__ = ("variables",)

	def __init__(self, variables: Mapping[str, str]) -> None:
		self.variables = dict(variables)

	def __repr__(self) -> str:
		return f"RefreshTokens({sorted(self.variables.values())})"  # names only, never values

	def load(self, integration: str, user: str | None = None) -> dict[str, Any] | None:
		"""The key store's values of this credential's keys, or None when it has none.

		Args:
			integration: The integration id (one credential per store: not read).
			user: None (the key store is the operator's).
		"""
		stored = load()
		found = {k: stored[v] for k, v in self.variables.items() if stored.get(v, "").strip()}
		return found or None

	def save(self, integration: str, config: Mapping[str, Any], user: str | None = None) -> None:
		"""Keep the new values of this credential's keys (the others of ``config`` are not the store's).

		Args:
			integration: The integration id.
			config: The credential's config after a refresh.
			user: None.
		"""
		_change(
			{
				variable: str(config[key])
				for key, variable in self.variables.items()
				if config.get(key) not in (None, "")
			}
		)

	def delete(self, integration: str, user: str | None = None) -> bool:
		"""Forget this credential's keys; True when one was stored.

		Args:
			integration: The integration id.
			user: None.
		"""
		return _change(dict.fromkeys(self.variables.values()))

	def entries(self) -> list[tuple[str, str | None]]:
		"""Nothing is listed: the key store lists variables (``openmolt keys list``)."""
		return []

	def locked(
		self, integration: str, user: str | None = None
	) -> contextlib.AbstractContextManager[None]:
		"""Hold this credential's lock across processes, from reading the token to saving the new one.

		Args:
			integration: The integration id.
			user: None.
		"""
		names = "\0".join(sorted(self.variables.values()))
		return _locked(hashlib.sha256(names.encode()).hexdigest()[:16] + ".lock")


def where_set() -> dict[str, str]:
	"""Where the command finds each ``OPENMOLT_*`` variable now: the environment, ./.env, the store.

	The first that has it, as the command reads them; never the values.
	"""
	from openmolt_core.cli._keys import KEY_STORE, default_dotenv, read_dotenv

	found: dict[str, str] = {}
	try:
		found.update({k: KEY_STORE for k, v in load().items() if v.strip()})
	except OpenMoltError:
		pass  # a broken store is said by the commands that read it
	try:
		dotenv = default_dotenv(None)
		values = read_dotenv(dotenv) if dotenv else {}
	except (OpenMoltError, OSError) as exc:  # a run refuses the file: say it here too
		print(f"openmolt: warning: {exc} (its keys are not counted here)", file=sys.stderr)
		values = {}
	found.update(
		{k: str(dotenv) for k, v in values.items() if v.strip() and k.startswith("OPENMOLT_")}
	)
	found.update(
		{
			k: "the environment"
			for k, v in os.environ.items()
			if v.strip() and k.startswith("OPENMOLT_")
		}
	)
	return found


def _unknown_owner(
	name: str, providers: list[str], integrations: list[str], *, keyed: bool = False
) -> ConfigurationError | None:
	"""What ``openmolt keys set NAME`` says of a name nothing installed has.

	A typo of an installed one gets that one; a built-in integration that is not installed (or a
	typo of one) the command that installs it here, as ``openmolt tools NAME`` says. None when a
	key was named too and the name is none of those: an integration an agent file adds itself
	(``openapi``, ``mcpServers``, an agent.py's), whose variable is then what is stored.
	"""
	from openmolt_core._hints import close_match, extra_for, install_command, known_extras
	from openmolt_core._support.suggest import typo_of

	near = typo_of(name, [*providers, *integrations])
	extras = known_extras()
	extra = extra_for(name) if extra_for(name) in extras else None  # google-drive: not google
	if extra is None and near is None:
		extra = close_match(name, extras)
	if extra is not None:
		said = (
			"is a built-in integration that is not installed;"
			if extra == extra_for(name)
			else f"is not installed; did you mean {extra!r}?"
		)
		return ConfigurationError(
			f"{name!r} {said} run: "
			f"{install_command(f'openmolt[{extra}]')} (or give the variable's name, "
			"OPENMOLT_<ID>_<KEY>)"
		)
	if near is None and keyed and re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", name):
		return None
	hint = f"did you mean {near!r}? " if near else ""
	return ConfigurationError(
		f"{name!r} is neither a provider ({', '.join(providers)}) nor an installed integration; "
		f"{hint}`openmolt tools` lists the integrations, or give the variable's name "
		"(OPENMOLT_<ID>_<KEY>) for one that is not installed"
	)


def _owner(om: OpenMolt, name: str, *, keyed: bool = False, action: str = "set") -> tuple[str, str]:
	"""``("provider" | "integration" | "elsewhere", its name)`` for ``openmolt keys ACTION NAME``.

	``"elsewhere"``: nothing installed has the name, a key was named too (``keyed``), and the
	name is no typo of an installed one: an integration an agent file adds (`_unknown_owner`).

	Raises:
		ConfigurationError: Nothing installed has that name (the nearest one is offered).
		OpenMoltError: The integration is installed but cannot be loaded (the error says why).
	"""
	providers = om.plugins.provider_names()
	integrations = om.plugins.integration_ids()
	if name in providers:
		return "provider", name
	try:
		spec = om.plugins.integration(name)  # its extra's spelling too (google-drive)
	except OpenMoltError:
		if name in integrations:
			raise  # installed, but its plugin cannot be loaded: the error says why
	else:
		return "integration", spec.id or name
	from openmolt_core.cli._said import NOT_SAID, reads_as_name

	if not reads_as_name(name):  # the value where the name goes (`keys set sk-...`): not said
		raise ConfigurationError(
			f"`openmolt keys {action} NAME`: {NOT_SAID} is neither a provider "
			f"({', '.join(providers)}) nor an integration (`openmolt tools` lists them)"
			+ ("; the key's value is asked for (or given with --value)" if action == "set" else "")
		)
	error = _unknown_owner(name, providers, integrations, keyed=keyed)
	if error is None:
		return "elsewhere", name
	raise error


def _named_variable(om: OpenMolt, variable: str, *, removing: bool = False) -> str:
	"""A variable given by its name: one that an installed owner reads, or a typo of one.

	``OPENMOLT_SLACK_TOKN`` is refused with the name it is close to; a variable of nothing
	installed (an integration of another environment) is taken as it is.
	"""
	from openmolt_core._envvars import agent_secret_variable
	from openmolt_core._support.suggest import typo_of
	from openmolt_core.cli._said import NOT_SAID, reads_as_name
	from openmolt_core.integrations.connect import env_var
	from openmolt_core.integrations.preflight import config_keys

	if agent_secret_variable(variable):  # an agent's webhook secret or token (openmolt serve)
		return variable
	if not reads_as_name(variable) and not (removing and variable in load()):
		# A value in the name (``OPENMOLT_sk-...``): stored, `keys list` would show it.
		raise ConfigurationError(
			f"`openmolt keys set OPENMOLT_<ID>_<KEY>`: {NOT_SAID} is no variable's name; give "
			"the name (OPENMOLT_SLACK_TOKEN), or the provider or integration (`openmolt keys set "
			"openai`), and the value when asked (or with --value)"
		)
	known = [env_var(p) for p in om.plugins.provider_names()]
	owner = None
	for iid in om.plugins.integration_ids():
		prefix = env_var(iid, "")
		if variable.startswith(prefix) and (owner is None or len(prefix) > len(owner[1])):
			owner = (iid, prefix)
	if owner is not None:
		try:
			spec = om.plugins.integration(owner[0])
		except OpenMoltError:
			return variable  # it cannot load: `openmolt tools ID` says why
		read = sorted({env_var(owner[0], k) for k in config_keys(spec)})
		if variable in read:
			return variable
		near = typo_of(variable, read)
		hint = f"did you mean {near}? " if near else ""
		raise ConfigurationError(
			f"{variable}: {owner[0]} reads no such variable; {hint}it reads {', '.join(read)} "
			f"(`openmolt tools {owner[0]}`)"
		)
	if variable in known:
		return variable
	every = list(known)
	for iid in om.plugins.integration_ids():  # OPENMOLT_SLAK_TOKEN: a typo of slack's
		try:
			every += [env_var(iid, k) for k in config_keys(om.plugins.integration(iid))]
		except OpenMoltError:
			continue
	tails = {v.removeprefix("OPENMOLT_"): v for v in every}
	# Compared without the common prefix, which would make any two names look alike; by
	# difflib's ratio alone: a variable for an integration installed later (GITLAB_TOKEN) is
	# no typo of one installed now (GITHUB_TOKEN), as a couple of edits would say.
	import difflib

	alike = difflib.get_close_matches(variable.removeprefix("OPENMOLT_"), tails, n=1, cutoff=0.9)
	if alike:
		raise ConfigurationError(
			f"{variable}: nothing installed reads it; did you mean {tails[alike[0]]}? (or give the "
			"provider or integration: `openmolt keys set openai`, `openmolt keys set slack`)"
		)

	if not removing:  # a note on what is stored; a key removed needs none
		print(
			f"openmolt: note: no installed provider or integration reads {variable}; it is stored "
			"for one you install later (or for an agent.py, which sees it as an environment "
			"variable)",
			file=sys.stderr,
		)
	return variable


def _key_name(key: str) -> bool:
	"""Whether ``key`` reads as a config key's name (``apiKey``, ``oauth2-token``), not a value.

	The command line's one rule (`openmolt_core.cli._said.reads_as_name`), without a ``.``
	(``s3.secretAccessKey`` is split before).
	"""
	from openmolt_core.cli._said import reads_as_name

	return "." not in key and reads_as_name(key)


def _elsewhere(om: OpenMolt, name: str, key: str) -> str:
	"""The variable of ``NAME KEY`` for an integration an agent file adds (`_owner`'s "elsewhere").

	Raises:
		ConfigurationError: No integration may have the id (``local``, ``openmolt``), or the
			variable is one an installed provider or integration reads (``s3_secret accessKey``
			is s3's ``OPENMOLT_S3_SECRET_ACCESS_KEY``): it is set as that one's key, by its name.
	"""
	from openmolt_core.integrations.connect import env_var
	from openmolt_core.integrations.preflight import config_keys
	from openmolt_core.plugins import _id_problem  # the one rule of the ids integrations take

	problem = _id_problem(name)
	if problem:  # 'local', 'openmolt': no agent file's integration has it, so none reads its key
		raise ConfigurationError(f"`openmolt keys set {name} {key}`: {problem}")
	variable = env_var(name, key)
	owners = [(p, "apiKey", p) for p in om.plugins.provider_names() if env_var(p) == variable]
	for iid in om.plugins.integration_ids():
		if not owners and variable.startswith(env_var(iid, "")):
			try:
				read = config_keys(om.plugins.integration(iid))
			except OpenMoltError:
				continue  # it cannot load: `openmolt tools ID` says why
			owners += [(iid, k, f"{iid} {k}") for k in read if env_var(iid, k) == variable]
	if owners:
		owner, its, command = owners[0]
		raise ConfigurationError(
			f"{variable} is {owner}'s {its} (`openmolt keys set {command}`), not a key of an "
			f"integration named {name!r}; an agent file's own integration needs an id whose "
			"variables are its own"
		)
	return variable


def _variable(name: str, key: str | None, *, removing: bool = False) -> str:
	"""The variable for ``NAME [KEY]``: a variable itself, a provider, or an integration's key.

	Raises:
		ConfigurationError: The name or key is unknown (the nearest is offered), or the
			integration has several keys and none was named.
	"""
	from openmolt_core.integrations.connect import credential_needs, env_var
	from openmolt_core.openmolt import OpenMolt

	om = OpenMolt()
	if name.startswith("OPENMOLT_"):
		return _named_variable(om, name, removing=removing)
	if (
		key is None and name.count(".") == 1
	):  # s3.secretAccessKey, as tools writes slack.postMessage
		name, key = name.split(".")
	if key is not None and not _key_name(key):
		# Not said back: a value given where its key's name goes (`keys set openai sk-...`)
		# would be printed, or stored as a variable's name.
		action = "remove" if removing else "set"
		raise ConfigurationError(
			f"`openmolt keys {action} {name} KEY`: KEY is the name of the config key "
			"(apiKey, token, clientSecret), not its value"
			+ (", which is asked for (or given with --value)" if not removing else "")
		)
	kind, name = _owner(om, name, keyed=key is not None, action="remove" if removing else "set")
	if kind == "elsewhere" and key is not None:
		variable = _elsewhere(om, name, key)
		print(
			f"openmolt: note: no installed integration is named {name!r}; {variable} is the "
			'variable an agent file\'s own integration of that id reads (from "openapi", '
			'"mcpServers" or an agent.py)',
			file=sys.stderr,
		)
		return variable
	if kind == "provider":
		if key is not None and key.replace("_", "").lower() != "apikey":
			raise ConfigurationError(
				f"{name} is a provider: its one key is its API key (`openmolt keys set {name}`), "
				f"not {key!r}"
			)
		return env_var(name)
	spec = om.plugins.integration(name)
	needs = credential_needs(spec, name)
	if not needs:
		raise ConfigurationError(f"{name} needs no key: it has no credential")
	# The default credential's secret, unless it may be one of two (Twilio's secret or token).
	keys = [
		k for need in needs[:1] for k in need.keys if k.secret and (k.required or k.instead_of)
	] or [k for need in needs for k in need.keys if k.secret]
	if not any(k.instead_of and not k.secret for need in needs[:1] for k in need.keys):
		# Another name for the same secret (Slack's botToken for token) is no choice; a secret
		# that goes with another account id (Twilio's auth token with its account SID) is.
		keys = [k for k in keys if not k.instead_of] or keys
	if key is None and len(keys) == 1:
		return env_var(name, keys[0].name)
	known = sorted({k.name for need in needs for k in need.keys})
	if key is not None:
		# Any spelling of a known key: secret_access_key, SECRET_ACCESS_KEY, secretaccesskey.
		spelled = {k.replace("_", "").lower(): k for k in known}
		found = spelled.get(key.replace("_", "").replace("-", "").lower())
		if found is not None:
			return env_var(name, found)
		from openmolt_core._support.suggest import typo_of

		near = typo_of(key, sorted(known))
		hint = f" (did you mean {near!r}?)" if near else ""
		raise ConfigurationError(
			f"{name} reads no key {key!r}{hint}; say which: `openmolt keys set {name} KEY` with "
			f"KEY one of: {', '.join(known) or 'none'}"
		)
	raise ConfigurationError(
		f"{name} has several keys; say which: `openmolt keys set {name} KEY` with KEY one of: "
		f"{', '.join(known) or 'none'}"
	)


_NEVER_PRINTED = frozenset({"get", "show", "print", "cat", "value"})
"""What other tools call reading a key back (``llm keys get``): not offered as `set`."""

_OTHER_WORDS = {
	**dict.fromkeys(("add", "put", "store", "new", "save"), "set"),
	**dict.fromkeys(("rm", "del", "delete", "unset", "forget"), "remove"),
	**dict.fromkeys(("ls", "show-all"), "list"),
	**dict.fromkeys(("where", "file", "location"), "path"),
}
"""Other words for the actions, which no "did you mean" would find (``delete``: ``remove``)."""


def main(args: list[str]) -> int:
	"""``openmolt keys``: set, list, remove the stored keys, or print the store's path.

	Args:
		args: The arguments after ``keys``.
	"""
	import getpass

	from openmolt_core.cli._argparse import CommandParser

	parser = CommandParser(
		prog="openmolt keys",
		description="Keep API keys and integration secrets in a per-user store (a 0600 file), "
		"read by the openmolt command last: the environment, a .env file and the agent file "
		"win over it.",
	)
	sub = parser.add_subparsers(dest="action", required=True)
	put = sub.add_parser("set", help="store a key (asked without echo, or read from stdin)")
	put.add_argument("name", help="a provider (openai), an integration (slack) or a variable")
	put.add_argument(
		"key",
		nargs="?",
		help="the integration's config key (s3 secretAccessKey, or s3.secretAccessKey)",
	)
	put.add_argument(
		"--value",
		help="the value itself, for scripts: a command line is seen by `ps` and kept in the "
		"shell's history, so a person leaves it out (asked without echo) or pipes it in",
	)
	drop = sub.add_parser("remove", help="forget a stored key")
	drop.add_argument("name")
	drop.add_argument("key", nargs="?")
	listing = sub.add_parser("list", help="the stored variables (never their values)")
	listing.add_argument("--json", action="store_true", help="print JSON: the variables' names")
	sub.add_parser("path", help="print the key store's file")
	word = args[0] if args else ""
	if word in _NEVER_PRINTED:  # `llm keys get openai`: a value is not shown here
		parser.exit(
			2,
			f"openmolt keys: no action {word!r}: stored values are never printed; `openmolt keys "
			"list` names the stored variables, `openmolt keys path` prints the file\n",
		)
	if word in _OTHER_WORDS:  # `keys add`, `keys rm`: not a typo of set or remove, another word
		meant = _OTHER_WORDS[word]
		parser.exit(
			2,
			f"openmolt keys: no action {word!r}; did you mean {meant!r}? (choose from set, remove, list, path)\n",
		)
	ns = parser.parse_args(args)
	if ns.action == "path":
		print(path())
		return 0
	if ns.action == "list":
		stored = load()
		if ns.json:  # as `sessions list --json` and `auth list --json`: `[]` when there is none
			print(json.dumps(list(stored), indent=2))
			return 0
		for variable in stored:
			print(variable)
		if not stored:  # said on stderr: stdout stays the list, empty, for scripts
			print(
				f"openmolt: no keys stored yet in {path()}; `openmolt keys set openai` (or an "
				"integration id, e.g. slack) stores one",
				file=sys.stderr,
			)
		return 0
	variable = _variable(ns.name, ns.key, removing=ns.action == "remove")
	if ns.action == "remove":
		# The key under each of its names (Slack's token is OPENMOLT_SLACK_BOT_TOKEN too).
		removed = [v for v in (variable, *_other_names(ns.name, variable)) if remove(v)]
		if not removed:
			print(f"openmolt: {variable} is not stored", file=sys.stderr)
			return 1
		for done in removed:
			print(f"removed {done}")
		return 0
	value = ns.value
	if value is None:
		if sys.stdin.isatty():
			try:
				value = getpass.getpass(f"{variable}: ")
			except EOFError:  # Ctrl-D at the prompt: nothing typed
				print(file=sys.stderr)
				value = ""
			except KeyboardInterrupt:  # "openmolt: interrupted" on its own line
				print(file=sys.stderr)
				raise
		else:
			value = sys.stdin.readline()
	value = value.strip()  # a pasted token's stray space or line end is no part of it
	if not value:
		raise ConfigurationError(f"{variable}: no value was given; nothing stored")
	file = save(variable, value)
	print(f"stored {variable} in {file}")
	above = _set_above(variable)
	if above:
		print(
			f"openmolt: note: {variable} is also set in {above}, which wins over the key store: "
			"unset it there for the stored key to be used",
			file=sys.stderr,
		)
	for key in _also_needed(ns.name, variable):
		print(
			f"openmolt: {ns.name} also needs {key}: `openmolt keys set {ns.name} {key}`",
			file=sys.stderr,
		)
	return 0


def _set_above(variable: str) -> str | None:
	"""Where else a variable is set that a run reads before the key store (None: nowhere)."""
	from openmolt_core._envvars import blank
	from openmolt_core.cli._keys import default_dotenv, read_dotenv

	if not blank(os.environ.get(variable)):
		return "the environment"
	try:
		dotenv = default_dotenv(None)
		if dotenv is not None and not blank(read_dotenv(dotenv).get(variable)):
			return str(dotenv)
	except OpenMoltError:  # a .env the run will refuse says so then
		return None
	return None


def _other_names(name: str, variable: str) -> list[str]:
	"""The other variables an integration reads for the same secret as ``variable``.

	Slack's bot token is ``token`` or ``botToken`` (`alias_groups`): either variable holds it,
	so forgetting it forgets both.
	"""
	from openmolt_core.integrations.connect import alias_groups, env_var
	from openmolt_core.openmolt import OpenMolt

	if name.startswith("OPENMOLT_"):
		return []
	try:
		spec = OpenMolt().plugins.integration(name)
	except OpenMoltError:
		return []  # a provider: one variable
	iid = spec.id or name
	for group in alias_groups(spec, iid):
		names = {env_var(iid, key) for key in group}
		if variable in names:
			return sorted(names - {variable})
	return []


def _also_needed(name: str, variable: str) -> list[str]:
	"""The other required keys of an integration's default credential that nothing gives yet.

	``openmolt keys set s3`` stores the secret; S3 signs with the key id too.
	"""
	from openmolt_core.integrations.connect import credential_needs, env_var
	from openmolt_core.openmolt import OpenMolt

	if name.startswith("OPENMOLT_"):
		return []
	try:
		spec = OpenMolt().plugins.integration(name)
	except OpenMoltError:
		return []  # a provider
	iid = spec.id or name
	needs = credential_needs(spec, iid)
	found = where_set()
	return [
		k.name
		for k in (needs[0].keys if needs else ())
		if k.required and env_var(iid, k.name) != variable and env_var(iid, k.name) not in found
	]
