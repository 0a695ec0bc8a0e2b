"""Where integration credentials obtained by ``openmolt auth`` live: an encrypted file, or your own store.

A `CredentialStore` keeps one config per (integration, user): the tokens an OAuth2 sign-in gave
(``accessToken``, ``refreshToken``, ``expiryDate``) with the client id and secret that refresh
them. ``user=None`` is the operator (the one account the application acts as); other users are
for credentials per end user. An integration reads the store after its explicit config and the
environment (`openmolt_core.integrations.binding.bind_integration`), the values join ``om.secrets``, and a
refresh writes the new tokens back under `CredentialStore.locked`, so processes sharing a store
refresh one at a time and each uses the token another obtained.

`EncryptedFileStore` is the default: one file (``$OPENMOLT_CREDENTIALS_FILE``, else
``$XDG_CONFIG_HOME/openmolt/credentials.enc``), mode 0600, encrypted whole with Fernet
(AES-128-CBC with HMAC-SHA256, from the ``cryptography`` package). Its key comes from the OS
keyring when the ``keyring`` package is installed and has a backend (made on first use), else
from ``OPENMOLT_CREDENTIALS_KEY``; make one with::

	python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"

Without a key nothing is stored: a credential is never written in clear. Another store (a
database table, a secrets manager) implements the five methods of `CredentialStore`.

Integration ids that start with `RESERVED_PREFIX` (``openmolt.``) are OpenMolt's own records,
never an account: an end user's sign-in that waits for its code (`openmolt_core.accounts`), and
its wrong tries. No integration id holds a ``.``, so no account's ``load`` returns one; a
listing of accounts skips them (`is_reserved`). A store keeps them like any record.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from openmolt_core.errors import ConfigurationError
from openmolt_core.secrets import default_credentials_path as default_path  # the file: light
from openmolt_core.secrets import register_key

__all__ = [
	"KEY_VARIABLE",
	"MAX_STORE_BYTES",
	"RESERVED_PREFIX",
	"CredentialStore",
	"EncryptedFileStore",
	"default_path",
	"default_store",
	"is_reserved",
	"store_of",
	"stored_secrets",
]

log: logging.Logger = logging.getLogger("openmolt")

KEY_VARIABLE = "OPENMOLT_CREDENTIALS_KEY"
"""The environment variable holding the file store's Fernet key when no keyring is available."""

RESERVED_PREFIX = "openmolt."
"""Integration ids that start so are OpenMolt's own records in a store, never an account."""

MAX_STORE_BYTES = 64 << 20
"""The largest credential file read (tokens of tens of thousands of accounts fit): a larger file,
or a path that names no regular file (a folder, a device, a pipe), is refused before reading."""

_KEYRING_SERVICE = "openmolt"
_KEYRING_NAME = "credentials-key"
_HOW = (
	f"set {KEY_VARIABLE} to a key made with: openssl rand -base64 32 | tr '+/' '-_' (or, in "
	'the environment OpenMolt runs in: python -c "from cryptography.fernet import Fernet; '
	'print(Fernet.generate_key().decode())")'
)


@runtime_checkable
class CredentialStore(Protocol):
	"""Credentials per (integration, user); ``user=None`` is the operator.

	Implementations keep values secret at rest and never put them in a repr or a message.
	"""

	def load(self, integration: str, user: str | None = None) -> dict[str, Any] | None:
		"""The stored config, or None.

		Args:
			integration: The integration id (``gmail``).
			user: The end user; None: the operator.
		"""
		...

	def save(self, integration: str, config: Mapping[str, Any], user: str | None = None) -> None:
		"""Store (replace) a config.

		Args:
			integration: The integration id.
			config: The config (tokens, client id and secret).
			user: The end user; None: the operator.
		"""
		...

	def delete(self, integration: str, user: str | None = None) -> bool:
		"""Forget a config; True when there was one.

		Args:
			integration: The integration id.
			user: The end user; None: the operator.
		"""
		...

	def entries(self) -> list[tuple[str, str | None]]:
		"""Every stored (integration, user), sorted."""
		...

	def locked(
		self, integration: str, user: str | None = None
	) -> contextlib.AbstractContextManager[None]:
		"""Hold the lock of one credential, across processes, while refreshing and saving it.

		Args:
			integration: The integration id.
			user: The end user; None: the operator.
		"""
		...


def is_reserved(integration: str) -> bool:
	"""Whether a stored integration id is one of OpenMolt's own records, not an account.

	Args:
		integration: The id an entry of `CredentialStore.entries` names.
	"""
	return integration.startswith(RESERVED_PREFIX)


def _keyring_key() -> bytes | None:
	"""The key kept in the OS keyring, made there on first use; None without a usable keyring."""
	import importlib

	try:
		keyring: Any = importlib.import_module("keyring")  # optional: typed as Any
	except ImportError:
		return None
	try:
		backend = keyring.get_keyring()
		if getattr(backend, "priority", 1) <= 0:  # keyring's "fail" and "null" backends
			return None
		found = keyring.get_password(_KEYRING_SERVICE, _KEYRING_NAME)
		if isinstance(found, str) and found:
			return found.encode("ascii")
		from cryptography.fernet import Fernet

		made = Fernet.generate_key()
		keyring.set_password(_KEYRING_SERVICE, _KEYRING_NAME, made.decode("ascii"))
		return made
	except Exception:  # keyring.errors.KeyringError and whatever a backend raises: no keyring
		return None


def _check_user(user: str | None, *, forgetting: bool = False) -> str:
	# ``forgetting``: a delete matches its row exactly, so an id refused today (kept by an older
	# version, listed by `entries`) can still be forgotten, and it reaches no other user's row.
	if user is None:
		return ""
	if not isinstance(user, str) or not user.strip():
		raise ConfigurationError("user: give a non-empty user id, or None for the operator")
	from openmolt_core._support.userids import refused_user_id

	# A key of its own: no alias of another user's.
	if not forgetting and (refused := refused_user_id(user)):
		raise ConfigurationError(refused)
	return user


class EncryptedFileStore:
	"""The default `CredentialStore`: one Fernet-encrypted JSON file, mode 0600.

	Args:
		path: The file (default: `default_path`).
		key: The Fernet key (default: the OS keyring, else ``OPENMOLT_CREDENTIALS_KEY``).

	The key is looked up when the file is first read or written, so making a store is cheap.

	Raises:
		ConfigurationError: ``path`` is not a file's path (a number, bytes, a NUL character).
	"""

	def __init__(
		self, path: str | os.PathLike[str] | None = None, *, key: str | bytes | None = None
	):
		if path is not None:
			from openmolt_core._support.paths import path_problem

			problem = path_problem(path)
			if problem is not None:
				raise ConfigurationError(
					f"EncryptedFileStore: path must be a file's path {problem}"
				)
		self.path = Path(path) if path is not None else default_path()
		self._key = key.encode("ascii") if isinstance(key, str) else key
		register_key(self, key)  # the store's encryption key: masked everywhere
		self._fernet: Any = None

	def __repr__(self) -> str:
		return f"EncryptedFileStore({str(self.path)!r})"

	def _cipher(self) -> Any:
		if self._fernet is not None:
			return self._fernet
		try:
			from cryptography.fernet import Fernet
		except ImportError:
			from openmolt_core._hints import install_command

			raise ConfigurationError(
				"the credential store needs the cryptography package: "
				f"{install_command('openmolt-core[credentials]')}"
			) from None
		key = self._key or _keyring_key()
		where = "the key given" if self._key else "the OS keyring"
		if key is None:
			raw = os.environ.get(KEY_VARIABLE, "").strip()
			if not raw:
				raise ConfigurationError(
					f"the credential store {self.path} needs an encryption key and no OS keyring "
					f"is available; {_HOW}. Credentials are never stored in clear"
				)
			key, where = raw.encode("ascii", "replace"), KEY_VARIABLE
		try:
			self._fernet = Fernet(key)
		except (ValueError, TypeError):
			raise ConfigurationError(
				f"{where}: not a Fernet key (32 bytes, url-safe base64); {_HOW}"
			) from None
		return self._fernet

	def _read(self) -> list[dict[str, Any]]:
		from openmolt_core._support.paths import read_file

		try:
			blob = read_file(self.path, limit=MAX_STORE_BYTES)
		except FileNotFoundError:
			return []
		except OSError as exc:
			raise ConfigurationError(
				f"{self.path}: cannot read the credential store ({exc.strerror})"
			) from None
		if not blob.strip():
			return []
		from cryptography.fernet import InvalidToken

		cipher = self._cipher()
		try:
			data = json.loads(cipher.decrypt(blob.strip()))
		except InvalidToken:
			raise ConfigurationError(
				f"{self.path}: cannot decrypt the credential store with this key (it was written "
				f"with another, or changed); use the key it was made with ({KEY_VARIABLE} or the "
				"OS keyring), or delete the file and sign in again"
			) from None
		except ValueError:
			data = None
		entries = data.get("entries") if isinstance(data, dict) else None
		if not isinstance(entries, list):
			raise ConfigurationError(
				f"{self.path}: the credential store is damaged; delete it and sign in again"
			)
		return [e for e in entries if isinstance(e, dict) and isinstance(e.get("config"), dict)]

	def _write(self, entries: list[dict[str, Any]]) -> None:
		from openmolt_core._support.private import FILE_MODE, private_dir

		try:
			text = json.dumps({"version": 1, "entries": entries}, allow_nan=False)
		except (TypeError, ValueError) as exc:
			raise ConfigurationError(
				f"config: a credential config must hold JSON values (text, numbers, lists, "
				f"objects): {type(exc).__name__}"
			) from None
		token = self._cipher().encrypt(text.encode())
		private_dir(self.path.parent, own=self._own_dir())
		temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
		fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, FILE_MODE)
		try:
			os.fchmod(fd, FILE_MODE)  # whatever the umask
			with os.fdopen(fd, "wb") as out:
				out.write(token + b"\n")
				out.flush()
				os.fsync(out.fileno())
		except BaseException:
			temporary.unlink(missing_ok=True)
			raise
		os.replace(temporary, self.path)

	def _flock(self, name: str) -> contextlib.AbstractContextManager[None]:
		from openmolt_core._support.private import locked_file

		lock = self.path.with_name(f".{self.path.name}.{name}.lock")
		return locked_file(lock, own_dir=self._own_dir())

	def _own_dir(self) -> bool:
		"""Whether the file's folder is OpenMolt's own (``$XDG_CONFIG_HOME/openmolt``).

		Only that one is narrowed to 0700 when it is wider; a folder named with the file (a
		project's ``credentials.enc``, ``$OPENMOLT_CREDENTIALS_FILE``) keeps its mode.
		"""
		if os.environ.get("OPENMOLT_CREDENTIALS_FILE"):
			return False
		try:
			return self.path.parent.resolve() == default_path().parent.resolve()
		except (OSError, RuntimeError):
			return False

	def check(self) -> None:
		"""Make sure the store can be written and read: a key, and the right one.

		Raises:
			ConfigurationError: No key (the message says how to make one), a malformed key, a
				file written with another key, or a path that names no regular file (or one
				larger than `MAX_STORE_BYTES`).
		"""
		self._cipher()
		self._read()

	def load(self, integration: str, user: str | None = None) -> dict[str, Any] | None:
		"""The stored config of (integration, user), or None.

		Args:
			integration: The integration id.
			user: The end user; None: the operator.

		Raises:
			ConfigurationError: No key, a wrong key, or a damaged file.
		"""
		who = _check_user(user)
		if not self.path.exists():
			return None
		for entry in self._read():
			if entry.get("integration") == integration and entry.get("user", "") == who:
				return dict(entry["config"])
		return None

	def save(self, integration: str, config: Mapping[str, Any], user: str | None = None) -> None:
		"""Store (replace) the config of (integration, user), encrypted.

		Args:
			integration: The integration id.
			config: The config.
			user: The end user; None: the operator.

		Raises:
			ConfigurationError: No key (nothing is written in clear), or a wrong one.
		"""
		who = _check_user(user)
		if not integration:
			raise ConfigurationError("integration: give the integration id")
		self._cipher()  # no key: refuse before touching the file
		with self._flock("file"):
			entries = [
				e
				for e in self._read()
				if not (e.get("integration") == integration and e.get("user", "") == who)
			]
			now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
			entries.append(
				{"integration": integration, "user": who, "config": dict(config), "updated": now}
			)
			entries.sort(key=lambda e: (e["integration"], e.get("user", "")))
			self._write(entries)

	def delete(self, integration: str, user: str | None = None) -> bool:
		"""Forget the config of (integration, user).

		Args:
			integration: The integration id.
			user: The end user; None: the operator.

		Returns:
			True when there was one.
		"""
		who = _check_user(user, forgetting=True)
		if not self.path.exists():
			return False
		with self._flock("file"):
			entries = self._read()
			kept = [
				e
				for e in entries
				if not (e.get("integration") == integration and e.get("user", "") == who)
			]
			if len(kept) == len(entries):
				return False
			self._write(kept)
			return True

	def entries(self) -> list[tuple[str, str | None]]:
		"""Every stored (integration, user), sorted; the operator's user is None."""
		if not self.path.exists():
			return []
		return [(str(e.get("integration")), e.get("user") or None) for e in self._read()]

	def updated(self, integration: str, user: str | None = None) -> str | None:
		"""When (integration, user) was last saved (ISO 8601), or None.

		Args:
			integration: The integration id.
			user: The end user; None: the operator.
		"""
		who = _check_user(user)
		for entry in self._read() if self.path.exists() else []:
			if entry.get("integration") == integration and entry.get("user", "") == who:
				return str(entry.get("updated") or "") or None
		return None

	def locked(
		self, integration: str, user: str | None = None
	) -> contextlib.AbstractContextManager[None]:
		"""An exclusive lock on one credential (an ``fcntl`` lock file beside the store).

		Every process sharing the file waits on it, so one refresh runs at a time.

		Args:
			integration: The integration id.
			user: The end user; None: the operator.
		"""
		digest = hashlib.sha256(f"{integration}\0{_check_user(user)}".encode()).hexdigest()[:16]
		return self._flock(digest)


def default_store() -> EncryptedFileStore | None:
	"""The default file store when its file exists (``openmolt auth`` made it), else None."""
	path = default_path()
	return EncryptedFileStore(path) if path.exists() else None


def store_of(value: Any) -> CredentialStore | None:
	"""``OpenMolt(credential_store=...)`` as a store, or None.

	Args:
		value: None (the default file, when it exists), True (the default file, made on first
			save), False (none), a path to an encrypted file, or a `CredentialStore`.

	Raises:
		ConfigurationError: The value is none of those.
	"""
	if value is None:
		return default_store()
	if value is True:
		return EncryptedFileStore()
	if value is False:
		return None
	if isinstance(value, (str, Path)):
		return EncryptedFileStore(value)
	if isinstance(value, CredentialStore):
		return value
	raise ConfigurationError(
		f"credential_store: a {type(value).__name__} is not a credential store; give a path, "
		"an object with load, save, delete, entries and locked (openmolt_core.credstore), or False"
	)


def stored_secrets(store: CredentialStore) -> set[str]:
	"""Every secret value in a store, bound or not (for ``om.secrets``); nothing if it cannot be read.

	Args:
		store: The store.
	"""
	from openmolt_core._support.masking import secret_values

	found: set[str] = set()
	try:
		for integration, user in store.entries():
			found |= secret_values(store.load(integration, user) or {})
	except Exception:  # no key, another key: agents that need the store say so by name
		log.debug("the credential store could not be read for the secret set")
	return found
