"""The per-user key store behind ``openmolt keys``: variable names to values, in a 0600 file.

Like ``llm keys``: ``openmolt keys set slack`` asks for the value without echoing it and keeps it
under its variable name (``OPENMOLT_SLACK_TOKEN``), so the command reads it exactly as it reads the
environment, after the environment and a ``.env`` file and before the agent file. The file is JSON,
``$OPENMOLT_KEYS_FILE`` or ``$XDG_CONFIG_HOME/openmolt/keys.json`` (``~/.config/openmolt/keys.json``),
created 0600 in a 0700 folder. It is not encrypted: it is as safe as the user's account.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from openmolt_core.errors import ConfigurationError, OpenMoltError

__all__ = ["load", "path", "remove", "save", "where_set"]


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
		ConfigurationError: The file is not a JSON object of strings.
	"""
	file = path()
	try:
		text = file.read_text(encoding="utf-8")
	except FileNotFoundError:
		return {}
	except OSError as exc:
		raise ConfigurationError(f"{file}: cannot read the key store ({exc.strerror})") from None
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


def save(variable: str, value: str) -> Path:
	"""Store one value under its variable name; returns the store's file.

	Args:
		variable: ``OPENMOLT_SLACK_TOKEN``.
		value: The secret.
	"""
	values = load()
	values[variable] = value
	return _write(values)


def remove(variable: str) -> bool:
	"""Forget one value; returns whether it was stored.

	Args:
		variable: ``OPENMOLT_SLACK_TOKEN``.
	"""
	values = load()
	if values.pop(variable, None) is None:
		return False
	_write(values)
	return True


def where_set() -> dict[str, str]:
	"""Where the command finds each ``OPENMOLT_*`` variable now: the environment, ./.env, the store.

	The first that has it, as the command reads them; never the values.
	"""
	from openmolt_core.cli._keys import default_dotenv, read_dotenv

	found: dict[str, str] = {}
	try:
		found.update({k: "the key store" for k, v in load().items() if v})
	except OpenMoltError:
		pass  # a broken store is said by the commands that read it
	try:
		dotenv = default_dotenv(None)
		values = read_dotenv(dotenv) if dotenv else {}
	except (OpenMoltError, OSError):
		values = {}
	found.update({k: str(dotenv) for k, v in values.items() if v and k.startswith("OPENMOLT_")})
	found.update(
		{k: "the environment" for k, v in os.environ.items() if v and k.startswith("OPENMOLT_")}
	)
	return found


def _variable(name: str, key: str | None) -> str:
	"""The variable for ``NAME [KEY]``: a variable itself, a provider, or an integration's key."""
	from openmolt_core.integrations.connect import credential_needs, env_var
	from openmolt_core.openmolt import OpenMolt

	if name.startswith("OPENMOLT_"):
		return name
	om = OpenMolt()
	if key is None and name in om.plugins.provider_names():
		return env_var(name)
	try:
		spec = om.plugins.integration(name)  # its extra's spelling too (google-drive)
	except OpenMoltError:
		if key is not None:
			return env_var(name, key)
		if name in om.plugins.integration_ids():
			raise  # installed, but its plugin cannot be loaded: the error says why
		from openmolt_core._support.suggest import typo_of

		near = typo_of(name, [*om.plugins.provider_names(), *om.plugins.integration_ids()])
		hint = f"; did you mean {near!r}?" if near else ""
		raise ConfigurationError(
			f"{name!r} is neither a provider ({', '.join(om.plugins.provider_names())}) nor an "
			f"installed integration{hint} (`openmolt tools` lists them, or give the variable's "
			"name)"
		) from None
	name = spec.id or name
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
	known = {k.name for need in needs for k in need.keys}
	if key is not None:
		# Any spelling of a known key: secret_access_key, SECRET_ACCESS_KEY, secretaccesskey.
		spelled = {k.replace("_", "").lower(): k for k in known}
		found = spelled.get(key.replace("_", "").replace("-", "").lower())
		if found is not None:
			return env_var(name, found)
	listed = ", ".join(sorted(known)) or "none"
	what = f"{name} reads no key {key!r}" if key is not None else f"{name} has several keys"
	if key is not None:
		from openmolt_core._support.suggest import typo_of

		near = typo_of(key, sorted(known))
		what += f" (did you mean {near!r}?)" if near else ""
	raise ConfigurationError(
		f"{what}; say which: `openmolt keys set {name} KEY` with KEY one of: {listed}"
	)


def main(args: list[str]) -> int:
	"""``openmolt keys``: set, list, remove the stored keys, or print the store's path.

	Args:
		args: The arguments after ``keys``.
	"""
	import getpass
	import sys

	from openmolt_core.cli._argparse import CommandParser

	parser = CommandParser(
		prog="openmolt keys",
		description="Keep API keys and integration secrets in a per-user store (a 0600 file), "
		"read by the openmolt command after the environment and a .env file.",
	)
	sub = parser.add_subparsers(dest="action", required=True)
	put = sub.add_parser("set", help="store a key (asked without echo, or read from stdin)")
	put.add_argument("name", help="a provider (openai), an integration (slack) or a variable")
	put.add_argument("key", nargs="?", help="the integration's config key (s3 secretAccessKey)")
	put.add_argument("--value", help="the value (default: asked, or read from stdin)")
	drop = sub.add_parser("remove", help="forget a stored key")
	drop.add_argument("name")
	drop.add_argument("key", nargs="?")
	sub.add_parser("list", help="the stored variables (never their values)")
	sub.add_parser("path", help="print the key store's file")
	ns = parser.parse_args(args)
	if ns.action == "path":
		print(path())
		return 0
	if ns.action == "list":
		stored = load()
		for variable in stored:
			print(variable)
		if not stored:  # said on stderr: stdout stays the list, empty, for scripts
			print(
				f"openmolt: no keys stored yet in {path()}; `openmolt keys set openai` (or an "
				"integration id, e.g. slack) stores one",
				file=sys.stderr,
			)
		return 0
	variable = _variable(ns.name, ns.key)
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
		else:
			value = sys.stdin.readline()
	value = value.strip()  # a pasted token's stray space or line end is no part of it
	if not value:
		raise ConfigurationError(f"{variable}: no value was given; nothing stored")
	file = save(variable, value)
	print(f"stored {variable} in {file}")
	for key in _also_needed(ns.name, variable):
		print(
			f"openmolt: {ns.name} also needs {key}: `openmolt keys set {ns.name} {key}`",
			file=sys.stderr,
		)
	return 0


def _other_names(name: str, variable: str) -> list[str]:
	"""The other variables an integration reads for the same secret as ``variable``.

	Slack's bot token is ``token`` or ``botToken`` (`ConfigKey.instead_of`): either variable
	holds it, so forgetting it forgets both.
	"""
	from openmolt_core.integrations.connect import credential_needs, env_var
	from openmolt_core.openmolt import OpenMolt

	if name.startswith("OPENMOLT_"):
		return []
	try:
		spec = OpenMolt().plugins.integration(name)
	except OpenMoltError:
		return []  # a provider: one variable
	iid = spec.id or name
	for need in credential_needs(spec, iid):
		keys = list(need.keys)
		chosen = next((k for k in keys if env_var(iid, k.name) == variable), None)
		if chosen is not None:
			break
	else:
		return []
	if any(k.instead_of and not k.secret for k in keys):
		return []  # another account's secret (Twilio's auth token, with its SID): no alias
	same = {
		env_var(iid, k.name)
		for k in keys
		if k.secret and (k.instead_of == chosen.name or chosen.instead_of == k.name)
	}
	return sorted(same - {variable})


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
